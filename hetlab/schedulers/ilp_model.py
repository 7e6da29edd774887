"""One HOPE ILP (eqs. 1-6) over a window of nodes, for N devices, built with PuLP.

Xia et al., "HOPE: a heterogeneity-oriented parallel execution engine for inference on
mobiles", HPC Chinese Journal 2022, §2.1. Per node ``v``: binary placement ``y[v,d]`` over the
devices that can run it (eq. 6), a start ``s`` and finish ``f``; the duration is the compute
cost plus blocking receives (eq. 1), where an edge's transfer time depends on both endpoints'
devices: ``z[e,a,b] = y[u,a] * y[v,b]`` linearizes the product (predecessors already placed by
earlier windows give constant coefficients). Precedence (eq. 3), and one op at a time per
device (eqs. 4-5): one order binary per pair not already ordered by a path (transitive
closure) that can share a device, active only when both land on the same device (``sd``).
Devices that share cores (spec §3's extension) count as one device here: ``sd`` is also
active when the two land on devices sharing cores.
The objective (eq. 2) is the makespan ``C >= f[v]``, strengthened to ``C >= f[v] + after[v]``
(what must still run after ``v`` in the window). Big-Ms are per pair: (deadline of one) -
(release of the other), both from the window itself (``ilp_bounds``). Device-load cuts and
symmetry breaking between interchangeable devices (``ilp_cuts``) tighten the relaxation; none
of these changes a window's optimum.

Extensions used only by ``ilp+`` (all off in a plain ``WindowSpec``): ``tail`` (a lower bound
of the work after each node, counted in ``C``), ``succ_dev`` (expected devices of later nodes,
whose transfers and costs count in ``C``), ``rest_work`` (remaining work spread over the
devices), ``spread`` (a small weight on the sum of finishes), ``groups`` (PartitionTuner's
fused groups as an extra choice: members share device, start and finish, and take the group
cost). The constraints of ``rest_work`` and ``groups`` are ``ilp_extras``'s. Times are in the
problem's units.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pulp

from hetlab.cost.problem import Problem
from hetlab.schedulers import ilp_solver
from hetlab.schedulers.ilp_bounds import WindowBounds
from hetlab.schedulers.ilp_cuts import canonical_devices, load_cuts, symmetry_cuts
from hetlab.schedulers.ilp_extras import group_constraints, rest_balance
from hetlab.schedulers.ilp_solver import WindowResult
from hetlab.schedulers.ilp_work import window_node_limit
from hetlab.schedulers.incremental import Timeline

__all__ = ["WindowResult", "WindowSpec", "solve_window"]


@dataclass
class WindowSpec:
    """One window: its nodes (topological order), a feasible schedule of them on top of the
    prefix (``warm_*``: the MIP start and the source of the horizon), the node budget, the
    wall-clock safety net (seconds) and the absolute MIP gap (problem units; 0 solves to
    optimality). The rest is ``ilp+``'s."""

    nodes: list[int]
    warm_dev: dict[int, int]
    warm_start: dict[int, float]
    warm_finish: dict[int, float]
    time_limit: float | None = None
    gap_abs: float = 0.0
    node_limit: int | None = None
    skip_by_bound: bool = True  # a start that meets path_bound within the gap needs no MIP
    tail: np.ndarray | None = None
    groups: list[tuple[list[int], np.ndarray]] = field(default_factory=list)
    spread: float = 0.0
    succ_dev: dict[int, int] | None = None
    rest_work: float | None = None


def solve_window(problem: Problem, tl: Timeline, spec: WindowSpec) -> WindowResult:
    """Solve the ILP of ``spec.nodes`` on top of the placed prefix ``tl``."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # PuLP's 4.0 deprecation notices
        warnings.simplefilter("ignore", DeprecationWarning)
        m = _Model(problem, tl, spec)
        if spec.skip_by_bound and not spec.groups and m.start_meets_bound():
            return m.start_result("bound", 0.0, t0)
        m.build()
        limit = window_node_limit(spec.node_limit, len(spec.nodes))  # scaled to its size
        budget = ilp_solver.Budget(limit, spec.time_limit, spec.gap_abs)
        status, gap, nodes = ilp_solver.run(m.lp, budget)
        if m.C.varValue is None and not status.startswith("warm"):
            status, gap = f"warm:{status}", None
        res = None if status.startswith("warm") else m.result(status, gap, t0, nodes)
        if res is None or (not res.optimal and res.objective > m.warm_obj + 1e-9):
            return m.start_result(status, gap, t0, nodes)  # no incumbent, or a worse one
        return res


class _Model(WindowBounds):
    """The variables and constraints of one window, one method per HOPE equation."""

    # -- the model --
    def build(self) -> None:
        sp, W = self.spec, self.W
        twins = self.twins()
        self.warm_dev = canonical_devices(W, sp.warm_dev, twins)  # the same start, relabelled
        self.lp = pulp.LpProblem("hope_window", pulp.LpMinimize)
        y = {
            (v, d): pulp.LpVariable(f"y_{v}_{d}", cat="Binary") for v in W for d in self.allowed[v]
        }
        self.y = y
        self.s = {
            v: pulp.LpVariable(f"s_{v}", lowBound=self.rel[v], upBound=self.latest_start(v))
            for v in W
        }
        self.f = {v: pulp.LpVariable(f"f_{v}", lowBound=0, upBound=self.ub[v]) for v in W}
        self.u = {gi: pulp.LpVariable(f"u_{gi}", cat="Binary") for gi in range(len(sp.groups))}
        self.C = pulp.LpVariable("C", lowBound=0)
        self.fusedsum = {v: pulp.lpSum(self.u[g] for g in self.grp_of.get(v, [])) for v in W}
        self.z: dict = {}
        self.lp += self.C + (sp.spread * pulp.lpSum(self.f.values()) if sp.spread else 0)
        self.eq6_one_device()
        recv = self.eq1_receives()
        for v in W:
            self.eq1_duration(v, recv[v])
            self.eq3_precedence(v)
            self.eq2_makespan(v)
        group_constraints(self, recv)
        rest_balance(self)
        load_cuts(self)
        symmetry_cuts(self, twins)
        self.eq4_5_one_at_a_time()
        self.mip_start()

    def eq6_one_device(self) -> None:
        """Eq. 6: each node runs once, on a device that can run it (or through its group)."""
        for v in self.W:
            self.lp += pulp.lpSum(self.y[v, d] for d in self.allowed[v]) == 1
            if len(self.grp_of.get(v, [])) > 1:
                self.lp += self.fusedsum[v] <= 1
            for d in self.allowed[v]:
                if not np.isfinite(self.cost[v, d]):  # only reachable through a fused group
                    gs = [g for g in self.grp_of[v] if np.isfinite(self.spec.groups[g][1][d])]
                    self.lp += self.y[v, d] <= pulp.lpSum(self.u[g] for g in gs)

    def eq1_receives(self) -> dict[int, list]:
        """Eq. 1's communication term: each input's transfer for the pair of devices taken.
        ``z[k,a,b] = y[w,a] * y[v,b]`` exactly (flow form: rows and columns sum to y)."""
        y, comm, al = self.y, self.comm, self.allowed
        recv: dict[int, list] = {v: [] for v in self.W}
        self.recv_on = {(v, b): [] for v in self.W for b in al[v]}
        for v in self.W:
            for w, k in self.p.preds[v]:
                if w not in self.inw:
                    a = int(self.tl.dev[w])
                    for b in al[v]:
                        if b != a and comm[k, a, b] > 0:
                            t = float(comm[k, a, b]) * y[v, b]
                            recv[v].append(t)
                            self.recv_on[v, b].append(t)
                    continue
                for a in al[w]:
                    for b in al[v]:
                        self.z[k, a, b] = zz = pulp.LpVariable(f"z_{k}_{a}_{b}", lowBound=0)
                        if a != b and comm[k, a, b] > 0:
                            recv[v].append(float(comm[k, a, b]) * zz)
                            self.recv_on[v, b].append(float(comm[k, a, b]) * zz)
                for a in al[w]:
                    self.lp += pulp.lpSum(self.z[k, a, b] for b in al[v]) == y[w, a]
                for b in al[v]:
                    self.lp += pulp.lpSum(self.z[k, a, b] for a in al[w]) == y[v, b]
        return recv

    def eq1_duration(self, v: int, recv: list) -> None:
        """Eq. 1: finish = start + compute on the chosen device + blocking receives."""
        work = pulp.lpSum(
            float(self.cost[v, d]) * self.y[v, d]
            for d in self.allowed[v]
            if np.isfinite(self.cost[v, d])
        )
        relax = self.H * self.fusedsum[v] if v in self.grp_of else 0  # a fused group times it
        self.lp += self.f[v] >= self.s[v] + work + pulp.lpSum(recv) - relax

    def eq3_precedence(self, v: int) -> None:
        """Eq. 3: a node starts after its predecessors finish (those of earlier windows are
        constants) and after its device is free of what earlier windows put there."""
        s, f, tl = self.s, self.f, self.tl
        self.lp += s[v] >= pulp.lpSum(
            max(float(tl.dev_free[d]), self.rel[v]) * self.y[v, d] for d in self.allowed[v]
        )
        for w, _ in self.p.preds[v]:
            if w not in self.inw:
                self.lp += s[v] >= float(tl.finish[w])
                continue
            shared = [g for g in self.grp_of.get(v, []) if g in self.grp_of.get(w, [])]
            relax = (self.H - self.rel[v]) * pulp.lpSum(self.u[g] for g in shared) if shared else 0
            self.lp += s[v] >= f[w] - relax

    def eq2_makespan(self, v: int) -> None:
        """Eq. 2: the makespan is at least every finish, plus what must still run after it in
        the window (``after``; ilp+: its tail and its expected successors' costs)."""
        self.lp += self.f[v] + self.after[v] <= self.C
        for w, k, dw in self.outside_succs(v):
            moved = pulp.lpSum(
                float(self.comm[k, d, dw]) * self.y[v, d]
                for d in self.allowed[v]
                if d != dw and self.comm[k, d, dw] > 0
            )
            self.lp += self.f[v] + float(self.cost[w, dw] + self.tail[w]) + moved <= self.C

    def eq4_5_one_at_a_time(self) -> None:
        """Eqs. 4-5: two nodes on one device do not overlap. Only pairs with no path between
        them (transitive closure) that can share a device get an order binary ``o``; it
        matters only when both land on the same device (``sd``), which breaks symmetry."""
        W, pos, y, s, f = self.W, self.pos, self.y, self.s, self.f
        reach = dict.fromkeys(W, 0)  # bitmask of descendants inside the window
        for v in reversed(W):
            for w, _ in self.p.succs[v]:
                if w in self.inw:
                    reach[v] |= reach[w] | (1 << pos[w])
        self.o, self.sd = {}, {}
        for i, a in enumerate(W):
            for b in W[i + 1 :]:
                common = self.clashes(a, b)
                if (reach[a] >> pos[b]) & 1 or not common:
                    continue
                self.o[a, b] = oo = pulp.LpVariable(f"o_{a}_{b}", cat="Binary")
                self.sd[a, b] = ss = pulp.LpVariable(f"sd_{a}_{b}", lowBound=0, upBound=1)
                for d, on_b in common:
                    yb = y[b, on_b[0]] if len(on_b) == 1 else pulp.lpSum(y[b, e] for e in on_b)
                    self.lp += ss >= y[a, d] + yb - 1
                self.lp += oo <= ss
                mb, ma = self.big_m(a, b), self.big_m(b, a)
                self.lp += s[b] >= f[a] - mb * (1 - oo) - mb * (1 - ss)
                self.lp += s[a] >= f[b] - ma * oo - ma * (1 - ss)

    def clashes(self, a: int, b: int) -> list[tuple[int, list[int]]]:
        """The devices ``d`` of ``a`` on which ``a`` excludes ``b``, each with the devices of
        ``b`` it excludes it on: ``d`` itself, and those sharing its cores (spec §3)."""
        occ, on_b = self.p.occupancy, set(self.allowed[b])
        if occ is None:
            return [(d, [d]) for d in sorted(set(self.allowed[a]) & on_b)]
        out = [(d, [e for e in sorted(occ[d]) if e in on_b]) for d in sorted(self.allowed[a])]
        return [(d, es) for d, es in out if es]

    def mip_start(self) -> None:
        """The start schedule as initial values (no fused groups)."""
        sp, pos = self.spec, self.pos
        wd, ws = self.warm_dev, sp.warm_start
        for (v, d), var in self.y.items():
            var.setInitialValue(1.0 if wd[v] == d else 0.0)
        for v in self.W:
            self.s[v].setInitialValue(ws[v])
            self.f[v].setInitialValue(sp.warm_finish[v])
        for var in self.u.values():
            var.setInitialValue(0.0)
        for (k, a, b), var in self.z.items():
            e = self.p.edges[k]
            src, dst = self.p.index[e.src], self.p.index[e.dst]
            var.setInitialValue(1.0 if (wd[src] == a and wd[dst] == b) else 0.0)
        for (a, b), var in self.o.items():
            same = self.excludes(wd[a], wd[b])
            first = (ws[a], pos[a]) <= (ws[b], pos[b])
            var.setInitialValue(1.0 if same and first else 0.0)
            self.sd[a, b].setInitialValue(1.0 if same else 0.0)
        self.C.setInitialValue(self.warm_obj)

    def excludes(self, d: int, e: int) -> bool:
        """Whether a node on ``d`` and one on ``e`` cannot compute at the same time."""
        occ = self.p.occupancy
        return d == e if occ is None else e in occ[d]

    # -- results --
    def start_result(
        self, status: str, gap: float | None, t0: float, nodes: int = 0
    ) -> WindowResult:
        """The MIP start as the window's decision (no MIP, or nothing better from it)."""
        sp, secs = self.spec, ilp_solver.elapsed(t0)
        dev, st = dict(self.warm_dev), dict(sp.warm_start)
        return WindowResult(dev, st, [], self.warm_obj, gap, status, secs, self.warm_obj, nodes)

    def result(self, status: str, gap: float | None, t0: float, nodes: int) -> WindowResult:
        """The ILP's incumbent as the window's decision."""
        dev = {v: max(self.allowed[v], key=lambda d: self.y[v, d].varValue or 0.0) for v in self.W}
        st = {v: float(self.s[v].varValue or 0.0) for v in self.W}
        fused = [gi for gi, var in self.u.items() if (var.varValue or 0.0) > 0.5]
        obj, secs = float(self.C.varValue), ilp_solver.elapsed(t0)
        return WindowResult(dev, st, fused, obj, gap, status, secs, self.warm_obj, nodes)
