"""What one HOPE window's ILP knows before it is solved: releases, deadlines and bounds.

Every quantity here comes from the window itself (its nodes, the committed prefix and its MIP
start), never from a global constant, so that the big-Ms of eqs. 4-5 stay as small as the
window allows (Xia et al., 2022, §2.1):

- ``rel[v]``: the earliest start any schedule can give ``v``: after its predecessors at their
  cheapest costs, and after all its in-window ancestors could have run on the devices (``fill``);
- ``after[v]``: the least time from ``v``'s finish to the end of the window: its in-window
  successors (path) and descendants (spread over the devices), plus ``tail`` (``ilp+``);
- ``H``: the objective of the MIP start, the horizon of any plan at least as good; ``ub[v]``
  (deadline) is ``H - after[v]``, tightened backwards by each successor's latest start;
- ``path_bound``: a lower bound of the objective; a start that meets it needs no MIP;
- ``twins``: classes of devices that are interchangeable in this window (same costs, transfers
  and free time, no committed neighbour on them), for symmetry breaking.

Times are in the problem's units.
"""

from __future__ import annotations

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.incremental import Timeline


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


def fill(free: list[float], work: float) -> float:
    """The earliest time by which ``work`` can have run on devices free from ``free``."""
    avail = sorted(free)
    t = avail[0] + work
    for i in range(len(avail)):
        t = (sum(avail[: i + 1]) + work) / (i + 1)  # devices 0..i busy from their free times
        if i + 1 == len(avail) or t <= avail[i + 1]:
            break
    return t


class WindowBounds:
    """What a window's model derives from its nodes and MIP start (``spec``: an
    ``ilp_model.WindowSpec``): the devices each node may take, the start's objective, the
    horizon ``H``, releases, deadlines and the time each node leaves after it."""

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
        self.warm_dev = dict(spec.warm_dev)  # the start's devices (relabelled by the model)
        self.warm_obj = self._warm_objective()
        self.H = (
            self.warm_obj
            + spec.spread * sum(spec.warm_finish.values())
            + 1e-9 * max(1.0, self.warm_obj)  # round-off: the start itself stays feasible
        )
        self.rel = self._releases()
        self.after = self._after()
        self.ub = self._deadlines()

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

    def least_cost(self, v: int) -> float:
        """The cheapest compute cost of ``v`` on a device it may take alone (0 if none)."""
        c = [float(self.cost[v, d]) for d in self.allowed[v] if np.isfinite(self.cost[v, d])]
        return min(c, default=0.0)

    def fusable(self, v: int, w: int) -> bool:
        """Whether ``v`` and ``w`` may run as one fused group (same start and finish)."""
        return bool(set(self.grp_of.get(v, [])) & set(self.grp_of.get(w, [])))

    def _members(self, mask: int) -> list[int]:
        return [w for w in self.W if (mask >> self.pos[w]) & 1]

    def _releases(self) -> dict[int, float]:
        """Earliest start any schedule of this window can give each node. With fused groups
        (whose cost is not the sum of their members') only the path part is used."""
        rel: dict[int, float] = {}
        anc: dict[int, int] = {}
        free = [float(x) for x in self.tl.dev_free]
        for v in self.W:
            r, anc[v] = min(free[d] for d in self.allowed[v]), 0
            for w, _ in self.p.preds[v]:
                if w not in self.inw:
                    r = max(r, float(self.tl.finish[w]))
                    continue
                anc[v] |= anc[w] | (1 << self.pos[w])
                r = max(r, rel[w] if self.fusable(v, w) else rel[w] + self.least_cost(w))
            if anc[v] and not self.grp_of:  # the ancestors need the devices' time too
                before = self._members(anc[v])
                r0 = min(rel[w] for w in before)
                r = max(r, fill([max(x, r0) for x in free], sum(map(self.least_cost, before))))
            rel[v] = min(r, self.spec.warm_start[v])
        return rel

    def _after(self) -> dict[int, float]:
        """Least time from each node's finish to the end of the objective: ``tail``, its
        in-window successors at their cheapest costs (nothing for one it may be fused with),
        and its in-window descendants spread over the devices."""
        q: dict[int, float] = {}
        desc: dict[int, int] = {}
        nd = len(self.p.devices)
        for v in reversed(self.W):
            t, desc[v] = float(self.tail[v]), 0
            for w, _ in self.p.succs[v]:
                if w in self.inw:
                    desc[v] |= desc[w] | (1 << self.pos[w])
                    t = max(t, q[w] + (0.0 if self.fusable(v, w) else self.least_cost(w)))
            if desc[v] and not self.grp_of:
                t = max(t, sum(map(self.least_cost, self._members(desc[v]))) / nd)
            q[v] = t
        return q

    def _deadlines(self) -> dict[int, float]:
        """Latest finish of each node in any schedule at least as good as the start: ``H``
        less what must follow it, and no later than each in-window successor's latest start
        (a node fused with its successor may finish with it)."""
        lf: dict[int, float] = {}
        for v in reversed(self.W):
            d = self.H - self.after[v]
            for w, _ in self.p.succs[v]:
                if w in self.inw:
                    d = min(d, lf[w] if self.fusable(v, w) else lf[w] - self.least_cost(w))
            lf[v] = max(d, self.spec.warm_finish[v], self.rel[v])
        return lf

    def latest_start(self, v: int) -> float:
        late = self.ub[v] - (0.0 if v in self.grp_of else self.least_cost(v))
        return max(late, self.spec.warm_start[v], self.rel[v])

    def big_m(self, a: int, b: int) -> float:
        """The big-M of ``b`` after ``a`` on one device: ``a``'s deadline less ``b``'s release."""
        return max(self.ub[a] - self.rel[b], 0.0)

    def start_meets_bound(self) -> bool:
        """Whether the start is within the gap of ``path_bound``: then no MIP is needed."""
        sp = self.spec
        lb = path_bound(
            self.p, self.tl, self.W, self.inw, self.rel, self.allowed, self.tail, sp.succ_dev
        )
        lb = max([lb] + [self.rel[v] + self.least_cost(v) + self.after[v] for v in self.W])
        lb += sp.spread * sum(
            self.rel[v] + min(float(self.cost[v, d]) for d in self.allowed[v]) for v in self.W
        )
        return self.warm_obj + sp.spread * sum(sp.warm_finish.values()) <= lb + sp.gap_abs + 1e-9

    def twins(self) -> list[list[int]]:
        """Classes (two or more devices, ascending) that any plan of this window may swap:
        equal costs (groups' too), transfers and free times, and no committed predecessor or
        expected successor on them. Relabelling such devices changes no objective."""
        nd, W = len(self.p.devices), self.W
        edges = sorted({k for v in W for _, k in self.p.preds[v] + self.p.succs[v]})
        pinned = {int(self.tl.dev[w]) for v in W for w, _ in self.p.preds[v] if w not in self.inw}
        pinned |= {dw for v in W for _, _, dw in self.outside_succs(v)}
        classes: list[list[int]] = []
        for d in range(nd):
            if d in pinned:
                continue
            for c in classes:
                if self._same(c[0], d, W, edges):
                    c.append(d)
                    break
            else:
                classes.append([d])
        return [c for c in classes if len(c) > 1]

    def _same(self, a: int, b: int, W: list[int], edges: list[int]) -> bool:
        if float(self.tl.dev_free[a]) != float(self.tl.dev_free[b]):
            return False
        if not np.array_equal(self.cost[W, a], self.cost[W, b]):
            return False
        if any(g[1][a] != g[1][b] for g in self.spec.groups):
            return False
        swap = list(range(len(self.p.devices)))
        swap[a], swap[b] = b, a
        occ = self.p.occupancy  # devices sharing cores: the same sharing once swapped
        if occ is not None and any(
            sorted(swap[x] for x in occ[d]) != sorted(occ[swap[d]]) for d in range(len(swap))
        ):
            return False
        c = self.comm[edges]
        return bool(np.array_equal(c, c[:, swap][:, :, swap]))
