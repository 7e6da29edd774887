"""Valid inequalities and symmetry breaking for one HOPE window's ILP (``ilp_model``).

None of them removes a schedule's objective value from the model: the load cuts hold for
every feasible schedule, and symmetry breaking keeps one of each set of schedules that differ
only by a relabelling of interchangeable devices (``WindowBounds.twins``), all of the same
objective. They make the LP relaxation tighter, so that HiGHS proves a window's optimum with
fewer branch-and-bound nodes.
"""

from __future__ import annotations

import itertools

import numpy as np
import pulp


def load_cuts(m) -> None:
    """A device runs its nodes one at a time, each for its cost plus its blocking receives
    (eq. 1), after it is free and after their releases: for each device ``d`` and each release
    ``r`` of its candidates, ``C >= r + load of the nodes released at r or later + the least
    time any of them leaves after it``. ``m`` is an ``ilp_model._Model`` during ``build``."""
    relax = m.H * pulp.lpSum(m.u.values()) if m.u else 0  # a fused group runs at its own cost
    for d in range(len(m.p.devices)):
        on_d = [v for v in m.W if (v, d) in m.y and np.isfinite(m.cost[v, d])]
        if not on_d:
            continue
        free = float(m.tl.dev_free[d])
        head = {v: max(free, m.rel[v]) for v in on_d}
        load = {v: float(m.cost[v, d]) * m.y[v, d] + pulp.lpSum(m.recv_on[v, d]) for v in on_d}
        for r in sorted(set(head.values())):
            later = [v for v in on_d if head[v] >= r]
            m.lp += (
                r + pulp.lpSum(load[v] for v in later) + min(m.after[v] for v in later) - relax
                <= m.C
            )


def symmetry_cuts(m, classes: list[list[int]]) -> None:
    """For interchangeable devices ``a < b`` (consecutive in a class), ``b``'s first node
    comes after ``a``'s first node in the window's order."""
    for cls in classes:
        for a, b in itertools.pairwise(cls):
            seen = []
            for v in m.W:
                if (v, b) in m.y:
                    m.lp += m.y[v, b] <= pulp.lpSum(seen)
                if (v, a) in m.y:
                    seen.append(m.y[v, a])


def canonical_devices(W: list[int], dev: dict[int, int], classes) -> dict[int, int]:
    """``dev`` relabelled within each class of interchangeable devices so that the class's
    devices are first used in ascending order (what ``symmetry_cuts`` keeps)."""
    out = dict(dev)
    for cls in classes:
        used = []
        for v in W:
            if dev[v] in cls and dev[v] not in used:
                used.append(dev[v])
        order = used + [d for d in cls if d not in used]
        relabel = dict(zip(order, cls, strict=True))
        for v in W:
            if dev[v] in relabel:
                out[v] = relabel[dev[v]]
    return out
