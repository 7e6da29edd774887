"""Incremental spec §3 timing of a growing prefix of a plan, on the timing engine's rule
(``sim.unit_times``).

Every scheduler that builds a plan unit by unit (the list schedulers, HOPE's greedy search
and the per-subgraph ILP) keeps one of these to know the device-free times, the finish times
and the devices that earlier decisions left.

- ``Timeline`` appends: a unit placed on device ``d`` starts at max(finish of its
  predecessors, the time ``d`` becomes free) and occupies ``d`` for its cost plus the transfer
  of every input that comes from another device (blocking receives). Placing units in the
  order they are decided gives the very times the simulator computes.
- ``GapTimeline`` inserts (HEFT's and PEFT's insertion-based policy): a node goes into the
  first idle gap of ``d``, from the time its predecessors have finished, that holds its
  receives and its compute together (a receive occupies the receiving device, spec §3). Its
  decision lists the nodes by start time, the per-device order that the simulator needs to
  compute the same times.

Devices that share cores (``problem.occupancy``) are one resource in both: a node waits for,
or fits between, the nodes of every device that shares its device's cores.

``sim.simulate`` stays the source of every reported makespan. Times are in the problem's units.
"""

from __future__ import annotations

import bisect

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.cost.shared import occupy
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import unit_times


class Timeline:
    """Device-free times, and the device, start and finish of every node placed so far."""

    def __init__(self, problem: Problem) -> None:
        n, nd = len(problem.nodes), len(problem.devices)
        self.problem = problem
        self.cost = problem.cost_matrix
        self.comm = problem.comm_tensor
        self.preds = problem.preds
        self.dev = np.full(n, -1, dtype=int)
        self.start = np.zeros(n)
        self.finish = np.full(n, -1.0)
        self.dev_free = np.zeros(nd)  # when each device may next start (shared cores too)
        self.occ = problem.occupancy
        self.order: list[int] = []
        self.fused: list[list[int]] = []

    def copy(self) -> Timeline:
        """An independent copy (arrays and order lists)."""
        c = type(self).__new__(type(self))
        c.__dict__.update(self.__dict__)
        c.dev, c.start = self.dev.copy(), self.start.copy()
        c.finish, c.dev_free = self.finish.copy(), self.dev_free.copy()
        c.order, c.fused = list(self.order), [list(g) for g in self.fused]
        return c

    # -- one node at a time (list schedulers) --
    def ready(self, v: int) -> float:
        """When every predecessor of ``v`` has finished (all must be placed)."""
        return max((float(self.finish[u]) for u, _ in self.preds[v]), default=0.0)

    def recv(self, v: int) -> np.ndarray:
        """``[D]`` the blocking receive time of ``v``'s inputs on each device."""
        r = np.zeros(self.cost.shape[1])
        for u, k in self.preds[v]:
            r += self.comm[k, self.dev[u]]
        return r

    def eft(self, v: int) -> np.ndarray:
        """``[D]`` the finish time of ``v`` on each device (inf where unsupported)."""
        return np.maximum(self.dev_free, self.ready(v)) + self.recv(v) + self.cost[v]

    # -- units: one node, or a fused group --
    def timing(
        self, members: list[int], d: int, unit_cost: float | None = None
    ) -> tuple[float, float]:
        """(start, finish) that the unit ``members`` would get on device ``d`` if appended now."""
        c = self.cost[members[0], d] if unit_cost is None else unit_cost
        return unit_times(
            self.preds, self.comm, self.dev, self.finish, members, d, self.dev_free[d], c
        )

    def place(
        self, members: int | list[int], d: int, unit_cost: float | None = None
    ) -> tuple[float, float]:
        """Append a unit (a node, or a fused group with its ``unit_cost``) on device ``d``."""
        members = [members] if isinstance(members, (int, np.integer)) else members
        s, f = self.timing(members, d, unit_cost)
        for m in members:
            self.dev[m] = d
            self.start[m] = s
            self.finish[m] = f
            self.order.append(m)
        if len(members) > 1 and unit_cost is not None:
            self.fused.append(list(members))
        occupy(self.dev_free, d, f, self.occ)
        return s, f

    @property
    def makespan(self) -> float:
        return float(self.finish.max(initial=0.0))

    def decision_parts(self) -> tuple[dict[str, str], list[str], list[list[str]]]:
        """(device of each node id, order of node ids, fused groups of node ids)."""
        ids = [n.id for n in self.problem.nodes]
        devs = self.problem.devices
        return (
            {ids[v]: devs[self.dev[v]] for v in self.order},
            [ids[v] for v in self.order],
            [[ids[v] for v in g] for g in self.fused],
        )

    def plan(self, algo: str, sequential: bool = False, extra: dict | None = None) -> Plan:
        """The placements so far as ``algo``'s untimed plan, in placement order;
        ``predicted_makespan`` is this timeline's own latest finish (the simulator must
        agree: tests check it)."""
        device_of, order, fused = self.decision_parts()
        predicted = float(self.finish[self.order].max()) if self.order else 0.0
        return Plan.of(
            device_of,
            order,
            sequential=sequential,
            fused=fused,
            algo=algo,
            extra={"predicted_makespan": predicted, **(extra or {})},
        )


class GapTimeline(Timeline):
    """A timeline of single nodes, each placed in the earliest idle gap that fits it."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        # per device: (start, finish, placement index, node), sorted; never overlapping
        self.slots: list[list[tuple[float, float, int, int]]] = [[] for _ in problem.devices]

    def copy(self) -> GapTimeline:
        c = super().copy()
        c.slots = [list(s) for s in self.slots]
        return c

    def fit(self, v: int, d: int, recv: float) -> tuple[float, float]:
        """(start, finish) of ``v`` on ``d`` in the first gap, from when its predecessors have
        finished, that holds ``recv`` (its blocking receives) and its cost; after the last
        node of ``d`` if no gap does. The finish is summed as the simulator sums it."""
        if self.occ is not None and len(self.occ[d]) > 1:
            return self._fit_shared(v, d, recv)
        ready, c, slots = self.ready(v), self.cost[v, d], self.slots[d]
        # finishes rise with starts, so every slot that ends by ``ready`` leaves no gap after it
        i = bisect.bisect_right(slots, ready, key=lambda x: x[1])
        s = ready
        for s0, f0, _, _ in slots[i:]:
            if s + c + recv <= s0:
                return float(s), float(s + c + recv)
            s = max(ready, f0)
        return float(s), float(s + c + recv)

    def _fit_shared(self, v: int, d: int, recv: float) -> tuple[float, float]:
        """``fit`` on a device that shares cores: the gaps are those left by the nodes of
        every device it shares them with, itself included (their slots may overlap)."""
        ready, c = self.ready(v), self.cost[v, d]
        busy = sorted(x[:2] for o in self.occ[d] for x in self.slots[o] if x[1] > ready)
        s = ready
        for s0, f0 in busy:
            if s + c + recv <= s0:
                return float(s), float(s + c + recv)
            s = max(s, f0)
        return float(s), float(s + c + recv)

    def eft(self, v: int) -> np.ndarray:
        """``[D]`` the finish time of ``v`` on each device with insertion (inf if unsupported)."""
        r = self.recv(v)
        return np.array([self.fit(v, d, float(r[d]))[1] for d in range(len(self.slots))])

    def place(
        self, members: int | list[int], d: int, unit_cost: float | None = None
    ) -> tuple[float, float]:
        """Insert one node on device ``d`` (no fused groups: the list schedulers place nodes)."""
        if not isinstance(members, (int, np.integer)) or unit_cost is not None:
            raise ValueError("GapTimeline places single nodes")
        v = int(members)
        s, f = self.fit(v, d, float(self.recv(v)[d]))
        bisect.insort(self.slots[d], (s, f, len(self.order), v))
        self.dev[v], self.start[v], self.finish[v] = d, s, f
        self.order.append(v)
        for o in self.occ[d] if self.occ is not None else (d,):
            self.dev_free[o] = max(self.dev_free[o], f)
        return s, f

    def decision_parts(self) -> tuple[dict[str, str], list[str], list[list[str]]]:
        """As ``Timeline``'s, with the nodes listed by (start, finish, placement): each
        device's order is then its slot order, and a predecessor always comes first (it
        finishes by its successor's start, and was placed before it)."""
        placed = {v: i for i, v in enumerate(self.order)}
        by_start = sorted(self.order, key=lambda v: (self.start[v], self.finish[v], placed[v]))
        ids, devs = [n.id for n in self.problem.nodes], self.problem.devices
        return {ids[v]: devs[self.dev[v]] for v in by_start}, [ids[v] for v in by_start], []
