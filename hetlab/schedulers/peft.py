"""PEFT: Predict Earliest Finish Time (Arabnejad & Barbosa, "List scheduling algorithm for
heterogeneous systems by an optimistic cost table", IEEE TPDS 25(3), 2014).

The optimistic cost table OCT(v, d) (``ranks.optimistic_cost_table``) gives each node's
priority, rank_oct = its mean OCT over the devices that support it; among the ready nodes the
one of highest rank_oct goes next, to the device minimising EFT(v, d) + OCT(v, d) (the
"optimistic EFT"). Costs are the real per-device times of the problem.

Deviation from the paper: no insertion into idle gaps, for the same reason as in ``heft``: the
simulator (spec §3) times per-device orders with blocking receives, and with non-insertion
placement the EFTs computed here are exactly the simulated finish times.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import Decision, register
from hetlab.schedulers.ranks import optimistic_cost_table, priority_order, rank_oct
from hetlab.schedulers.timeline import Timeline


@register("peft", "PEFT (Arabnejad & Barbosa, 2014)")
def peft(problem: Problem, progress: Any = None) -> Decision:
    """Ready list by rank_oct; each node to the device of least EFT + OCT (non-insertion)."""
    table = optimistic_cost_table(problem)
    tl = Timeline(problem)
    for v in priority_order(problem, rank_oct(problem, table)):
        tl.place(v, int(np.argmin(tl.eft(v) + table[v])))
    return tl.decision()
