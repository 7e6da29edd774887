"""MIP start and guide completion of one HOPE window (Xia et al., 2022, §2.1-2.2).

The start is a solver aid that never changes the window's optimum: it gives HiGHS a good
incumbent (and ``ilp_bounds`` its horizon) so that its work goes into the proof, not the
search. It is an earliest-finish list schedule of the window on top of the committed prefix
(and, for ``ilp+``, one in the guide plan's order on the guide's devices), each followed by a
device-flip descent (one node, or both ends of an edge) under the window's own objective:
``max(f[v] + tail[v])`` (``tail`` is zero for ``ilp``), for ``ilp+`` also the transfers and
costs of the successors expected on the guide's devices and ``spread`` times the sum of
finishes. The ILP decides the window: the start is returned only when the ILP finds nothing
better within its budget (``WindowResult.start_kept``). ``completion_makespan`` times a
committed prefix completed by the guide plan: ``ilp+`` keeps a window's MIP result only if
that completion is no worse than with the guide's own choice for the window. Times are in the
problem's units.
"""

from __future__ import annotations

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.cost.shared import occupy
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.sim import unit_times


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
            st[v], fin[v] = s, f
            occupy(free, d, f, tl.occ)
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
        occupy(free, best[1], best[0], tl.occ)
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
        _, f = unit_times(preds, comm, where, fin, [v], d, free[d], cost[v, d])
        fin[v], where[v] = f, d
        occupy(free, d, f, tl.occ)
    return max(fin, default=0.0)
