"""``ilp+``: HOPE's ILP with extra passes, a local search and a floor (none of them in HOPE).

It starts from ``ilp``'s plan (HOPE as published, same ``epsilon``, ``nt`` and budgets),
so it is never worse than ``ilp``; then, each one named by a parameter:

- ``floor``: the best of greedy (HOPE GS), each single device, HEFT, PEFT and dmda is also a
  candidate, so the plan is never worse than any of them;
- ``passes``: forward passes over the subgraphs guided by the best plan so far. Each window's
  makespan also counts a lower bound of the work after each node (``tail``) so that a
  subgraph does not finish early at the expense of what follows; an edge leaving a window is
  charged its transfer to where the guide runs its successor; a window's MIP result is kept
  only if, completed by the guide, it is no worse; every second pass cuts the same topological
  sequence half a subgraph later, so both sides of a boundary are decided together;
  ``lookahead`` lets a window also see the next subgraphs without committing them;
  ``balance`` counts the remaining work spread over the devices; ``gap`` stops each window
  within a share of its work;
- ``search``: after each pass, a descent that moves units, edges, fans and whole branches
  between devices on the full plan, then ``kicks`` rounds of iterated local search
  (``ilp_passes``): it reaches decisions no single window can see (a branch moved to the CPU
  pays transfers at both of its ends, often in two subgraphs).

``plan.extra["decided_by"]`` says what gave the final plan: ``ilp`` (HOPE's pass),
``mip-start`` (HOPE's pass, where no window's ILP changed its start), ``floor:<algo>``,
``passes`` (a guided forward pass) or ``search``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import Decision, Param, algorithm, register
from hetlab.schedulers.bounds import best_costs
from hetlab.schedulers.greedy import greedy_timeline
from hetlab.schedulers.ilp import (
    NODE_LIMIT,
    PARAMS,
    IlpOptions,
    Progress,
    Windows,
    commit,
    fused_groups,
    hope_decided_by,
    plan_extra,
    solve_hope,
)
from hetlab.schedulers.ilp_model import WindowSpec, solve_window
from hetlab.schedulers.ilp_passes import DESCENT_MAX_S, improve
from hetlab.schedulers.ilp_warm import completion_makespan, window_start
from hetlab.schedulers.timeline import Timeline

FLOOR = ("heft", "peft", "dmda")  # fast list schedulers in the floor, beside greedy and single
GAP_FAST, GAP_PRECISE = 0.3, 0.03  # window MIP gap, as a share of its best-cost work
KICK_MIN_S = 1.0  # s of iterated local search per round at least

PLUS_PARAMS = PARAMS + [
    Param("floor", "bool", True, None, None, "never worse than greedy/single/heft/peft/dmda"),
    Param("passes", "int", 2, 0, 10, "guided forward passes after HOPE's (odd ones staggered)"),
    Param(
        "search",
        "bool",
        True,
        None,
        None,
        "after each pass, a local search moving units/branches between devices on the whole plan",
    ),
    Param("kicks", "int", 1000, 0, 100000, "iterated-local-search restarts per search round"),
    Param("lookahead", "int", 0, 0, 8, "following subgraphs each guided window also sees"),
    Param("balance", "bool", False, None, None, "guided windows count the remaining work spread"),
    Param(
        "gap",
        "float",
        None,
        0.0,
        10.0,
        "guided windows' MIP gap as a share of their work (None: 0.3 at the default "
        "node_limit or a time_limit under 1 s, else 0.03)",
    ),
]


@dataclass
class PlusOptions(IlpOptions):
    """The options of one ``ilp+`` run; ``PlusOptions.of("ilp+", **given)``."""

    floor: bool
    passes: int
    search: bool
    kicks: int
    lookahead: int
    balance: bool
    gap: float | None

    @property
    def window_gap(self) -> float:
        if self.gap is not None:
            return self.gap
        quick = self.time_limit < 1.0 or self.node_limit <= NODE_LIMIT
        return GAP_FAST if quick else GAP_PRECISE

    def hope(self) -> IlpOptions:
        return IlpOptions(**{f.name: getattr(self, f.name) for f in fields(IlpOptions)})


@dataclass
class PassContext:
    """What the guided passes share: the tail bound, the window statistics, the progress."""

    tail: np.ndarray
    stats: Windows = field(default_factory=Windows)
    kept_guide: int = 0
    progress: Progress | None = None
    done: int = 0
    total: int = 0


def plain_tail(problem: Problem, best: np.ndarray) -> np.ndarray:
    """Longest best-cost path strictly after each node (a lower bound of what must follow)."""
    tail = np.zeros(len(problem.nodes))
    for v in reversed(problem.topo):
        tail[v] = max((best[w] + tail[w] for w, _ in problem.succs[v]), default=0.0)
    return tail


def fusable_tail(problem: Problem, best: np.ndarray) -> np.ndarray:
    """``plain_tail`` where an edge inside a fusable group adds nothing (its head may finish
    together with its tail), so ``f[v] + tail[v] <= makespan`` always."""
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


def staggered(parts: list[list[int]]) -> list[list[int]]:
    """The same topological sequence cut half a subgraph later: [p0 first half], [p0 second
    half + p1 first half], ... Each piece is a contiguous stretch of one topological order (so
    convex) and has at most max(len) vertices."""
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


def best_floor(problem: Problem) -> tuple[Timeline, str]:
    """The best of greedy, each single device that runs everything, HEFT, PEFT and dmda."""
    best, name = greedy_timeline(problem), "greedy"
    for j, dev in enumerate(problem.devices):
        if np.isfinite(problem.cost_matrix[:, j]).all():
            t = Timeline(problem)
            for v in problem.topo:
                t.place(v, j)
            if t.makespan < best.makespan - 1e-12:
                best, name = t, f"single:{dev}"
    for algo in FLOOR:
        dec = algorithm(algo).func(problem)
        t = Timeline(problem)
        for v in dec.order:
            t.place(problem.index[v], problem.dev_index[dec.device_of[v]])
        if t.makespan < best.makespan - 1e-12:
            best, name = t, algo
    return best, name


def guided_pass(
    problem: Problem, windows: list[list[int]], opts: PlusOptions, ref: Timeline, ctx: PassContext
) -> Timeline:
    """One pass over ``windows`` in topological order, guided by the plan ``ref``."""
    tl = Timeline(problem)
    guide = {v: int(ref.dev[v]) for v in range(len(problem.nodes))}
    best_work = problem.cost_matrix.min(axis=1)
    g_pos = {v: i for i, v in enumerate(ref.order)}
    usable = fused_groups(problem, windows) if opts.groups else []
    trust = not usable and not ref.fused and opts.lookahead == 0
    for i, part in enumerate(windows):
        W = [v for p in windows[i : i + 1 + opts.lookahead] for v in p]
        inw = set(W)
        wg = [(m, c) for m, c in usable if all(x in inw for x in m)]
        spread = 1e-3 / len(W)
        _, wd, ws, wf = window_start(problem, tl, W, ctx.tail, ref.dev, g_pos, guide, spread)
        rest = float(best_work[tl.finish < 0].sum() - best_work[W].sum())
        spec = WindowSpec(
            W,
            wd,
            ws,
            wf,
            time_limit=opts.time_limit,
            node_limit=opts.node_limit,
            tail=ctx.tail,
            groups=wg,
            spread=spread,
            succ_dev=guide,
            rest_work=rest if opts.balance else None,
            gap_abs=opts.window_gap * float(best_work[W].sum()),
        )
        res = solve_window(problem, tl, spec)
        ctx.stats.add(res)
        if trust:  # keep the window's MIP result only if, completed by the guide, it is no worse
            tl = _keep_if_no_worse(problem, tl, part, inw, res, wg, ref, ctx)
        else:
            commit(problem, tl, part, res, wg)
        if ctx.progress is not None:
            ctx.done += 1
            ctx.progress(ctx.done, ctx.total, f"guided window {i + 1}/{len(windows)}")
    return tl


def _keep_if_no_worse(problem, tl, part, inw, res, wg, ref, ctx) -> Timeline:
    rest = [v for v in ref.order if tl.finish[v] < 0 and v not in inw]
    base = tl.copy()  # the guide's own choice for the window
    for v in ref.order:
        if v in inw:
            base.place(v, int(ref.dev[v]))
    commit(problem, tl, part, res, wg)
    if completion_makespan(problem, tl, rest, ref.dev) > (
        completion_makespan(problem, base, rest, ref.dev) + 1e-9
    ):
        ctx.kept_guide += 1
        return base
    return tl


def plus_timeline(problem: Problem, opts: PlusOptions, progress: Progress | None = None):
    """Run ``ilp+``; returns (timeline, partition, window statistics, decided_by, info)."""
    parts, best, stats, pass_s, _ = solve_hope(problem, opts.hope())
    exact = len(parts) == 1
    by = hope_decided_by(stats, len(parts))
    info = {"ilp_makespan": best.makespan, "passes": [], "pass_s": []}
    if opts.floor:
        ref, name = best_floor(problem)
        info["floor"], info["floor_makespan"] = name, ref.makespan
        if ref.makespan < best.makespan - 1e-12:
            best, by = ref, f"floor:{name}"
    groups_tail = opts.groups and problem.groups
    bc = best_costs(problem) if opts.groups else problem.cost_matrix.min(axis=1)
    ctx = PassContext(fusable_tail(problem, bc) if groups_tail else plain_tail(problem, bc))
    ctx.progress, ctx.total = progress, opts.passes * len(parts)
    passes = 0 if exact else opts.passes
    search = opts.search and not (exact and stats.optimal)
    polished = None
    for rnd in range(max(passes, int(search))):
        if rnd < passes:
            t_pass = time.perf_counter()
            windows = parts if rnd % 2 == 0 else staggered(parts)
            tl = guided_pass(problem, windows, opts, best, ctx)
            info["passes"].append(tl.makespan)
            if tl.makespan < best.makespan - 1e-12:
                best, by = tl, "passes"
            pass_s = time.perf_counter() - t_pass
        if search:
            t_s = time.perf_counter()
            kick_s = max(KICK_MIN_S, min(2 * opts.time_limit, pass_s))
            descent_s = min(DESCENT_MAX_S, max(1.0, 2 * pass_s, 20 * opts.time_limit))
            out = improve(
                problem,
                best,
                ctx.tail,
                opts.kicks,
                kick_s,
                descend=best is not polished,
                budget_s=descent_s,
            )
            if out is not best:
                best, by = out, "search"
            polished = best  # a local optimum of the descent: the next round needs only kicks
            info["pass_s"].append(round(time.perf_counter() - t_s, 2))
    total = stats.merge(ctx.stats)
    info["kept_guide"] = ctx.kept_guide
    return best, parts, total, by, info


@register(
    "ilp+",
    "HOPE ILP with extra passes, local search and a floor (never worse than ilp)",
    params=PLUS_PARAMS,
)
def ilp_plus(problem: Problem, progress: Progress | None = None, **given) -> Decision:
    t0 = time.perf_counter()
    opts = PlusOptions.of("ilp+", **given)
    tl, parts, stats, by, info = plus_timeline(problem, opts, progress)
    device_of, order, fused = tl.decision_parts()
    extra = plan_extra(problem, parts, stats, by)
    extra["windows"] = stats.optimal + stats.limit  # every window solved, over all passes
    info["solves"] = {"objective": stats.objective}
    info["node_limit"], info["time_limit_s"] = opts.node_limit, opts.time_limit
    info["total_s"] = round(time.perf_counter() - t0, 4)
    extra["ilp"] = info
    return Decision(device_of, order, fused, extra=extra)
