"""A plan (spec §4): a device and a start/finish time per node, as the simulator computes them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_json, read_json
from hetlab.schedulers.sim import simulate


@dataclass
class Assignment:
    node: str
    device: str
    start: float
    finish: float


@dataclass
class Plan:
    """``assignments`` in global order (sorted by start); times in the problem's units.
    ``makespan`` is spec §3's for a timed plan, None for an untimed one (``Plan.of``)."""

    problem: str
    algo: str
    assignments: list[Assignment]
    makespan: float | None
    params: dict[str, Any] = field(default_factory=dict)
    solve_seconds: float = 0.0
    sequential: bool = False
    fused: list[list[str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        problem: Problem,
        algo: str,
        device_of: dict[str, str],
        order: Sequence[str],
        fused: Sequence[Sequence[str]] = (),
        sequential: bool = False,
        params: dict[str, Any] | None = None,
        solve_seconds: float = 0.0,
        extra: dict[str, Any] | None = None,
    ) -> Plan:
        """Simulate (spec §3) and record the result: how ``timed`` times a plan."""
        t = simulate(problem, device_of, order, fused, sequential)
        pos = {v: i for i, v in enumerate(order)}
        ids = sorted(device_of, key=lambda v: (t.start[v], pos[v]))
        return cls(
            problem=problem.name,
            algo=algo,
            assignments=[Assignment(v, device_of[v], t.start[v], t.finish[v]) for v in ids],
            makespan=t.makespan,
            params=dict(params or {}),
            solve_seconds=solve_seconds,
            sequential=sequential,
            fused=[list(g) for g in fused],
            extra=dict(extra or {}),
        )

    @classmethod
    def of(
        cls,
        device_of: Mapping[str, str],
        order: Sequence[str] = (),
        sequential: bool = False,
        fused: Sequence[Sequence[str]] = (),
        algo: str = "",
        extra: dict[str, Any] | None = None,
    ) -> Plan:
        """An untimed plan (every start and finish 0, no makespan): what an algorithm
        returns before ``schedule`` times it, a mapping from the user, one device's placement.
        Its nodes are in ``order`` (those it leaves out after, in ``device_of``'s order).
        Nothing is checked here, since a plan is made before the model or problem it is for
        is known: ``devices.binding.bind`` checks it against a model and its devices once,
        the simulator and the predictions against the problem they time it on."""
        pos = {v: i for i, v in enumerate(order)}
        ids = sorted(device_of, key=lambda v: pos.get(v, len(pos)))
        return cls(
            problem="",
            algo=algo,
            assignments=[Assignment(str(v), str(device_of[v]), 0.0, 0.0) for v in ids],
            makespan=None,
            sequential=sequential,
            fused=[list(g) for g in fused],
            extra=dict(extra or {}),
        )

    # --- views ---------------------------------------------------------------
    @property
    def devices(self) -> list[str]:
        """The devices the plan uses, in order of their first node."""
        return list(dict.fromkeys(a.device for a in self.assignments))

    @property
    def device_of(self) -> dict[str, str]:
        return {a.node: a.device for a in self.assignments}

    @property
    def order(self) -> list[str]:
        """Global order: by start time, ties kept in the stored (topological) order."""
        return [a.node for a in self.assignments]

    def device_order(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for a in self.assignments:
            out.setdefault(a.device, []).append(a.node)
        return out

    def timed(
        self,
        problem: Problem,
        algo: str | None = None,
        params: dict[str, Any] | None = None,
        solve_seconds: float | None = None,
        sequential: bool | None = None,
    ) -> Plan:
        """The same assignment, order, fusion and ``extra``, timed under ``problem`` (spec §3):
        how ``schedule`` times an algorithm's plan (giving its name, parameters, solve time and
        whether it runs sequentially), and how a saved plan is timed again under other costs.
        Arguments left ``None`` keep this plan's values."""
        return Plan.build(
            problem,
            self.algo if algo is None else algo,
            self.device_of,
            self.order,
            self.fused,
            self.sequential if sequential is None else sequential,
            self.params if params is None else params,
            self.solve_seconds if solve_seconds is None else solve_seconds,
            self.extra,
        )

    # --- JSON ------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "algo": self.algo,
            "params": self.params,
            "makespan": self.makespan,
            "solve_seconds": self.solve_seconds,
            "sequential": self.sequential,
            "assignments": [
                {"node": a.node, "device": a.device, "start": a.start, "finish": a.finish}
                for a in self.assignments
            ],
            "fused": self.fused,
            **self.extra,
        }

    @classmethod
    def from_json(cls, doc: Any, source: str = "plan") -> Plan:
        if not isinstance(doc, dict):
            raise HetlabError(f"{source}: a plan must be a JSON object")
        try:
            asg = [
                Assignment(
                    str(a["node"]),
                    str(a["device"]),
                    float(a.get("start", 0.0)),
                    float(a.get("finish", 0.0)),
                )
                for a in doc["assignments"]
            ]
            known = {
                "problem",
                "algo",
                "params",
                "makespan",
                "solve_seconds",
                "sequential",
                "assignments",
                "fused",
            }
            plan = cls(
                problem=str(doc.get("problem", "")),
                algo=str(doc.get("algo", "")),
                assignments=asg,
                makespan=_makespan(doc, asg),
                params=dict(doc.get("params") or {}),
                solve_seconds=float(doc.get("solve_seconds", 0.0) or 0.0),
                sequential=bool(doc.get("sequential", False)),
                fused=[[str(x) for x in g] for g in doc.get("fused") or []],
                extra={k: v for k, v in doc.items() if k not in known},
            )
        except (KeyError, TypeError, ValueError) as e:
            raise HetlabError(f"{source}: malformed plan ({type(e).__name__}: {e})") from None
        seen: set[str] = set()
        for a in plan.assignments:
            if a.node in seen:
                raise HetlabError(f"{source}: node {a.node!r} appears twice in assignments")
            seen.add(a.node)
        return plan

    @classmethod
    def load(cls, path: str | Path) -> Plan:
        return cls.from_json(read_json(path, "plan file"), source=str(path))

    def save(self, path: str | Path) -> Path:
        return atomic_write_json(path, self.to_json())


def _makespan(doc: dict[str, Any], asg: list[Assignment]) -> float | None:
    """A plan file's makespan: its own (null for an untimed plan), else its last finish."""
    if "makespan" not in doc:
        return max((a.finish for a in asg), default=0.0)
    return None if doc["makespan"] is None else float(doc["makespan"])
