"""Course exercises with answer checkers (``check_...`` print a verdict and return a bool).

- PartitionTuner's 8-operator example (Jeong et al., ETRI J. 2022, Table 1 / Fig. 1): two
  branches, individual and grouped costs on a CPU and an NPU; OpSeq, sequential and parallel
  plans. Costs already include transfers, so edges cost nothing.
- Hand-scheduling a small two-device DAG under the standard timing model (spec §3).
- Upward ranks (HOPE eq. 8).
Every answer is checked with ``hetlab.schedulers.simulate``, the one timing model.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.cost.problem import Group, Link, PEdge, PNode, Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.sim import simulate


def _say(ok: bool, msg: str) -> bool:
    print(("✔ right: " if ok else "✘ not yet: ") + msg)
    return ok


# --- PartitionTuner's example ------------------------------------------------------------
def partitiontuner_example() -> Problem:
    """v1 -> v2 -> (v3 -> v4 -> v5 | v6 -> v7) -> v8 on cpu/npu; groups v4+v5 and v6+v7."""
    cpu = [1, 2, 10, 10, 1, 1.0, 1.0, 5.0]
    npu = [10, None, 2, 2, None, 1.5, None, None]
    ops = ["Conv", "Pool", "Conv", "Conv", "Relu", "Conv", "Relu", "Dense"]
    nodes = [
        PNode(f"v{i + 1}", {"cpu": c, "npu": n}, o)
        for i, (c, n, o) in enumerate(zip(cpu, npu, ops, strict=False))
    ]
    pairs = [(1, 2), (2, 3), (3, 4), (4, 5), (2, 6), (6, 7), (5, 8), (7, 8)]
    edges = [PEdge(f"v{a}", f"v{b}", 0.0) for a, b in pairs]
    groups = [
        Group(["v4", "v5"], {"cpu": 10.5, "npu": 2.5}),
        Group(["v6", "v7"], {"cpu": 1.5, "npu": 2.0}),
    ]
    return Problem(
        "partitiontuner-8", ["cpu", "npu"], nodes, edges, {"default": Link(0.0, None)}, groups
    )


def _topo_ids(p: Problem) -> list[str]:
    return [p.nodes[i].id for i in p.topo]


def _timed(
    p: Problem,
    device_of: Mapping[str, str],
    fused: Sequence[Sequence[str]],
    sequential: bool,
    order: Sequence[str] | None = None,
) -> float | None:
    try:
        return simulate(p, dict(device_of), list(order or _topo_ids(p)), fused, sequential).makespan
    except HetlabError as e:
        print(f"✘ this plan is not valid: {e}")
        return None


def check_opseq(makespan: float) -> bool:
    """Exercise 1: the makespan (ms) of OpSeq: each op alone on its fastest device, one at a time."""
    p = partitiontuner_example()
    best = {
        n.id: min((d for d in p.devices if n.cost[d] is not None), key=lambda d: n.cost[d])
        for n in p.nodes
    }
    want = simulate(p, best, _topo_ids(p), sequential=True).makespan
    return _say(
        abs(makespan - want) < 1e-6,
        f"OpSeq takes {want:g} ms"
        if abs(makespan - want) < 1e-6
        else "sum the fastest single-op cost of every op (v2, v5, v7, v8 run on the CPU only)",
    )


def check_pt_sequential(device_of: Mapping[str, str], fused: Sequence[Sequence[str]]) -> bool:
    """Exercise 2: devices and fused groups that run sequentially in at most 14 ms."""
    p = partitiontuner_example()
    t = _timed(p, device_of, fused, True)
    if t is None:
        return False
    return _say(
        t <= 14 + 1e-9,
        f"{t:g} ms"
        + (
            ""
            if t <= 14 + 1e-9
            else " — try running v4+v5 fused on the NPU and v6+v7 fused on the CPU"
        ),
    )


def check_pt_parallel(device_of: Mapping[str, str], fused: Sequence[Sequence[str]]) -> bool:
    """Exercise 3: the same, but branches may overlap: reach 12.5 ms (PartitionTuner's plan)."""
    p = partitiontuner_example()
    t = _timed(p, device_of, fused, False)
    if t is None:
        return False
    return _say(
        t <= 12.5 + 1e-9,
        f"{t:g} ms"
        + (
            ""
            if t <= 12.5 + 1e-9
            else " — put the two branches on different devices so they overlap"
        ),
    )


# --- hand-scheduling a small DAG -----------------------------------------------------------
def small_dag() -> Problem:
    """Six ops, two devices, transfers of 1 ms between them."""
    cost = {"A": (2, 3), "B": (4, 1), "C": (3, 2), "D": (1, 4), "E": (3, 3), "F": (1, 2)}
    nodes = [PNode(k, {"cpu": float(c), "gpu": float(g)}) for k, (c, g) in cost.items()]
    pairs = [("A", "B"), ("A", "C"), ("A", "D"), ("B", "E"), ("C", "E"), ("D", "F"), ("E", "F")]
    edges = [PEdge(a, b, 1000.0, {"cpu->gpu": 1.0, "gpu->cpu": 1.0}) for a, b in pairs]
    return Problem("small-dag", ["cpu", "gpu"], nodes, edges)


def best_makespan(p: Problem) -> float:
    """Optimum over every device assignment and every topological order (tiny DAGs only)."""
    ids = [n.id for n in p.nodes]
    if len(ids) > 8:
        raise HetlabError("best_makespan enumerates every plan: use it on 8 ops at most")
    orders = [o for o in itertools.permutations(ids) if _is_topo(p, o)]
    best = float("inf")
    for devs in itertools.product(p.devices, repeat=len(ids)):
        dmap = dict(zip(ids, devs, strict=False))
        if any(p.nodes[i].cost.get(d) is None for i, d in enumerate(devs)):
            continue
        for o in orders:
            best = min(best, simulate(p, dmap, o).makespan)
    return best


def _is_topo(p: Problem, order: Sequence[str]) -> bool:
    pos = {v: i for i, v in enumerate(order)}
    return all(pos[e.src] < pos[e.dst] for e in p.edges)


def check_hand_schedule(device_of: Mapping[str, str], order: Sequence[str] | None = None) -> bool:
    """Exercise 4: place (and order) the ops of ``small_dag()``; right when optimal."""
    p = small_dag()
    t = _timed(p, device_of, (), False, order)
    if t is None:
        return False
    best = best_makespan(p)
    ok = t <= best + 1e-9
    return _say(
        ok,
        f"{t:g} ms, the optimum"
        if ok
        else f"{t:g} ms; the optimum is {best:g} ms "
        "(hint: a transfer costs 1 ms, so keep chains together)",
    )


def check_upranks(answer: Mapping[str, int]) -> bool:
    """Exercise 5: the upward rank (HOPE eq. 8) of every op of ``small_dag()``."""
    from hetlab.viz.layout import dag_layout

    lay = dag_layout(small_dag())
    want = dict(zip(lay.ids, (int(r) for r in lay.uprank), strict=False))
    wrong = sorted(v for v in want if answer.get(v) != want[v])
    return _say(
        not wrong,
        "all upward ranks are right"
        if not wrong
        else f"check {', '.join(wrong)}: 1 for a source, else 1 + the largest rank of a predecessor",
    )


def solutions() -> dict[str, Any]:
    """Model answers (for teachers; ``05_exercises`` hides their use behind a flag)."""
    return {
        "opseq": 15.0,
        "pt_sequential": (
            {
                "v1": "cpu",
                "v2": "cpu",
                "v3": "npu",
                "v4": "npu",
                "v5": "npu",
                "v6": "cpu",
                "v7": "cpu",
                "v8": "cpu",
            },
            [["v4", "v5"], ["v6", "v7"]],
        ),
        "upranks": {"A": 1, "B": 2, "C": 2, "D": 2, "E": 3, "F": 4},
    }
