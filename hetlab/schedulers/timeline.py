"""Incremental ASAP timing of a growing prefix of a plan, identical to spec §3 (``sim.py``).

Schedulers that build a plan unit by unit (greedy, the per-subgraph ILP) keep one of these to
know the device-free times, the finish times and the devices that earlier decisions left.
Times are in the problem's units.
"""

from __future__ import annotations

import numpy as np

from hetlab.cost.problem import Problem


class Timeline:
    def __init__(self, problem: Problem) -> None:
        n, nd = len(problem.nodes), len(problem.devices)
        self.problem = problem
        self.cost = problem.cost_matrix
        self.comm = problem.comm_tensor
        self.preds = problem.preds
        self.dev = np.full(n, -1, dtype=int)
        self.start = np.zeros(n)
        self.finish = np.full(n, -1.0)
        self.dev_free = np.zeros(nd)
        self.order: list[int] = []
        self.fused: list[list[int]] = []

    def timing(
        self, members: list[int], d: int, unit_cost: float | None = None
    ) -> tuple[float, float]:
        """(start, finish) that the unit ``members`` would get on device ``d`` if appended now."""
        inside = set(members)
        ready = 0.0
        recv = 0.0
        for m in members:
            for u, k in self.preds[m]:
                if u in inside:
                    continue
                ready = max(ready, self.finish[u])
                if self.dev[u] != d:
                    recv += self.comm[k, self.dev[u], d]
        c = self.cost[members[0], d] if unit_cost is None else unit_cost
        s = max(ready, self.dev_free[d])
        return float(s), float(s + c + recv)

    def place(
        self, members: list[int], d: int, unit_cost: float | None = None
    ) -> tuple[float, float]:
        """Append a unit (one node, or a fused group with its ``unit_cost``) on device ``d``."""
        s, f = self.timing(members, d, unit_cost)
        for m in members:
            self.dev[m] = d
            self.start[m] = s
            self.finish[m] = f
            self.order.append(m)
        if len(members) > 1 and unit_cost is not None:
            self.fused.append(list(members))
        self.dev_free[d] = f
        return s, f

    @property
    def makespan(self) -> float:
        return float(self.finish.max(initial=0.0))

    def decision_parts(self) -> tuple[dict[str, str], list[str], list[list[str]]]:
        ids = [n.id for n in self.problem.nodes]
        devs = self.problem.devices
        return (
            {ids[v]: devs[self.dev[v]] for v in self.order},
            [ids[v] for v in self.order],
            [[ids[v] for v in g] for g in self.fused],
        )
