"""HOPE LP as published: up-rank partitioning (Algorithm 1), then one ILP (eqs. 1-6) per subgraph.

Xia et al., "HOPE: a heterogeneity-oriented parallel execution engine for inference on
mobiles", HPC Chinese Journal 2022, §2.1-2.2. The graph is cut into subgraphs of at most ``nt``
vertices with balance ``epsilon`` (``partition.py``). They are solved in topological order,
each on top of what the earlier ones fixed: device-free times, predecessor finish times and
predecessor devices (so transfers across a boundary are charged exactly). Each ILP minimises
its subgraph's own makespan (eq. 2) and is solved to optimality or until its budget of
``node_limit`` branch-and-bound nodes is spent, then its best incumbent is kept. With ``nt`` >=
#nodes it is the exact ILP of the whole graph.

The budget is work, so the same problem and options give the same plan on any machine and
under any load; ``time_limit`` (seconds per subgraph) is only a safety net, and a window it
stops is counted (``windows_time_limit``) because its incumbent then depends on the machine.
A session remembers its last solves by (problem, options), so ``ilp+`` starts from the very
plan ``ilp`` returned without solving it again (``plan.extra["cached"]``). What the windows'
solves left, and the plan keys recording it, are ``ilp_windows``'s.

Solver aids, which change how fast a window is solved, never what its optimum is: the MIP
start is an earliest-finish schedule of the window improved by device flips (``ilp_warm``),
bounds and cuts from the window itself (``ilp_bounds``, ``ilp_cuts``), and a window whose
start already meets a lower bound is proved optimal without a MIP. When a window stops at its
budget and its incumbent is still that start, the plan records it (``windows_start_kept``;
``decided_by == "mip-start"`` when that holds for every window).

The solver's start times only order each device's nodes; ``Plan.build`` re-times everything
ASAP (spec §3), which is never later. ``groups`` (off by default, not in HOPE) lets each ILP
also choose PartitionTuner's fused groups. ``ilp+`` (``ilp_plus``) adds passes, a local
search and a floor on top of this.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from hetlab.cost.cache import digest
from hetlab.cost.problem import Problem
from hetlab.schedulers.base import Param, defaults, register
from hetlab.schedulers.ilp_model import WindowResult, WindowSpec, solve_window
from hetlab.schedulers.ilp_warm import window_start
from hetlab.schedulers.ilp_windows import NO_INCUMBENT, Windows, hope_decided_by, plan_extra
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.partition import partition
from hetlab.schedulers.plan import Plan

Progress = Callable[[int, int, str], None]
REMEMBERED = 32  # HOPE solves kept per session, by (problem, options)
NODE_LIMIT = 500  # B&B nodes per window (docs/decisions.md#ilp-node-budget)
TIME_LIMIT = 10.0  # s per window: a safety net, far above what NODE_LIMIT takes
_solved: OrderedDict[str, tuple] = OrderedDict()
_solved_lock = threading.Lock()  # widgets solve off the kernel thread

# the window statistics and the plan keys live in ``ilp_windows``; ``ilp+`` and the tests
# read them here too
__all__ = [
    "NODE_LIMIT",
    "NO_INCUMBENT",
    "PARAMS",
    "TIME_LIMIT",
    "IlpOptions",
    "Progress",
    "Windows",
    "commit",
    "forget",
    "fused_groups",
    "hope_decided_by",
    "hope_pass",
    "ilp",
    "plan_extra",
    "solve_hope",
]

PARAMS = [
    Param("epsilon", "float", 0.2, 0.0, 1.0, "balance of each up-rank bisection (Algorithm 1)"),
    Param("nt", "int", 12, 1, 2000, "largest subgraph (vertices) solved by one ILP (Algorithm 1)"),
    Param(
        "node_limit",
        "int",
        NODE_LIMIT,
        1,
        10_000_000,
        "branch-and-bound nodes per subgraph ILP, then its best incumbent is kept (a work "
        "budget: the same plan on any machine and under any load)",
    ),
    Param(
        "time_limit",
        "float",
        TIME_LIMIT,
        0.01,
        86400.0,
        "seconds per subgraph ILP, a wall-clock safety net behind node_limit (a window it "
        "stops may differ between runs: counted in windows_time_limit)",
    ),
    Param(
        "groups",
        "bool",
        False,
        None,
        None,
        "let each ILP also choose fused groups (PartitionTuner; not in HOPE)",
    ),
]


@dataclass
class IlpOptions:
    """The options of one ``ilp`` run; ``IlpOptions.of(**given)`` fills the rest from Param."""

    epsilon: float
    nt: int
    node_limit: int
    time_limit: float
    groups: bool

    @classmethod
    def of(cls, algo: str = "ilp", **given):
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in defaults(algo).items() if k in names}
        kw.update({k: v for k, v in given.items() if k in names and v is not None})
        return cls(**kw)


def fused_groups(problem: Problem, windows: list[list[int]]) -> list:
    """Fused groups lying inside one window, as (members in topological order, cost/device)."""
    where = {v: i for i, w in enumerate(windows) for v in w}
    topo_pos = problem.topo_pos
    out = []
    for g in problem.groups:
        mem = sorted((problem.index[x] for x in g.nodes), key=topo_pos.__getitem__)
        if len({where[m] for m in mem}) == 1:
            c = [np.inf if g.cost.get(d) is None else float(g.cost[d]) for d in problem.devices]
            out.append((mem, np.array(c)))
    return out


def commit(problem: Problem, tl: Timeline, part: list[int], res: WindowResult, groups) -> None:
    """Append ``part``'s units in the ILP's start order (kept topological by a Kahn heap)."""
    topo_pos = problem.topo_pos
    unit_of = {v: (v,) for v in part}
    gcost = {}
    for gi in res.fused:
        mem, cvec = groups[gi]
        if all(m in unit_of for m in mem):
            for m in mem:
                unit_of[m] = tuple(mem)
            gcost[tuple(mem)] = float(cvec[res.device[mem[0]]])
    units = set(unit_of.values())
    indeg = dict.fromkeys(units, 0)
    for u in units:
        for m in u:
            indeg[u] += sum(1 for w, _ in problem.preds[m] if w in unit_of and unit_of[w] != u)

    def key(u):
        return (round(res.start[u[0]], 9), min(topo_pos[m] for m in u))

    heap = [(key(u), u) for u in units if indeg[u] == 0]
    heapq.heapify(heap)
    while heap:
        _, u = heapq.heappop(heap)
        tl.place(list(u), res.device[u[0]], gcost.get(u))
        for m in u:
            for w, _ in problem.succs[m]:
                if w in unit_of and unit_of[w] != u:
                    indeg[unit_of[w]] -= 1
                    if indeg[unit_of[w]] == 0:
                        heapq.heappush(heap, (key(unit_of[w]), unit_of[w]))


def hope_pass(
    problem: Problem,
    parts: list[list[int]],
    opts: IlpOptions,
    progress: Progress | None = None,
) -> tuple[Timeline, Windows]:
    """One ILP per subgraph, in topological order, each on top of the committed prefix."""
    tl = Timeline(problem)
    stats = Windows()
    groups = fused_groups(problem, parts) if opts.groups else []
    for i, part in enumerate(parts):
        inside = set(part)
        wg = [(m, c) for m, c in groups if all(x in inside for x in m)]
        _, wd, ws, wf = window_start(problem, tl, part)
        spec = WindowSpec(
            part, wd, ws, wf, time_limit=opts.time_limit, node_limit=opts.node_limit, groups=wg
        )
        res = solve_window(problem, tl, spec)
        stats.add(res)
        commit(problem, tl, part, res, wg)
        if progress is not None:
            msg = (
                f"subgraph {i + 1}/{len(parts)} ({len(part)} nodes, {res.status}, "
                f"{res.nodes} B&B nodes, {res.seconds:.2f} s)"
            )
            progress(i + 1, len(parts), msg)
    return tl, stats


def forget() -> None:
    """Drop the solves this session remembers (the next call solves again)."""
    with _solved_lock:
        _solved.clear()


def solve_hope(problem: Problem, opts: IlpOptions, progress: Progress | None = None):
    """HOPE's plan for ``problem`` and ``opts``: (partition, timeline, window statistics,
    seconds the solve took, whether it was remembered from an earlier call)."""
    key = digest(problem.to_json(), *(getattr(opts, f.name) for f in fields(IlpOptions)))
    with _solved_lock:
        hit = _solved.get(key)
        if hit is not None:
            _solved.move_to_end(key)
    if hit is not None:
        parts, tl, stats, seconds = hit
        return parts, tl.copy(), stats, seconds, True
    t0 = time.perf_counter()
    parts = partition(problem, opts.nt, opts.epsilon)
    tl, stats = hope_pass(problem, parts, opts, progress)
    seconds = time.perf_counter() - t0
    with _solved_lock:
        _solved[key] = (parts, tl.copy(), stats, seconds)
        while len(_solved) > REMEMBERED:
            _solved.popitem(last=False)
    return parts, tl, stats, seconds, False


@register(
    "ilp",
    "HOPE LP: up-rank partitioning + one ILP per subgraph (Xia et al., 2022, Alg. 1, eqs. 1-6)",
    params=PARAMS,
)
def ilp(problem: Problem, progress: Progress | None = None, **given) -> Plan:
    opts = IlpOptions.of("ilp", **given)
    parts, tl, stats, _, cached = solve_hope(problem, opts, progress)
    device_of, order, fused = tl.decision_parts()
    extra = plan_extra(problem, parts, stats, hope_decided_by(stats, len(parts)))
    extra["cached"] = cached
    extra["ilp"] = {
        "solves": {"objective": stats.objective},
        "node_limit": opts.node_limit,
        "time_limit_s": opts.time_limit,
    }
    return Plan.of(device_of, order, fused=fused, algo="ilp", extra=extra)
