"""MIP start, lower bound and guide completion of one HOPE window (Xia et al., 2022, §2.1-2.2).

A window's MIP (``ilp_model``) is small, but HiGHS spends most of its time finding a better
incumbent than a poor start (its root bound is usually within a few tenths of a percent of the
optimum). So the start is made good before the solve, a solver aid that never changes the
window's optimum: an earliest-finish list schedule of the window on top of the committed
prefix (and, for ``ilp+``, one in the guide plan's order on the guide's devices), each
followed by a device-flip descent (one node, or both ends of an edge) under the window's own
objective: ``max(f[v] + tail[v])`` (``tail`` is zero for ``ilp``), for ``ilp+`` also the
transfers and costs of the successors expected on the guide's devices and ``spread`` times
the sum of finishes. A start that meets ``path_bound`` (within the gap) skips the MIP.
``completion_makespan`` times a committed prefix completed by the guide plan: ``ilp+`` keeps a
window's MIP result only if that completion is no worse than with the guide's own choice for
the window. Times are in the problem's units.
"""

from __future__ import annotations

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.timeline import Timeline


class _Window:
    def __init__(self, problem: Problem, tl: Timeline, W: list[int], tail, succ_dev, spread: float):
        self.problem, self.tl, self.W, self.spread = problem, tl, W, spread
        self.inw = set(W)
        self.cost = problem.cost_matrix
        self.comm = problem.comm_tensor
        self.tail = tail
        # per node: out-of-window unplaced successors with their expected device
        self.outs = (
            {
                v: [
                    (w, k, succ_dev[w])
                    for w, k in problem.succs[v]
                    if w not in self.inw and tl.finish[w] < 0 and succ_dev.get(w) is not None
                ]
                for v in W
            }
            if succ_dev
            else {v: [] for v in W}
        )

    def run(self, seq: list[int], dev: dict[int, int]):
        """(objective, start, finish) of the window's nodes listed in ``seq`` on ``dev``."""
        tl, cost, comm = self.tl, self.cost, self.comm
        free = tl.dev_free.tolist()
        fin: dict[int, float] = {}
        st: dict[int, float] = {}
        obj = 0.0
        for v in seq:
            d = dev[v]
            ready, recv = 0.0, 0.0
            for u, k in self.problem.preds[v]:
                fu, du = (fin[u], dev[u]) if u in fin else (float(tl.finish[u]), int(tl.dev[u]))
                ready = max(ready, fu)
                if du != d:
                    recv += comm[k, du, d]
            s = max(ready, free[d])
            f = s + cost[v, d] + recv
            st[v], fin[v], free[d] = s, f, f
            obj = max(obj, f + self.tail[v])
            for w, k, dw in self.outs[v]:
                obj = max(
                    obj, f + cost[w, dw] + self.tail[w] + (comm[k, d, dw] if d != dw else 0.0)
                )
        return obj + self.spread * sum(fin.values()), st, fin

    def descend(self, seq: list[int], dev: dict[int, int], sweeps: int = 4):
        best = self.run(seq, dev)
        moves = [[v] for v in seq] + [
            [u, v] for v in seq for u, _ in self.problem.preds[v] if u in self.inw
        ]
        nd = len(self.problem.devices)
        for _ in range(sweeps):
            better = False
            for m in moves:
                old = [dev[x] for x in m]
                for d in range(nd):
                    if all(o == d for o in old) or not all(np.isfinite(self.cost[x, d]) for x in m):
                        continue
                    for x in m:
                        dev[x] = d
                    r = self.run(seq, dev)
                    if r[0] < best[0] - 1e-9:
                        best, old, better = r, [d] * len(m), True
                    else:
                        for x, o in zip(m, old, strict=False):
                            dev[x] = o
            if not better:
                break
        return best, dev


def window_start(
    problem: Problem,
    tl: Timeline,
    W: list[int],
    tail=None,
    ref_dev=None,
    g_pos=None,
    succ_dev=None,
    spread: float = 0.0,
    descend: bool = True,
):
    """The best of an earliest-finish schedule and (with a guide ``ref_dev``/``g_pos``) the
    guide's placement and order, each improved by device flips; returns (objective without
    spread, device, start, finish) per node. ``tail`` None: the objective is the window's own
    latest finish (HOPE's eq. 2)."""
    tail = np.zeros(len(problem.nodes)) if tail is None else tail
    win = _Window(problem, tl, W, tail, succ_dev, spread)
    cands = []
    if ref_dev is not None:
        ref_seq = sorted(W, key=g_pos.__getitem__)
        cands.append((ref_seq, {v: int(ref_dev[v]) for v in W}))
    free = tl.dev_free.copy()  # earliest finish first, in the window's topological order
    eft: dict[int, int] = {}
    fin: dict[int, float] = {}
    for v in W:
        best = None
        for d in np.flatnonzero(np.isfinite(problem.cost_matrix[v])).tolist():
            ready, recv = float(free[d]), 0.0
            for u, k in problem.preds[v]:
                fu, du = (fin[u], eft[u]) if u in fin else (float(tl.finish[u]), int(tl.dev[u]))
                ready = max(ready, fu)
                recv += problem.comm_tensor[k, du, d] if du != d else 0.0
            f = ready + problem.cost_matrix[v, d] + recv
            if best is None or f < best[0]:
                best = (f, d)
        fin[v], eft[v] = best
        free[best[1]] = best[0]
    cands.append((list(W), eft))
    out = None
    for seq, dev in cands:
        r, dev = win.descend(seq, dict(dev)) if descend else (win.run(seq, dev), dev)
        if out is None or r[0] < out[0][0]:
            out = (r, dict(dev))
    (obj, st, fn), dev = out
    return obj - spread * sum(fn.values()), dev, st, fn


def completion_makespan(problem: Problem, tl: Timeline, rest: list[int], dev) -> float:
    """Makespan of the prefix ``tl`` completed by the nodes ``rest`` (in that order) on
    ``dev``: how a window's decision plays out if the guide plan runs everything after it."""
    cost, comm, preds = problem.cost_matrix, problem.comm_tensor, problem.preds
    fin, where, free = tl.finish.tolist(), tl.dev.tolist(), tl.dev_free.tolist()
    for v in rest:
        d = int(dev[v])
        ready, recv = 0.0, 0.0
        for u, k in preds[v]:
            ready = max(ready, fin[u])
            if where[u] != d:
                recv += comm[k, where[u], d]
        f = max(ready, free[d]) + cost[v, d] + recv
        fin[v], where[v], free[d] = f, d, f
    return max(fin, default=0.0)


def path_bound(problem: Problem, tl: Timeline, W, inw, rel, allowed, tail, succ_dev) -> float:
    """A lower bound of the window's ``C``: each node's release, its cheapest cost and its tail
    (or the expected successor's cost, tail and cheapest transfer, as the model counts them)."""
    cost, comm = problem.cost_matrix, problem.comm_tensor
    lb = 0.0
    for v in W:
        f = rel[v] + min(float(cost[v, d]) for d in allowed[v])
        lb = max(lb, f + float(tail[v]))
        for w, k in problem.succs[v] if succ_dev else ():
            dw = succ_dev.get(w)
            if w not in inw and dw is not None and tl.finish[w] < 0:
                c = min(0.0 if d == dw else float(comm[k, d, dw]) for d in allowed[v])
                lb = max(lb, f + float(cost[w, dw] + tail[w]) + c)
    return lb


class WindowBounds:
    """What a window's model derives from its nodes and MIP start (``spec``: an
    ``ilp_model.WindowSpec``): the devices each node may take, the start's objective, the
    horizon ``H`` and each node's release."""

    def __init__(self, problem: Problem, tl: Timeline, spec) -> None:
        self.p, self.tl, self.spec = problem, tl, spec
        self.cost, self.comm = problem.cost_matrix, problem.comm_tensor
        self.W = list(spec.nodes)
        self.inw = set(self.W)
        self.pos = {v: i for i, v in enumerate(self.W)}
        self.tail = np.zeros(len(problem.nodes)) if spec.tail is None else spec.tail
        self.grp_of: dict[int, list[int]] = {}
        for gi, (mem, _) in enumerate(spec.groups):
            for x in mem:
                self.grp_of.setdefault(x, []).append(gi)
        self.allowed = self._allowed()
        self.warm_obj = self._warm_objective()
        self.H = self.warm_obj * 1.01 + 1e-6 + spec.spread * sum(spec.warm_finish.values())
        self.rel = self._releases()

    def _allowed(self) -> dict[int, list[int]]:
        out = {}
        for v in self.W:
            ok = set(np.flatnonzero(np.isfinite(self.cost[v])).tolist())
            for gi in self.grp_of.get(v, []):
                ok |= set(np.flatnonzero(np.isfinite(self.spec.groups[gi][1])).tolist())
            out[v] = sorted(ok)
        return out

    def outside_succs(self, v: int):
        """Unplaced successors of ``v`` after the window with their expected device (ilp+)."""
        succ_dev = self.spec.succ_dev or {}
        for w, k in self.p.succs[v] if succ_dev else ():
            dw = succ_dev.get(w)
            if w not in self.inw and dw is not None and self.tl.finish[w] < 0:
                yield w, k, dw

    def _warm_objective(self) -> float:
        sp, cost, comm = self.spec, self.cost, self.comm
        obj = max(sp.warm_finish[v] + self.tail[v] for v in self.W)
        for v in self.W:
            for w, k, dw in self.outside_succs(v):
                obj = max(
                    obj,
                    sp.warm_finish[v] + cost[w, dw] + self.tail[w] + comm[k, sp.warm_dev[v], dw],
                )
        return float(obj)

    def _releases(self) -> dict[int, float]:
        """Earliest start any schedule of this window can give each node: big-Ms are
        deadline - release, much tighter than the horizon when the prefix already took long."""
        rel: dict[int, float] = {}
        for v in self.W:
            r = min(float(self.tl.dev_free[d]) for d in self.allowed[v])
            for w, _ in self.p.preds[v]:
                if w not in self.inw:
                    r = max(r, float(self.tl.finish[w]))
                elif set(self.grp_of.get(w, [])) & set(self.grp_of.get(v, [])):
                    r = max(r, rel[w])  # may be fused with v: same start
                else:
                    r = max(r, rel[w] + float(np.min(self.cost[w])))
            rel[v] = min(r, self.spec.warm_start[v])
        return rel

    def start_meets_bound(self) -> bool:
        """Whether the start is within the gap of ``path_bound``: then no MIP is needed."""
        sp = self.spec
        lb = path_bound(
            self.p, self.tl, self.W, self.inw, self.rel, self.allowed, self.tail, sp.succ_dev
        )
        lb += sp.spread * sum(
            self.rel[v] + min(float(self.cost[v, d]) for d in self.allowed[v]) for v in self.W
        )
        return self.warm_obj + sp.spread * sum(sp.warm_finish.values()) <= lb + sp.gap_abs + 1e-9
