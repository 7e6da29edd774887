"""``ilp+``'s local search: a device-move descent on the best plan after each ILP pass.

HOPE (Xia et al., HPC Chinese Journal 2022, §2.2) solves one ILP per subgraph, so a decision
that only pays off across a subgraph boundary (a whole Inception branch moved to the CPU, whose
large transfers are charged at both of its ends) is out of any single window's reach. This
pass looks at the whole plan instead: keeping its global order, it moves a *set* of units to
another device -- one unit, both ends of an edge, a node with all its predecessors or all its
successors, or a run of up to ``CHAIN`` units along a single-predecessor/single-successor chain
(a branch) -- and keeps the move when the spec §3 makespan (ASAP, blocking receives) drops.
After each sweep the order is re-derived by earliest start for the new devices (kept when
better). A move is timed from its first position only, from saved device-free times, and is
abandoned as soon as a finish plus the best-cost path after it reaches the incumbent (a valid
lower bound for that order). It never returns a worse plan than it was given.
Times are in the problem's units.
"""

from __future__ import annotations

import heapq
import random
import time

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.cost.shared import occupy
from hetlab.schedulers.incremental import Timeline

CHAIN = 8  # longest chain segment moved as one
KICK = 3  # random moves per iterated-local-search kick
DESCENT_MAX_S = 120.0  # s at most for one descent (a safety cap: it ends long before)


class _Draft:
    """A draft of the plan the passes move: units (one node, or a fused group) in a global
    order, fast to re-time."""

    def __init__(self, problem: Problem, tl: Timeline, tail: np.ndarray) -> None:
        self.problem = problem
        fused = {m: tuple(g) for g in tl.fused for m in g}
        units: list[tuple[int, ...]] = []
        seen: set[int] = set()
        for v in tl.order:
            u = fused.get(v, (v,))
            if u[0] not in seen:
                seen.update(u)
                units.append(u)
        self.units = units
        self.unit_of = {m: i for i, u in enumerate(units) for m in u}
        nd = len(problem.devices)
        cost, comm = problem.cost_matrix, problem.comm_tensor
        self.ucost = []
        for u in units:
            if len(u) == 1:
                self.ucost.append([float(c) for c in cost[u[0]]])
            else:
                ids = [problem.nodes[m].id for m in u]
                self.ucost.append(
                    [
                        float(
                            problem.group_cost(ids, d)
                            if problem.group_cost(ids, d) is not None
                            else np.inf
                        )
                        for d in problem.devices
                    ]
                )
        # external inputs of each unit: (unit index of the producer, comm[k] as nested lists)
        self.inputs = []
        for u in units:
            inside = set(u)
            self.inputs.append(
                [
                    (self.unit_of[w], comm[k].tolist())
                    for m in u
                    for w, k in problem.preds[m]
                    if w not in inside
                ]
            )
        self.outputs: list[list[int]] = [[] for _ in units]
        for i, ins in enumerate(self.inputs):
            for j, _ in ins:
                if i not in self.outputs[j]:
                    self.outputs[j].append(i)
        self.tail = [max(float(tail[m]) for m in u) for u in units]
        self.dev = [int(tl.dev[u[0]]) for u in units]
        self.nd = nd
        self.occ = tl.occ
        self.seq = list(range(len(units)))  # current order (unit indices)
        self.retime()

    def retime(self) -> None:
        """Finish times and the device-free times before each position of ``seq``."""
        self.fin = [0.0] * len(self.units)
        self.free_before = []
        self.pos = [0] * len(self.units)
        self.makespan = self._run(
            0, self.dev, list(self.fin), [0.0] * self.nd, np.inf, save=True, last=1 << 60
        )

    def _run(
        self, p: int, dev, fin, free, bound: float, save: bool = False, last: int = -1
    ) -> float:
        """Makespan with ``seq`` re-timed from position ``p`` (``fin``/``free`` as they were
        there). With ``save`` it records the timing; otherwise it returns inf as soon as the
        plan cannot finish before ``bound``: a finish plus its tail reaches it, or, past the
        moved units (``last``), a device's free time plus the work still queued on it does."""
        seq, ucost, inputs, tail = self.seq, self.ucost, self.inputs, self.tail
        best = self.prefix_max[p] if p and not save else 0.0
        rest = None if save else self.rest_work
        occ = self.occ
        for i in range(p, len(seq)):
            x = seq[i]
            if save:
                self.free_before.append(list(free))
                self.pos[x] = i
            d = dev[x]
            ready, recv = 0.0, 0.0
            for j, c in inputs[x]:  # plain ifs: this loop is the hot path (max() is ~2x slower)
                if fin[j] > ready:  # noqa: PLR1730
                    ready = fin[j]
                dj = dev[j]
                if dj != d:
                    recv += c[dj][d]
            s = ready if ready > free[d] else free[d]  # noqa: FURB136
            f = s + ucost[x][d] + recv
            fin[x] = f
            if occ is None:
                free[d] = f
            else:
                occupy(free, d, f, occ)
            if f > best:  # noqa: PLR1730
                best = f
            if f + tail[x] >= bound or (i > last and f + rest[i + 1][d] >= bound):
                return np.inf
        if save:
            self.fin = fin
            self.prefix_max = [0.0]
            for x in seq:
                self.prefix_max.append(max(self.prefix_max[-1], fin[x]))
            self.rest_work = [[0.0] * self.nd for _ in range(len(seq) + 1)]
            for i in range(len(seq) - 1, -1, -1):
                row = self.rest_work[i] = list(self.rest_work[i + 1])
                row[dev[seq[i]]] += ucost[seq[i]][dev[seq[i]]]
        return best

    def try_move(self, members: list[int], d: int) -> float:
        """Makespan with ``members`` on device ``d`` (inf once it cannot beat the incumbent)."""
        dev = list(self.dev)
        for x in members:
            dev[x] = d
        p = min(self.pos[x] for x in members)
        return self._run(
            p,
            dev,
            list(self.fin),
            list(self.free_before[p]),
            self.makespan - 1e-9,
            last=max(self.pos[x] for x in members),
        )

    def reorder(self) -> list[int]:
        """Units re-listed by earliest start for the current devices (ties: current position)."""
        start = [self.fin[x] - self.ucost[x][self.dev[x]] for x in range(len(self.units))]
        indeg = [len({j for j, _ in ins}) for ins in self.inputs]
        heap = [(start[x], self.pos[x], x) for x in self.seq if indeg[x] == 0]
        heapq.heapify(heap)
        out = []
        while heap:
            _, _, x = heapq.heappop(heap)
            out.append(x)
            for y in self.outputs[x]:
                indeg[y] -= 1
                if indeg[y] == 0:
                    heapq.heappush(heap, (start[y], self.pos[y], y))
        return out

    def moves(self) -> list[list[int]]:
        out: list[list[int]] = [[x] for x in self.seq]
        preds = [sorted({j for j, _ in ins}) for ins in self.inputs]
        for x in self.seq:
            out += [[j, x] for j in preds[x]]
            if len(preds[x]) > 1:
                out.append(preds[x] + [x])
            if len(self.outputs[x]) > 1:
                out.append([x] + self.outputs[x])
            seg, y = [x], x
            while (
                len(seg) < CHAIN
                and len(self.outputs[y]) == 1
                and len(preds[self.outputs[y][0]]) == 1
            ):
                y = self.outputs[y][0]
                seg = seg + [y]
                out.append(seg)
        return out

    def timeline(self) -> Timeline:
        tl = Timeline(self.problem)
        for x in self.seq:
            u = list(self.units[x])
            tl.place(u, self.dev[x], self.ucost[x][self.dev[x]] if len(u) > 1 else None)
        return tl


def _descend(plan: _Draft, moves, ok, sweeps: int, t_end: float) -> None:
    """First-improvement descent over ``moves``, then a re-listing of the order, until no gain."""
    for _ in range(sweeps):
        improved = False
        for m, devs in zip(moves, ok, strict=False):
            for d in devs:
                if all(plan.dev[x] == d for x in m):
                    continue
                if plan.try_move(m, d) < plan.makespan - 1e-9:
                    for x in m:
                        plan.dev[x] = d
                    plan.retime()
                    improved = True
            if time.perf_counter() > t_end:
                return
        old, before = plan.seq, plan.makespan
        plan.seq = plan.reorder()
        plan.retime()
        if plan.makespan < before - 1e-9:
            improved = True
        else:
            plan.seq = old
            plan.retime()
        if not improved:
            return


def improve(
    problem: Problem,
    tl: Timeline,
    tail: np.ndarray,
    kicks: int = 0,
    kick_s: float = 10.0,
    descend: bool = True,
    budget_s: float = DESCENT_MAX_S,
    sweeps: int = 20,
    seed: int = 0,
) -> Timeline:
    """Device-move descent from the plan ``tl``, then ``kicks`` rounds of iterated local search
    (apply KICK random moves, descend again, keep the result only if it is better); returns a
    timeline never worse than ``tl``. ``tail``: a lower bound of the work after each node
    (prunes hopeless moves); ``kick_s``: wall-clock seconds for the kicks; ``descend=False``
    skips the first descent (``tl`` is already a local optimum); ``budget_s``: wall-clock
    seconds for the first descent, checked between moves.
    """
    t_end = time.perf_counter() + budget_s
    plan = _Draft(problem, tl, tail)
    start_ms = plan.makespan
    moves = plan.moves()
    ok = [
        [d for d in range(plan.nd) if all(np.isfinite(plan.ucost[x][d]) for x in m)] for m in moves
    ]
    if descend:
        _descend(plan, moves, ok, sweeps, t_end)
    t_end = time.perf_counter() + kick_s
    rng = random.Random(seed)
    for _ in range(kicks):
        if time.perf_counter() > t_end:
            break
        best = (plan.makespan, list(plan.dev), list(plan.seq))
        for _ in range(KICK):
            i = rng.randrange(len(moves))
            if ok[i]:
                d = rng.choice(ok[i])
                for x in moves[i]:
                    plan.dev[x] = d
        plan.retime()
        _descend(plan, moves, ok, sweeps, t_end)
        if plan.makespan >= best[0] - 1e-9:
            plan.dev, plan.seq = best[1], best[2]
            plan.retime()
    if plan.makespan >= start_ms - 1e-9:
        return tl
    out = plan.timeline()
    return out if out.makespan < tl.makespan - 1e-9 else tl
