"""PEFT: Predict Earliest Finish Time (Arabnejad & Barbosa, "List scheduling algorithm for
heterogeneous systems by an optimistic cost table", IEEE TPDS 25(3), 2014).

The optimistic cost table OCT(v, d) (``ranks.optimistic_cost_table``) gives each node's
priority, rank_oct = its mean OCT over the devices that support it (over all devices where
every device runs every node, as in the paper); among the ready nodes the one of highest
rank_oct goes next, to the device minimising the optimistic EFT, O_EFT(v, d) = EFT(v, d) +
OCT(v, d). EFT uses the insertion-based policy (``timeline.GapTimeline``): the first idle gap
of the device, from the time the node's predecessors have finished, that holds its receives
and its compute. Costs are the real per-device times of the problem.

Ties: ready nodes of equal rank_oct go in the order of ``problem.topo`` (the stable
topological order of the problem's node list); an O_EFT tie goes to the first device in
``problem.devices``. The paper leaves ties open. They are common: OCT leaves out a node's own
cost, so siblings whose only successor is shared have the same rank_oct. saga (anrg-saga)
breaks them by a networkx topological order built from frozensets, so on such instances its
schedule can differ from ours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import register
from hetlab.schedulers.incremental import GapTimeline
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.ranks import optimistic_cost_table, priority_order, rank_oct


def peft_timeline(problem: Problem, order: list[int] | None = None) -> GapTimeline:
    """PEFT's placements: the nodes in ``order`` (by default the ready list by rank_oct, ties
    in ``problem.topo`` order), each on the device of least EFT + OCT, gaps included. Another
    topological ``order`` replays PEFT with its rank_oct ties taken otherwise."""
    table = optimistic_cost_table(problem)
    if order is None:
        order = priority_order(problem, rank_oct(problem, table))
    tl = GapTimeline(problem)
    for v in order:
        tl.place(v, int(np.argmin(tl.eft(v) + table[v])))
    return tl


@register("peft", "PEFT (Arabnejad & Barbosa, 2014), insertion-based")
def peft(problem: Problem, progress: Any = None) -> Plan:
    """Ready list by rank_oct; each node to the device of least EFT + OCT, gaps included."""
    return peft_timeline(problem).plan("peft")
