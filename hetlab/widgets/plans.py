"""Solving plans for the workbench: a cache keyed by (problem, algorithm, parameters), the
solve itself (cancellable where the algorithm reports progress), and a plan's info line."""

from __future__ import annotations

import inspect
import math
from collections import OrderedDict
from html import escape
from typing import Any

from hetlab.cost.cache import digest
from hetlab.cost.problem import Problem
from hetlab.schedulers.base import algorithm, schedule
from hetlab.schedulers.plan import Plan

Key = tuple[str, str, tuple[tuple[str, Any], ...]]

# what a plan's ``extra`` may say about how it was decided, in the order shown
INFO = {
    "subgraphs": "subgraphs",
    "windows": "windows",
    "windows_optimal": "optimal",
    "windows_limit": "hit the limit",
    "windows_time_limit": "stopped by the time limit",
    "mip_gap_max": "max MIP gap",
    "mip_nodes": "B&B nodes",
    "solve_s": "ILP time",
    "decided_by": "decided by",
}
NO_INCUMBENT = "no incumbent"  # a window's ILP ended with none (its gap is infinite)


def problem_key(problem: Problem) -> str:
    """A digest of everything in ``problem`` that a plan depends on."""
    return digest(problem.to_json())


def solve_key(pkey: str, algo: str, params: dict[str, Any]) -> Key:
    """The plan cache's key for ``algo`` with ``params`` on the problem ``pkey`` names
    (``problem_key``): a solve with an equal key gives the same plan."""
    return pkey, algo, tuple(sorted(params.items()))


class PlanCache:
    """The plans solved so far, newest last; the oldest go beyond ``size``."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._plans: OrderedDict[Key, Plan] = OrderedDict()

    def get(self, key: Key) -> Plan | None:
        plan = self._plans.get(key)
        if plan is not None:
            self._plans.move_to_end(key)
        return plan

    def put(self, key: Key, plan: Plan) -> None:
        self._plans[key] = plan
        self._plans.move_to_end(key)
        while len(self._plans) > self.size:
            self._plans.popitem(last=False)

    def __len__(self) -> int:
        return len(self._plans)


def solve(problem: Problem, algo: str, params: dict[str, Any], progress: Any = None) -> Plan:
    """``schedule`` with ``progress`` passed to algorithms that take it (so Cancel reaches
    them); parameters left at None take the algorithm's own choice."""
    kw = {k: v for k, v in params.items() if v is not None}
    if progress is not None and "progress" in inspect.signature(algorithm(algo).func).parameters:
        kw["progress"] = progress
    return schedule(problem, algo, **kw)


def _fmt(key: str, v: Any) -> str:
    if isinstance(v, (list, tuple)):  # e.g. the subgraphs, listed node by node
        return str(len(v))
    if key == "mip_gap_max":
        if isinstance(v, str) or (isinstance(v, float) and not math.isfinite(v)):
            return NO_INCUMBENT  # the ILP says so in words ("no incumbent from the ILP")
        return f"{v:.2%}"
    if key == "solve_s" and isinstance(v, (int, float)):
        return f"{v:.2f} s"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def plan_facts(plan: Plan) -> dict[str, Any]:
    """The plan's ``extra`` entries on how it was decided (an ILP's may sit under "ilp")."""
    extra = dict(plan.extra or {})
    nested = extra.get("ilp")
    if isinstance(nested, dict):
        extra = {**nested, **{k: v for k, v in extra.items() if k != "ilp"}}
        solves = nested.get("solves")
        if isinstance(solves, dict):
            extra.setdefault("windows_optimal", solves.get("optimal"))
            extra.setdefault("windows_limit", solves.get("limit"))
    facts = {k: extra[k] for k in INFO if extra.get(k) is not None}
    if not facts.get("windows_time_limit"):
        facts.pop("windows_time_limit", None)  # named only when the safety net stopped one
    return facts


def info_html(plan: Plan | None, units: str = "ms") -> str:
    """One line: makespan, solve time and, where the plan records them, the ILP's subgraphs,
    windows solved to optimality or stopped by the limit, MIP gap and what decided the plan
    (anything but the ILP is shown in colour)."""
    if plan is None:
        return ""
    parts = [f"makespan {plan.makespan:.3f} {units}", f"solved in {plan.solve_seconds:.2f} s"]
    facts = plan_facts(plan)
    for k, v in facts.items():
        text = f"{INFO[k]}: {escape(_fmt(k, v))}"
        if k == "decided_by" and str(v) not in ("ilp", plan.algo):
            text = f"<b style='color:#9a6700'>{text}</b>"
        elif (k in ("windows_limit", "windows_time_limit") and v) or (
            k == "mip_gap_max" and _fmt(k, v) == NO_INCUMBENT
        ):
            text = f"<span style='color:#9a6700'>{text}</span>"
        parts.append(text)
    return f"<span style='font-size:12px'>{plan.algo}: {' · '.join(parts)}</span>"
