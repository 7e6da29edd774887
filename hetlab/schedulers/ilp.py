"""HOPE LP: up-rank partitioning (Algorithm 1) and one ILP (eqs. 1-6) per subgraph, N devices.

Xia et al., "HOPE: a heterogeneity-oriented parallel execution engine for inference on
mobiles", HPC Chinese Journal 2022, §2.1-2.2. The graph is cut into subgraphs of at most ``nt``
vertices (``partition.py``); they are solved in topological order, each on top of what the
earlier ones left: device-free times, predecessor finish times and predecessor devices (so
transfers across the boundary are charged exactly).

Boundary handling (the phones' transfers are large): each window's makespan counts a lower
bound of the work after each node (``tail``), so a subgraph does not finish early at the
expense of what follows; from the second of ``passes`` forward passes on, the devices of the
best plan so far stand in for later nodes, so an edge leaving a subgraph is charged its
transfer to where its successor is expected to run; every second pass cuts the same
topological sequence half a subgraph later (still <= ``nt`` vertices), so both sides of a
first-pass boundary are decided together. ``lookahead`` lets a window also see the next
subgraphs without committing them (off by default: slow).

Beyond HOPE: with ``improve`` (default), each forward pass is followed by an improvement pass
on the best plan so far (``ilp_passes``): moves of units, edges, fans and whole branches
between devices on the full plan, then ``kicks`` rounds of iterated local search; it reaches
decisions that no single window can see (a branch moved to the CPU pays transfers at both of
its ends, often in two subgraphs), and its result guides the next forward pass. Each window's
MIP start is a guide/earliest-finish schedule improved by device flips (``ilp_warm``); a window
whose start already meets a path lower bound within the MIP gap is not solved at all.

The solver's start times only order each device's nodes; ``Plan.build`` re-times everything
ASAP (spec §3), which is never later. The plan is never worse than ``greedy`` (HOPE GS), the
best single device, or heft/peft/dmda where this build has them: the best of these is the
first pass's MIP start and guide, and is kept if no pass beats it. With ``nt`` >= #nodes it
is exact (one ILP).
"""

from __future__ import annotations

import heapq
import importlib
import time
from collections.abc import Callable

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.base import Decision, Param, register
from hetlab.schedulers.bounds import best_costs
from hetlab.schedulers.greedy import greedy_timeline
from hetlab.schedulers.ilp_model import solve_window
from hetlab.schedulers.ilp_passes import DESCENT_MAX_S
from hetlab.schedulers.ilp_passes import improve as improve_plan
from hetlab.schedulers.ilp_warm import completion_makespan, snapshot, window_start
from hetlab.schedulers.partition import partition
from hetlab.schedulers.timeline import Timeline

Progress = Callable[[int, int, str], None]
WINDOW_TIME_LIMIT = 0.5  # s per subgraph by default: the incumbent is rarely improved later
EXACT_TIME_LIMIT = 60.0  # s for a single (exact) ILP by default
GAP_FAST, GAP_PRECISE = 0.3, 0.03  # MIP gap per window, as a share of its best-cost work
# s of iterated local search per improvement pass: as long as the forward pass before it took,
# at most 2 x the window time limit, at least KICK_MIN_S (then ``kicks`` rounds at most)
KICK_MIN_S = 1.0


def fusable_tail(problem: Problem, best: np.ndarray) -> np.ndarray:
    """Longest best-cost path after each node; an edge inside a fusable group adds nothing
    (its head may finish together with its tail), so ``f[v] + tail[v] <= makespan`` always."""
    pairs = set()
    for g in problem.groups:
        ids = [problem.index[x] for x in g.nodes]
        pairs |= {(a, b) for a in ids for b in ids}
    tail = np.zeros(len(problem.nodes))
    for v in reversed(problem.topo):
        tail[v] = max(
            ((0.0 if (v, w) in pairs else best[w]) + tail[w] for w, _ in problem.succs[v]),
            default=0.0,
        )
    return tail


def _commit(problem: Problem, tl: Timeline, part: list[int], res, groups, topo_pos) -> None:
    """Append ``part``'s units in ILP start order (kept topological by a Kahn heap)."""
    unit_of = {v: (v,) for v in part}
    gcost = {}
    for gi in res.fused:
        mem, cvec = groups[gi]
        if all(m in unit_of for m in mem):
            key = tuple(mem)
            for m in mem:
                unit_of[m] = key
            gcost[key] = float(cvec[res.device[mem[0]]])
    units = set(unit_of.values())
    indeg = dict.fromkeys(units, 0)
    for u in units:
        for m in u:
            for w, _ in problem.preds[m]:
                if w in unit_of and unit_of[w] != u:
                    indeg[u] += 1
    key = lambda u: (round(res.start[u[0]], 9), min(topo_pos[m] for m in u))
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


def ilp_timeline(
    problem: Problem,
    epsilon: float = 0.2,
    nt: int = 12,
    time_limit: float | None = None,
    groups: bool = False,
    lookahead: int = 0,
    passes: int = 2,
    progress: Progress | None = None,
    balance: bool = False,
    improve: bool = True,
    kicks: int = 1000,
    gap: float | None = None,
):
    """Run the partitioned ILP; returns (timeline, info dict)."""
    parts = partition(problem, nt, epsilon)
    exact = len(parts) == 1
    topo_pos = {v: i for i, v in enumerate(problem.topo)}
    best = best_costs(problem) if groups else problem.cost_matrix.min(axis=1)
    tail = fusable_tail(problem, best) if groups else _plain_tail(problem, best)
    g_tl = greedy_timeline(problem)
    ref_tl, ref_name = _best_reference(problem, g_tl)
    gaps, stats = [], {"optimal": 0, "limit": 0, "warm": 0}
    best_tl, results = ref_tl, []
    passes = 1 if exact else passes
    if time_limit is None:
        time_limit = EXACT_TIME_LIMIT if exact else WINDOW_TIME_LIMIT
    if gap is None:  # a short window limit asks for speed, a long one for precision
        gap = GAP_FAST if time_limit < 1.0 else GAP_PRECISE
    plan_windows = [parts if rnd % 2 == 0 else staggered(parts) for rnd in range(passes)]
    count = [0, sum(len(w) for w in plan_windows)]
    polished, seconds = None, []
    for rnd, windows in enumerate(plan_windows):
        t_pass = time.perf_counter()
        ref = best_tl  # the best plan so far: MIP starts and the expected devices of later nodes
        usable = _usable_groups(problem, windows, topo_pos) if groups else []
        tl = _forward(
            problem,
            windows,
            exact,
            lookahead,
            usable,
            tail,
            ref,
            time_limit,
            topo_pos,
            gaps,
            stats,
            progress,
            rnd,
            count,
            balance,
            gap,
        )
        results.append(tl.makespan)
        if tl.makespan < best_tl.makespan - 1e-12 or (
            exact and tl.makespan <= best_tl.makespan + 1e-12
        ):
            best_tl = tl
        seconds.append(round(time.perf_counter() - t_pass, 2))
        if improve and not (
            exact and stats["optimal"]
        ):  # ilp_passes: descent + iterated local search
            t_pass = time.perf_counter()
            kick_s = max(KICK_MIN_S, min(2 * time_limit, seconds[-1]))  # <= the pass it follows
            # the descent too is bounded by the pass it follows (and 20 windows' time limit), not
            # only by DESCENT_MAX_S: a budgeted benchmark gives the whole ILP a few seconds
            descent_s = min(DESCENT_MAX_S, max(1.0, 2 * seconds[-1], 20 * time_limit))
            best_tl = improve_plan(
                problem,
                best_tl,
                tail,
                kicks,
                kick_s,
                descend=best_tl is not polished,
                budget_s=descent_s,
            )
            polished = best_tl  # a local optimum of the descent: the next one needs only kicks
            results.append(best_tl.makespan)
            seconds.append(round(time.perf_counter() - t_pass, 2))
    info = {
        "subgraphs": len(parts),
        "mip_gap_max": max(gaps, default=None),
        "solves": stats,
        "greedy_makespan": g_tl.makespan,
        "ilp_makespan": min(results),
        "passes": results,
        "pass_s": seconds,
        "time_limit_s": time_limit,
        "reference": ref_name,
        "reference_makespan": ref_tl.makespan,
    }
    return best_tl, info


def staggered(parts: list[list[int]]) -> list[list[int]]:
    """The same topological sequence cut half a subgraph later: [p0 first half], [p0 second
    half + p1 first half], ... Each piece is a contiguous stretch of one topological order (so
    convex) and has at most max(len) vertices; odd passes use it so boundaries move."""
    out: list[list[int]] = []
    carry: list[int] = []
    for p in parts:
        h = len(p) // 2
        if carry or p[:h]:
            out.append(carry + p[:h])
        carry = p[h:]
    if carry:
        out.append(carry)
    return [w for w in out if w]


def _usable_groups(problem: Problem, windows: list[list[int]], topo_pos) -> list:
    """Fused groups lying inside one window, as (members in topological order, cost per device)."""
    where = {v: i for i, w in enumerate(windows) for v in w}
    out = []
    for g in problem.groups:
        mem = sorted((problem.index[x] for x in g.nodes), key=topo_pos.__getitem__)
        if len({where[m] for m in mem}) == 1:
            out.append(
                (
                    mem,
                    np.array(
                        [
                            np.inf if g.cost.get(d) is None else float(g.cost[d])
                            for d in problem.devices
                        ]
                    ),
                )
            )
    return out


REFERENCES = ("heft", "peft", "dmda")  # fast list schedulers used as MIP starts when built


def _best_reference(problem: Problem, g_tl: Timeline) -> tuple[Timeline, str]:
    """The best of greedy, each single device and the fast list schedulers in this build:
    the first pass's MIP starts and guide, and the plan kept if no pass beats it."""
    from hetlab.schedulers.base import MODULES, REGISTRY

    best, name = g_tl, "greedy"
    for j, dev in enumerate(problem.devices):  # the whole model on one device
        if np.isfinite(problem.cost_matrix[:, j]).all():
            t = Timeline(problem)
            for v in problem.topo:
                t.place([v], j)
            if t.makespan < best.makespan - 1e-12:
                best, name = t, f"single:{dev}"
    for algo in REFERENCES:
        try:
            importlib.import_module(f"hetlab.schedulers.{MODULES[algo]}")
            a = REGISTRY[algo]
            dec = a.func(problem)
        except (ImportError, KeyError, HetlabError):
            continue
        if a.sequential or dec.sequential or dec.fused:
            continue
        t = Timeline(problem)
        idx = problem.index
        for v in dec.order:
            t.place([idx[v]], problem.dev_index[dec.device_of[v]])
        if t.makespan < best.makespan - 1e-12:
            best, name = t, algo
    return best, name


def _forward(
    problem,
    parts,
    exact,
    lookahead,
    usable,
    tail,
    ref,
    time_limit,
    topo_pos,
    gaps,
    stats,
    progress,
    rnd,
    count,
    balance=True,
    gap=None,
    trust=True,
) -> Timeline:
    """One pass over the subgraphs in topological order, guided by the plan ``ref``."""
    tl = Timeline(problem)
    guide = {v: int(ref.dev[v]) for v in range(len(problem.nodes))}
    best_work = problem.cost_matrix.min(axis=1)
    g_pos = {v: i for i, v in enumerate(ref.order)}
    trust = trust and not exact and not usable and not ref.fused and lookahead == 0
    for i, part in enumerate(parts):
        W = [v for p in parts[i : i + 1 + (0 if exact else lookahead)] for v in p]
        inw = set(W)
        wg = [(m, c) for m, c in usable if all(x in inw for x in m)]
        spread, succ = (0.0, None) if exact else (1e-3 / len(W), guide)
        _, wd, ws, wf = window_start(problem, tl, W, tail, ref.dev, g_pos, succ, spread)
        res = solve_window(
            problem,
            tl,
            W,
            tail,
            wg,
            wd,
            ws,
            wf,
            time_limit,
            exact,
            spread=spread,
            succ_dev=succ,
            gap_share=gap,
            rest_work=None
            if exact or not balance
            else float(best_work[tl.finish < 0].sum() - best_work[W].sum()),
        )
        if res.gap is not None:
            gaps.append(res.gap)
        kind = (
            res.status.lower()
            if res.status in ("Optimal", "bound")
            else "warm"
            if res.status.startswith("warm")
            else "limit"
        )
        stats[kind] = stats.get(kind, 0) + 1
        if trust:  # keep the window's MIP result only if, completed by the guide, it is no worse
            rest = [v for v in ref.order if tl.finish[v] < 0 and v not in inw]
            base = snapshot(tl)  # the guide's own choice for the window
            for v in ref.order:
                if v in inw:
                    base.place([v], int(ref.dev[v]))
            _commit(problem, tl, part, res, wg, topo_pos)
            if (
                completion_makespan(problem, tl, rest, ref.dev)
                > completion_makespan(problem, base, rest, ref.dev) + 1e-9
            ):
                tl = base
                stats["kept_guide"] = stats.get("kept_guide", 0) + 1
        else:
            _commit(problem, tl, part, res, wg, topo_pos)
        if progress is not None:
            count[0] += 1
            progress(
                count[0],
                count[1],
                f"pass {rnd + 1}, subgraph {i + 1}/{len(parts)} ({len(W)} nodes, {res.seconds:.2f} s)",
            )
        if exact:
            stats["objective"] = res.objective
    return tl


def _plain_tail(problem: Problem, best: np.ndarray) -> np.ndarray:
    tail = np.zeros(len(problem.nodes))
    for v in reversed(problem.topo):
        tail[v] = max((best[w] + tail[w] for w, _ in problem.succs[v]), default=0.0)
    return tail


@register(
    "ilp",
    "HOPE LP: up-rank partitioning + one ILP per subgraph (Xia et al., 2022, eqs. 1-8)",
    params=[
        Param("epsilon", "float", 0.2, 0.0, 1.0, "balance of each up-rank bisection (Algorithm 1)"),
        Param("nt", "int", 12, 1, 2000, "largest subgraph (vertices) solved by one ILP"),
        Param(
            "time_limit",
            "float",
            None,
            0.01,
            86400.0,
            "seconds per subgraph ILP, then its best incumbent (default 0.5; 60 when exact)",
        ),
        Param(
            "groups", "bool", False, None, None, "let the ILP choose fused groups (PartitionTuner)"
        ),
        Param(
            "lookahead", "int", 0, 0, 8, "following subgraphs each ILP also sees (not committed)"
        ),
        Param(
            "balance",
            "bool",
            False,
            None,
            None,
            "count the remaining work spread over the devices in each window's makespan",
        ),
        Param(
            "passes",
            "int",
            2,
            1,
            10,
            "forward passes; later ones are guided by the best plan so far and cut subgraphs half a subgraph later on odd passes",
        ),
        Param(
            "improve",
            "bool",
            True,
            None,
            None,
            "after each pass, move units/branches between devices on the whole plan (local search)",
        ),
        Param(
            "gap",
            "float",
            None,
            0.0,
            10.0,
            "MIP gap per window as a share of its best-cost work (default 0.3 under a 1 s limit, else 0.03)",
        ),
        Param(
            "kicks",
            "int",
            1000,
            0,
            100000,
            "iterated-local-search restarts per improvement pass, within the preceding pass's time (at most 2 x time_limit, at least 1 s)",
        ),
    ],
)
def ilp(
    problem: Problem,
    epsilon: float = 0.2,
    nt: int = 12,
    time_limit: float | None = None,
    groups: bool = False,
    lookahead: int = 0,
    passes: int = 2,
    balance: bool = False,
    improve: bool = True,
    kicks: int = 1000,
    gap: float | None = None,
    progress: Progress | None = None,
) -> Decision:
    t0 = time.perf_counter()
    tl, info = ilp_timeline(
        problem,
        epsilon,
        nt,
        time_limit,
        groups,
        lookahead,
        passes,
        progress,
        balance,
        improve,
        kicks,
        gap,
    )
    device_of, order, fused = tl.decision_parts()
    info["fallback"] = (
        info["reference"] if info["reference_makespan"] <= info["ilp_makespan"] else None
    )
    info["solve_wall_s"] = round(time.perf_counter() - t0, 3)
    return Decision(device_of, order, fused, extra={"ilp": info})
