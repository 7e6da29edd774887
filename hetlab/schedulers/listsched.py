"""Earliest-finish-time bookkeeping shared by the list schedulers (HEFT, PEFT, dmda).

The timeline follows spec §3 exactly, without insertion: a node placed on device ``d`` starts
at max(finish of its predecessors, the time ``d`` becomes free) and occupies ``d`` for its cost
plus the transfer of every input that comes from another device (blocking receives). Placing
nodes in the order they are decided therefore gives the very times the simulator computes.
Times are in the problem's units.
"""

from __future__ import annotations

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import Decision


class Timeline:
    """Device-free times, and the device and finish time of every node placed so far."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.cost = problem.cost_matrix
        self.comm = problem.comm_tensor
        n, nd = self.cost.shape
        self.avail = np.zeros(nd)
        self.finish = np.zeros(n)
        self.dev = np.full(n, -1, dtype=int)
        self.order: list[int] = []

    def ready(self, v: int) -> float:
        """When every predecessor of ``v`` has finished (all must be placed)."""
        return max((float(self.finish[u]) for u, _ in self.problem.preds[v]), default=0.0)

    def recv(self, v: int) -> np.ndarray:
        """``[D]`` the blocking receive time of ``v``'s inputs on each device."""
        r = np.zeros(self.cost.shape[1])
        for u, k in self.problem.preds[v]:
            r += self.comm[k, self.dev[u]]
        return r

    def eft(self, v: int) -> np.ndarray:
        """``[D]`` the finish time of ``v`` on each device (inf where unsupported)."""
        return np.maximum(self.avail, self.ready(v)) + self.recv(v) + self.cost[v]

    def place(self, v: int, d: int, finish: float | None = None) -> None:
        f = float(self.eft(v)[d]) if finish is None else finish
        self.finish[v] = f
        self.avail[d] = f
        self.dev[v] = d
        self.order.append(v)

    def decision(self, sequential: bool = False, extra: dict | None = None) -> Decision:
        """The placements so far, in placement order; ``predicted_makespan`` is this timeline's
        own latest finish (the simulator must agree: tests check it)."""
        ids = [n.id for n in self.problem.nodes]
        predicted = float(self.finish[self.order].max()) if self.order else 0.0
        return Decision(
            device_of={ids[v]: self.problem.devices[self.dev[v]] for v in self.order},
            order=[ids[v] for v in self.order],
            sequential=sequential,
            extra={"predicted_makespan": predicted, **(extra or {})},
        )
