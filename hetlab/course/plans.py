"""What the course reads off plans: the ILP's plan information, and the true optimum of a
hand-sized problem by enumeration."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.sim import simulate

# what the ILP schedulers report about how a plan was reached (plan.extra)
INFO_KEYS = (
    "subgraphs",
    "windows",
    "windows_optimal",
    "windows_limit",
    "windows_start_kept",
    "mip_gap_max",
    "solve_s",
    "decided_by",
)


def plan_info(plan: Any) -> dict[str, Any]:
    """The keys of ``INFO_KEYS`` from ``plan.extra`` (or its ``"ilp"`` entry); None if absent.
    ``subgraphs`` is given as a count (the plan keeps the partition itself)."""
    extra = dict(plan.extra or {})
    nested = extra.get("ilp") if isinstance(extra.get("ilp"), dict) else {}
    info = {k: extra.get(k, nested.get(k)) for k in INFO_KEYS}
    if isinstance(info["subgraphs"], list):  # the partition itself: report its size
        info["subgraphs"] = len(info["subgraphs"])
    if info["solve_s"] is None:
        info["solve_s"] = round(plan.solve_seconds, 3)
    return info


def ilp_decided(info: dict[str, Any]) -> bool:
    """True when the ILPs decided the plan described by ``info`` (``plan_info``): at least one
    window's ILP moved its plan away from the MIP start (``decided_by == "ilp"``). A plan whose
    every window kept its start is the start's plan, whatever the solver's time limit."""
    return info.get("decided_by") == "ilp"


def windows_solved(info: dict[str, Any]) -> str:
    """``"k/n"``: the windows whose ILP was proved optimal, of the plan's ``n`` windows."""
    n = info.get("windows") or info.get("subgraphs")
    return f"{info.get('windows_optimal')}/{n}"


def _is_topo(problem: Problem, order: Sequence[str]) -> bool:
    pos = {v: i for i, v in enumerate(order)}
    return all(pos[e.src] < pos[e.dst] for e in problem.edges)


def optimum(problem: Problem) -> tuple[float, dict[str, str], list[str]]:
    """The least makespan over every device map and topological order, with a plan reaching
    it (spec §3's timing). Enumerates everything: 8 operators at most."""
    ids = [n.id for n in problem.nodes]
    if len(ids) > 8:
        raise HetlabError("optimum enumerates every plan: use it on 8 operators at most")
    orders = [o for o in itertools.permutations(ids) if _is_topo(problem, o)]
    best: tuple[float, dict[str, str], list[str]] = (float("inf"), {}, [])
    for devs in itertools.product(problem.devices, repeat=len(ids)):
        if any(problem.nodes[i].cost.get(d) is None for i, d in enumerate(devs)):
            continue
        dmap = dict(zip(ids, devs, strict=True))
        for o in orders:
            t = simulate(problem, dmap, o).makespan
            if t < best[0] - 1e-12:
                best = (t, dmap, list(o))
    return best
