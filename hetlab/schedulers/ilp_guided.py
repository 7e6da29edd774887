"""``ilp+``'s guided forward passes: one ILP per window, in topological order, each guided by
the best plan so far (``ilp_plus``'s module doc says what the passes add to HOPE's). A window's
makespan also counts a lower bound of the work after each node (``plain_tail``,
``fusable_tail``); every second pass cuts the windows half a subgraph later (``staggered``).
Times are in the problem's units.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.ilp import Progress, commit, fused_groups
from hetlab.schedulers.ilp_model import WindowSpec, solve_window
from hetlab.schedulers.ilp_plus_options import PlusOptions
from hetlab.schedulers.ilp_warm import completion_makespan, window_start
from hetlab.schedulers.ilp_windows import Windows
from hetlab.schedulers.incremental import Timeline


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
