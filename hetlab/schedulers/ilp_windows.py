"""What the window solves of one HOPE pass left (``Windows``: statuses, gaps, B&B nodes and
times), and the optional keys every ``ilp``/``ilp+`` plan records from them (spec §4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hetlab.cost.problem import Problem
from hetlab.schedulers.ilp_solver import WindowResult

NO_INCUMBENT = "no incumbent from the ILP"  # mip_gap_max when a window's ILP found none


@dataclass
class Windows:
    """What the window solves of one forward pass left: statuses, gaps, nodes and times."""

    optimal: int = 0
    limit: int = 0  # stopped at a budget: the node limit, or the time limit
    clock: int = 0  # of those, stopped by the wall-clock safety net
    start_kept: int = 0
    no_incumbent: int = 0
    gap_max: float | None = None
    nodes: int = 0
    nodes_max: int = 0
    seconds: float = 0.0
    seconds_max: float = 0.0
    objective: float | None = None  # of the last window (the whole graph when exact)
    log: list = field(default_factory=list)  # per window: [status, nodes, gap, seconds]

    def add(self, res: WindowResult) -> None:
        if res.optimal:
            self.optimal += 1
        else:
            self.limit += 1
            self.clock += int(res.clock_stopped)
            self.start_kept += int(res.start_kept)
            self.no_incumbent += int(res.no_incumbent)
        if res.gap is not None:
            self.gap_max = max(self.gap_max or 0.0, res.gap)
        self.nodes += res.nodes
        self.nodes_max = max(self.nodes_max, res.nodes)
        self.seconds += res.seconds
        self.seconds_max = max(self.seconds_max, res.seconds)
        self.objective = res.objective
        gap = None if res.gap is None else round(res.gap, 6)
        self.log.append([res.status, res.nodes, gap, round(res.seconds, 4)])

    def merge(self, other: Windows) -> Windows:
        """Both passes' windows together (``ilp+``); ``objective`` stays this one's."""
        out = Windows(objective=self.objective, log=self.log + other.log)
        for name in ("optimal", "limit", "clock", "start_kept", "no_incumbent", "nodes"):
            setattr(out, name, getattr(self, name) + getattr(other, name))
        out.seconds = self.seconds + other.seconds
        gaps = [g for g in (self.gap_max, other.gap_max) if g is not None]
        out.gap_max = max(gaps, default=None)
        out.nodes_max = max(self.nodes_max, other.nodes_max)
        out.seconds_max = max(self.seconds_max, other.seconds_max)
        return out

    def gap_shown(self) -> float | str | None:
        """``mip_gap_max`` as a plan records it: the largest relative gap, or ``NO_INCUMBENT``
        when some window's ILP ended without an incumbent (its gap is infinite)."""
        return NO_INCUMBENT if self.no_incumbent else self.gap_max


def plan_extra(problem: Problem, parts: list[list[int]], stats: Windows, decided_by: str) -> dict:
    """The optional plan keys every ``ilp``/``ilp+`` plan records (spec §4)."""
    ids = [n.id for n in problem.nodes]
    return {
        "subgraphs": [[ids[v] for v in part] for part in parts],
        "windows": len(parts),
        "windows_optimal": stats.optimal,
        "windows_limit": stats.limit,
        "windows_time_limit": stats.clock,
        "windows_start_kept": stats.start_kept,
        "mip_gap_max": stats.gap_shown(),
        "mip_nodes": stats.nodes,
        "mip_nodes_max": stats.nodes_max,
        "window_s_max": round(stats.seconds_max, 4),
        "solve_s": round(stats.seconds, 4),
        "window_log": stats.log,
        "decided_by": decided_by,
    }


def hope_decided_by(stats: Windows, windows: int) -> str:
    """``mip-start`` when no window's ILP changed its start, else ``ilp``."""
    return "mip-start" if windows and stats.start_kept == windows else "ilp"
