"""The constraints only ``ilp+`` asks of one HOPE window's ILP (``ilp_model``), both off in a
plain ``WindowSpec``: PartitionTuner's fused groups as an extra choice (``groups``), and the
remaining work spread over the devices (``rest_work``). ``m`` is an ``ilp_model._Model``
during ``build``; ``recv`` its blocking receives per node (eq. 1)."""

from __future__ import annotations

import numpy as np
import pulp


def group_constraints(m, recv: dict[int, list]) -> None:
    """ilp+ with groups: a chosen group's members share device, start and finish."""
    y, s, f, M = m.y, m.s, m.f, m.H
    for gi, (mem, gcost) in enumerate(m.spec.groups):
        off = 1 - m.u[gi]
        first, last = mem[0], mem[-1]
        work = pulp.lpSum(
            float(gcost[d]) * y[first, d] for d in m.allowed[first] if np.isfinite(gcost[d])
        )
        m.lp += f[last] >= s[first] + work + pulp.lpSum(r for x in mem for r in recv[x]) - M * off
        for d in m.allowed[first]:
            if not np.isfinite(gcost[d]):
                m.lp += y[first, d] <= off
        for x in mem[1:]:
            for d in range(len(m.p.devices)):
                a, b = y.get((x, d), 0), y.get((first, d), 0)
                m.lp += a - b <= off
                m.lp += b - a <= off
        for x in mem:
            m.lp += s[x] - s[first] <= M * off
            m.lp += s[first] - s[x] <= M * off
            m.lp += f[x] - f[last] <= M * off
            m.lp += f[last] - f[x] <= M * off


def rest_balance(m) -> None:
    """ilp+ with ``rest_work``: C >= (sum over devices of the last finish + rest) / #dev."""
    rest, tl, nd = m.spec.rest_work, m.tl, len(m.p.devices)
    if rest is None:
        return
    free = [float(tl.dev_free[d]) for d in range(nd)]
    # a device may become free only after the horizon (the window need not use it)
    last = [
        pulp.LpVariable(f"L_{d}", lowBound=free[d], upBound=max(m.H, free[d])) for d in range(nd)
    ]
    for (v, d), var in m.y.items():
        m.lp += last[d] >= m.f[v] - (m.H - m.rel[v]) * (1 - var)
    m.lp += nd * m.C >= pulp.lpSum(last) + float(rest)
    sp = m.spec
    for d in range(nd):
        last[d].setInitialValue(
            max([free[d]] + [sp.warm_finish[v] for v in m.W if m.warm_dev[v] == d])
        )
    m.warm_obj = max(m.warm_obj, (sum(x.varValue for x in last) + rest) / nd)
