"""The workbench's state: one ``State`` per model or profile, replaced whole on "Load model"
and "Load profile", so that nothing of an older model (a plan, a run, a status line) survives
into the views of the next one. Background work captures the state it started from and its
result is dropped when that state is no longer the current one (``Workbench.current``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# the plan slots (the plan traits) and their place in the layout
SLOT_NAMES = ("ilp_plan", "greedy_plan")
LINES = ("model", "profile", "file")  # the status lines a state writes (others are derived)


@dataclass
class Slot:
    """One plan slot: the plan wanted (its cache key; None: nothing to solve), the plan
    shown, and what the slot is doing, for the solve line."""

    key: Any = None
    plan: Any = None
    note: str = ""
    kind: str = "info"


@dataclass
class State:
    """Everything the workbench shows about one model or profile. ``base``: the profile as
    measured or loaded; ``problem``: the one shown (``base`` or its what-if copy)."""

    gen: int
    graph: Any = None
    base: Any = None
    problem: Any = None
    pkey: str | None = None
    slots: dict[str, Slot] = field(default_factory=lambda: {s: Slot() for s in SLOT_NAMES})
    params_note: tuple[str, str] = ("", "info")  # the parameters reset for this model
    rec: Any = None  # the recommended plan
    rec_replay: bool = False
    rec_note: tuple[str, str] = ("", "info")
    rec_problem: Any = None  # the profile the recommended plan was scheduled on
    budget: Any = None  # the candidates measured over precisions (``OverPrecisions``)
    run: dict | None = None  # the last run's report (spec §5)
    run_error: float | None = None
    run_note: tuple[str, str] = ("", "info")  # what Run did or does
    last_run: Any = None  # (RunReport, "run" | "replay"), for the Perfetto trace
    ran: Any = None  # the plan the last run ran
    lines: dict[str, tuple[str, str]] = field(default_factory=dict)

    def say(self, line: str, text: str, kind: str = "info") -> None:
        self.lines[line] = (text, kind)

    def plan(self, slot: str) -> Any:
        return self.slots[slot].plan


def ids(graph_or_problem: Any) -> set[str]:
    return {n.id for n in graph_or_problem.nodes}


def same_model(graph: Any, problem: Any) -> bool:
    """Whether ``problem`` profiles ``graph`` (the same node ids)."""
    return graph is not None and problem is not None and ids(graph) == ids(problem)
