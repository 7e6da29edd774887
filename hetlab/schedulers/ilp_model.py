"""One HOPE ILP (eqs. 1-6) over a window of nodes, for N devices, built with PuLP.

Xia et al., "HOPE: a heterogeneity-oriented parallel execution engine for inference on
mobiles", HPC Chinese Journal 2022, §2.1. Per node ``v``: binary placement ``y[v,d]`` over the
devices that can run it (eq. 6), a start ``s`` and finish ``f``; the duration is the compute
cost plus blocking receives (eq. 1), where an edge's transfer time depends on both endpoints'
devices: ``z[e,a,b] >= y[u,a] + y[v,b] - 1`` linearizes the product (predecessors already
placed by earlier windows give constant coefficients). Precedence (eq. 3) and one op at a time
per device (eqs. 4-5): one order binary per pair not already ordered by a path (transitive
closure) that can share a device, active only when both land on the same device (``sd``). The
objective (eq. 2) is the makespan ``C >= f[v] + tail[v]`` (``tail``: a valid lower bound of the
work still after ``v``). Big-M is the window's heuristic upper bound. With ``groups``, a fused
group (PartitionTuner) may replace its members: they then share device, start and finish, and
take the group cost. Times are in the problem's units.
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pulp

from hetlab.cost.problem import Problem
from hetlab.schedulers.ilp_warm import path_bound
from hetlab.schedulers.timeline import Timeline

GAP_SHARE = 0.3  # MIP gap allowed in a non-exact window, as a share of its best-cost work


@dataclass
class WindowResult:
    device: dict[int, int]
    start: dict[int, float]
    fused: list[int]  # indices into the window's groups that were chosen
    objective: float
    gap: float | None
    status: str
    seconds: float
    warm_objective: float = float("nan")
    extra: dict = field(default_factory=dict)


def _solver(time_limit: float | None, exact: bool, gap_abs: float):
    """HiGHS through highspy when installed, else CBC. Exact windows close the gap fully;
    others stop within ``gap_abs`` (problem units), a share of the window's own work: a
    relative gap would measure against the whole prefix's length and grow along the graph."""
    rel, gap_abs = (1e-7, 1e-7) if exact else (1e-7, max(gap_abs, 1e-7))
    if _have_highs():
        return _WarmHiGHS(
            msg=bool(os.environ.get("HETLAB_ILP_LOG")),
            timeLimit=time_limit,
            gapRel=rel,
            gapAbs=gap_abs,
            threads=1,
        )
    return pulp.PULP_CBC_CMD(
        msg=False, timeLimit=time_limit, gapRel=rel, gapAbs=gap_abs, warmStart=True, threads=1
    )


@functools.cache
def _have_highs() -> bool:
    return "HiGHS" in pulp.listSolvers(onlyAvailable=True)


class _WarmHiGHS(pulp.HiGHS):  # type: ignore[misc,valid-type]
    """pulp's HiGHS with the variables' initial values passed as a MIP start."""

    def callSolver(self, lp):
        import highspy

        cols = lp.variables()
        if all(v.varValue is not None for v in cols):
            sol = highspy.HighsSolution()
            sol.col_value = [float(v.varValue) for v in sorted(cols, key=lambda v: v.index)]
            sol.value_valid = True
            lp.solverModel.setSolution(sol)
        super().callSolver(lp)


def solve_window(*args, **kwargs) -> WindowResult:
    """``_solve_window`` with PuLP's 4.0 deprecation notices silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return _solve_window(*args, **kwargs)


def _solve_window(
    problem: Problem,
    tl: Timeline,
    nodes: list[int],
    tail: np.ndarray,
    groups: list[tuple[list[int], np.ndarray]],
    warm_dev: dict[int, int],
    warm_start: dict[int, float],
    warm_finish: dict[int, float],
    time_limit: float | None,
    exact: bool,
    spread: float = 0.0,
    succ_dev: dict[int, int] | None = None,
    rest_work: float | None = None,
    gap_share: float | None = None,
) -> WindowResult:
    """Solve the ILP of ``nodes`` (topological order) on top of the placed prefix ``tl``.

    ``groups``: (member indices in chain order, cost per device with inf = none) fully inside
    the window. ``warm_*``: a feasible schedule of the window (a MIP start and the big-M).
    ``spread``: weight of the sum of finishes (compactness) relative to the makespan.
    ``succ_dev``: an expected device of later nodes (from a full plan); an edge leaving the
    window then also counts its transfer and that successor's cost in the makespan estimate.
    ``gap_share``: MIP gap allowed, as a share of the window's best-cost work (default
    ``GAP_SHARE``; exact windows close the gap fully).
    ``rest_work``: best-cost work of the nodes after the window; then also
    ``C >= (sum_d last finish on d + rest_work) / #devices``, so a window leaves the devices
    evenly loaded for what follows.
    """
    t0 = time.perf_counter()
    cost, comm, nd = problem.cost_matrix, problem.comm_tensor, len(problem.devices)
    W = list(nodes)
    inw = set(W)
    pos = {v: i for i, v in enumerate(W)}
    warm_obj = max(warm_finish[v] + tail[v] for v in W)
    for v in W if succ_dev else ():
        for w, k in problem.succs[v]:
            dw = succ_dev.get(w)
            if w not in inw and dw is not None and tl.finish[w] < 0:
                warm_obj = max(
                    warm_obj, warm_finish[v] + cost[w, dw] + tail[w] + comm[k, warm_dev[v], dw]
                )
    H = warm_obj * 1.01 + 1e-6 + spread * sum(warm_finish.values())
    M = H
    grp_of: dict[int, list[int]] = {}
    for gi, (mem, _) in enumerate(groups):
        for m in mem:
            grp_of.setdefault(m, []).append(gi)
    allowed: dict[int, list[int]] = {}
    for v in W:
        ok = set(np.flatnonzero(np.isfinite(cost[v])).tolist())
        for gi in grp_of.get(v, []):
            ok |= set(np.flatnonzero(np.isfinite(groups[gi][1])).tolist())
        allowed[v] = sorted(ok)

    # release time of each node (earliest start any schedule of this window can give it):
    # big-Ms are H - release, much tighter than H when the prefix already took long
    rel: dict[int, float] = {}
    for v in W:
        r = min(float(tl.dev_free[d]) for d in allowed[v])
        for w, _ in problem.preds[v]:
            if w not in inw:
                r = max(r, float(tl.finish[w]))
            elif set(grp_of.get(w, [])) & set(grp_of.get(v, [])):
                r = max(r, rel[w])  # may be fused with v: same start
            else:
                r = max(r, rel[w] + float(np.min(cost[w])))
        rel[v] = min(r, warm_start[v])
    gap_abs = (GAP_SHARE if gap_share is None else gap_share) * sum(
        float(np.min(cost[v])) for v in W
    )
    if not exact and not groups:  # the start already meets a simple lower bound: no MIP needed
        lb = path_bound(problem, tl, W, inw, rel, allowed, tail, succ_dev)
        lb += spread * sum(rel[v] + min(float(cost[v, d]) for d in allowed[v]) for v in W)
        if warm_obj + spread * sum(warm_finish.values()) <= lb + gap_abs:
            return WindowResult(
                dict(warm_dev),
                dict(warm_start),
                [],
                warm_obj,
                0.0,
                "bound",
                time.perf_counter() - t0,
                warm_obj,
            )
    lp = pulp.LpProblem("hope_window", pulp.LpMinimize)
    y = {(v, d): pulp.LpVariable(f"y_{v}_{d}", cat="Binary") for v in W for d in allowed[v]}
    # deadline of each node: any plan at least as good as the MIP start has C <= H and
    # C >= f[v] + tail[v], so f[v] <= H - tail[v]; this cuts the ordering big-Ms to
    # (deadline of one) - (release of the other), much tighter than H deep inside a graph
    ub = {v: max(H - float(tail[v]), warm_finish[v], rel[v]) for v in W}
    s = {v: pulp.LpVariable(f"s_{v}", lowBound=rel[v], upBound=ub[v]) for v in W}
    f = {v: pulp.LpVariable(f"f_{v}", lowBound=0, upBound=ub[v]) for v in W}
    u = {gi: pulp.LpVariable(f"u_{gi}", cat="Binary") for gi in range(len(groups))}
    C = pulp.LpVariable("C", lowBound=0)
    lp += C + (spread * pulp.lpSum(f.values()) if spread else 0)
    fusedsum = {v: pulp.lpSum(u[g] for g in grp_of.get(v, [])) for v in W}
    recv: dict[int, list] = {v: [] for v in W}
    z: dict = {}
    for v in W:
        lp += pulp.lpSum(y[v, d] for d in allowed[v]) == 1
        if len(grp_of.get(v, [])) > 1:
            lp += fusedsum[v] <= 1
        for d in allowed[v]:
            if not np.isfinite(cost[v, d]):  # only reachable through a fused group
                lp += y[v, d] <= pulp.lpSum(u[g] for g in grp_of[v] if np.isfinite(groups[g][1][d]))
        lp += s[v] >= pulp.lpSum(float(tl.dev_free[d]) * y[v, d] for d in allowed[v])
        for w, k in problem.preds[v]:
            if w in inw:
                shared = [g for g in grp_of.get(v, []) if g in grp_of.get(w, [])]
                lp += s[v] >= f[w] - (
                    (H - rel[v]) * pulp.lpSum(u[g] for g in shared) if shared else 0
                )
                # z[k,a,b] = y[w,a] * y[v,b] exactly (flow form: rows and columns sum to y)
                for a in allowed[w]:
                    for b in allowed[v]:
                        z[k, a, b] = zz = pulp.LpVariable(f"z_{k}_{a}_{b}", lowBound=0)
                        if a != b and comm[k, a, b] > 0:
                            recv[v].append(float(comm[k, a, b]) * zz)
                for a in allowed[w]:
                    lp += pulp.lpSum(z[k, a, b] for b in allowed[v]) == y[w, a]
                for b in allowed[v]:
                    lp += pulp.lpSum(z[k, a, b] for a in allowed[w]) == y[v, b]
            else:
                lp += s[v] >= float(tl.finish[w])
                a = int(tl.dev[w])
                recv[v] += [
                    float(comm[k, a, b]) * y[v, b]
                    for b in allowed[v]
                    if b != a and comm[k, a, b] > 0
                ]
        work = pulp.lpSum(
            float(cost[v, d]) * y[v, d] for d in allowed[v] if np.isfinite(cost[v, d])
        )
        lp += f[v] >= s[v] + work + pulp.lpSum(recv[v]) - (M * fusedsum[v] if v in grp_of else 0)
        lp += f[v] + float(tail[v]) <= C
        for w, k in problem.succs[v] if succ_dev else ():
            dw = succ_dev.get(w)
            if w not in inw and dw is not None and tl.finish[w] < 0:
                lp += (
                    f[v]
                    + float(cost[w, dw] + tail[w])
                    + pulp.lpSum(
                        float(comm[k, d, dw]) * y[v, d]
                        for d in allowed[v]
                        if d != dw and comm[k, d, dw] > 0
                    )
                    <= C
                )
    for gi, (mem, gcost) in enumerate(groups):
        first, last = mem[0], mem[-1]
        lp += f[last] >= s[first] + pulp.lpSum(
            float(gcost[d]) * y[first, d] for d in allowed[first] if np.isfinite(gcost[d])
        ) + pulp.lpSum(r for m in mem for r in recv[m]) - M * (1 - u[gi])
        for d in allowed[first]:
            if not np.isfinite(gcost[d]):
                lp += y[first, d] <= 1 - u[gi]
        for m in mem[1:]:
            for d in range(nd):
                a = y.get((m, d), 0)
                b = y.get((first, d), 0)
                lp += a - b <= 1 - u[gi]
                lp += b - a <= 1 - u[gi]
        for m in mem:
            lp += s[m] - s[first] <= M * (1 - u[gi])
            lp += s[first] - s[m] <= M * (1 - u[gi])
            lp += f[m] - f[last] <= M * (1 - u[gi])
            lp += f[last] - f[m] <= M * (1 - u[gi])
    if rest_work is not None:
        # a device may become free only after the horizon (the window need not use it)
        last = {
            d: pulp.LpVariable(
                f"L_{d}", lowBound=float(tl.dev_free[d]), upBound=max(H, float(tl.dev_free[d]))
            )
            for d in range(nd)
        }
        for (v, d), var in y.items():
            lp += last[d] >= f[v] - (H - rel[v]) * (1 - var)
        lp += nd * C >= pulp.lpSum(last.values()) + float(rest_work)
        for d in range(nd):
            last[d].setInitialValue(
                max([float(tl.dev_free[d])] + [warm_finish[v] for v in W if warm_dev[v] == d])
            )
        warm_obj = max(warm_obj, (sum(last[d].varValue for d in range(nd)) + rest_work) / nd)
    # device load cuts (valid: a device runs its nodes one at a time after it becomes free)
    for d in range(nd):
        on_d = [(v, float(cost[v, d])) for v in W if (v, d) in y and np.isfinite(cost[v, d])]
        if len(on_d) > 1:
            lp += (
                float(tl.dev_free[d])
                + pulp.lpSum(c * y[v, d] for v, c in on_d)
                + min(float(tail[v]) for v, _ in on_d)
                - (M * pulp.lpSum(u.values()) if u else 0)
                <= C
            )
    # transitive closure inside the window: reach[v] = bitmask of descendants
    reach = dict.fromkeys(W, 0)
    for v in reversed(W):
        r = 0
        for w, _ in problem.succs[v]:
            if w in inw:
                r |= reach[w] | (1 << pos[w])
        reach[v] = r
    o, sd = {}, {}
    for i, a in enumerate(W):
        for b in W[i + 1 :]:
            if (reach[a] >> pos[b]) & 1:
                continue
            common = sorted(set(allowed[a]) & set(allowed[b]))
            if not common:
                continue
            o[a, b] = oo = pulp.LpVariable(f"o_{a}_{b}", cat="Binary")
            sd[a, b] = ss = pulp.LpVariable(f"sd_{a}_{b}", lowBound=0, upBound=1)
            for d in common:
                lp += ss >= y[a, d] + y[b, d] - 1
            lp += oo <= ss  # an order only matters on a shared device (breaks symmetry)
            mb, ma = max(ub[a] - rel[b], 0.0), max(ub[b] - rel[a], 0.0)
            lp += s[b] >= f[a] - mb * (1 - oo) - mb * (1 - ss)
            lp += s[a] >= f[b] - ma * oo - ma * (1 - ss)
    # MIP start from the warm schedule (no fused groups)
    for (v, d), var in y.items():
        var.setInitialValue(1.0 if warm_dev[v] == d else 0.0)
    for v in W:
        s[v].setInitialValue(warm_start[v])
        f[v].setInitialValue(warm_finish[v])
    for var in u.values():
        var.setInitialValue(0.0)
    for (k, a, b), var in z.items():
        e = problem.edges[k]
        uu, vv = problem.index[e.src], problem.index[e.dst]
        var.setInitialValue(1.0 if (warm_dev[uu] == a and warm_dev[vv] == b) else 0.0)
    for (a, b), var in o.items():
        same = warm_dev[a] == warm_dev[b]
        var.setInitialValue(
            1.0 if same and (warm_start[a], pos[a]) <= (warm_start[b], pos[b]) else 0.0
        )
        sd[a, b].setInitialValue(1.0 if same else 0.0)
    C.setInitialValue(warm_obj)
    solver = _solver(time_limit, exact, gap_abs)
    lp.solve(solver)
    status = pulp.LpStatus[lp.status]
    has_sol = lp.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    gap = None
    model = getattr(lp, "solverModel", None)
    if model is not None and hasattr(model, "getInfo"):
        gap = float(model.getInfo().mip_gap)
        ms = str(model.getModelStatus())
        if "Optimal" not in ms:  # pulp reports a time limit with an incumbent as optimal
            status = "TimeLimit" if "TimeLimit" in ms else ms.split(".")[-1]
    if not has_sol or C.varValue is None:
        return WindowResult(
            dict(warm_dev),
            dict(warm_start),
            [],
            warm_obj,
            gap,
            "warm:" + status,
            time.perf_counter() - t0,
            warm_obj,
        )
    dev = {v: max(allowed[v], key=lambda d: y[v, d].varValue or 0.0) for v in W}
    st = {v: float(s[v].varValue or 0.0) for v in W}
    fused = [gi for gi in u if (u[gi].varValue or 0.0) > 0.5]
    return WindowResult(
        dev,
        st,
        fused,
        float(C.varValue),
        gap,
        status,
        time.perf_counter() - t0,
        warm_obj,
        {"vars": len(lp.variables()), "pairs": len(o)},
    )
