"""HEFT: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, "Performance-effective and
low-complexity task scheduling for heterogeneous computing", IEEE TPDS 13(3), 2002).

Nodes are taken by decreasing upward rank (``ranks.upward_rank``: mean cost over the devices
that support a node, mean transfer over device pairs) and each goes to the device that finishes
it earliest. Costs are the real per-device times of the problem (not cost / speed).

Deviation from the paper: no insertion into idle gaps. The simulator (spec §3) times a plan
from its per-device order with blocking receives, so we place each node after the last one on
its device; the finish times HEFT computes are then exactly the simulated ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import Decision, register
from hetlab.schedulers.ranks import priority_order, upward_rank
from hetlab.schedulers.timeline import Timeline


@register("heft", "HEFT (Topcuoglu et al., 2002)")
def heft(problem: Problem, progress: Any = None) -> Decision:
    """Rank by rank_u, place each node on its earliest-finish device (non-insertion)."""
    tl = Timeline(problem)
    for v in priority_order(problem, upward_rank(problem)):
        tl.place(v, int(np.argmin(tl.eft(v))))
    return tl.decision()
