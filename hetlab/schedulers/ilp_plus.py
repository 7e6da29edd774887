"""``ilp+``: HOPE's ILP with extra passes, a local search and a floor (none of them in HOPE).

It starts from ``ilp``'s plan (HOPE as published, same ``epsilon``, ``nt`` and budgets),
so it is never worse than ``ilp``; then, each one named by a parameter:

- ``floor``: the best of greedy (HOPE GS), each single device, HEFT, PEFT and dmda is also a
  candidate, so the plan is never worse than any of them;
- ``passes``: forward passes over the subgraphs guided by the best plan so far
  (``ilp_guided``). Each window's makespan also counts a lower bound of the work after each
  node (``tail``) so that a subgraph does not finish early at the expense of what follows; an
  edge leaving a window is charged its transfer to where the guide runs its successor; a
  window's MIP result is kept only if, completed by the guide, it is no worse; every second
  pass cuts the same topological sequence half a subgraph later, so both sides of a boundary
  are decided together;
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

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import algorithm, register
from hetlab.schedulers.bounds import best_costs
from hetlab.schedulers.greedy import greedy_timeline
from hetlab.schedulers.ilp import Progress, solve_hope
from hetlab.schedulers.ilp_guided import (
    PassContext,
    fusable_tail,
    guided_pass,
    plain_tail,
    staggered,
)
from hetlab.schedulers.ilp_passes import DESCENT_MAX_S, improve
from hetlab.schedulers.ilp_plus_options import PLUS_PARAMS, PlusOptions
from hetlab.schedulers.ilp_windows import hope_decided_by, plan_extra
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.plan import Plan

FLOOR = ("heft", "peft", "dmda")  # fast list schedulers in the floor, beside greedy and single
KICK_MIN_S = 1.0  # s of iterated local search per round at least


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
        plan = algorithm(algo).func(problem)
        device_of, t = plan.device_of, Timeline(problem)
        for v in plan.order:
            t.place(problem.index[v], problem.dev_index[device_of[v]])
        if t.makespan < best.makespan - 1e-12:
            best, name = t, algo
    return best, name


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
def ilp_plus(problem: Problem, progress: Progress | None = None, **given) -> Plan:
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
    return Plan.of(device_of, order, fused=fused, algo="ilp+", extra=extra)
