"""HEFT: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu, "Performance-effective and
low-complexity task scheduling for heterogeneous computing", IEEE TPDS 13(3), 2002).

Nodes are taken by decreasing upward rank (``ranks.upward_rank``: mean cost over the devices
that support a node, mean transfer over device pairs) and each goes to the device that finishes
it earliest. Costs are the real per-device times of the problem (not cost / speed).

``heft`` is the paper's algorithm: a node's earliest start on a device is found with the
insertion-based policy, in the first idle gap of the device, from the time its predecessors
have finished, that holds it (``timeline.GapTimeline``). Under spec §3 a receive occupies the
receiving device, so the gap must hold the node's receives as well as its compute.

``heft-append`` is HEFT without insertion: each node goes after the last one on its device. It
is what ``heft`` was before it inserted; it can be longer (an idle gap stays idle) or, as list
scheduling has no monotonicity, occasionally shorter.

Ties, the same in both: nodes of equal rank go in the order of ``problem.topo`` (the stable
topological order of the problem's node list), and a node whose earliest finish ties on
several devices goes to the first of them in ``problem.devices``. The paper leaves ties open;
saga (anrg-saga) breaks rank ties by a networkx topological order and device ties by the
iteration order of a frozenset, so on an exact tie its schedule can differ from ours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import register
from hetlab.schedulers.incremental import GapTimeline, Timeline
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.ranks import priority_order, upward_rank


def heft_timeline(problem: Problem, insert: bool = True) -> Timeline:
    """HEFT's placements: the nodes by decreasing rank_u, each on its earliest-finish device,
    in an idle gap (``insert``) or after the last node there."""
    tl = GapTimeline(problem) if insert else Timeline(problem)
    for v in priority_order(problem, upward_rank(problem)):
        tl.place(v, int(np.argmin(tl.eft(v))))
    return tl


@register("heft", "HEFT (Topcuoglu et al., 2002), insertion-based")
def heft(problem: Problem, progress: Any = None) -> Plan:
    """Rank by rank_u, place each node on its earliest-finish device, gaps included."""
    return heft_timeline(problem).plan("heft")


@register("heft-append", "HEFT without insertion (each node after the last on its device)")
def heft_append(problem: Problem, progress: Any = None) -> Plan:
    """Rank by rank_u, append each node on its earliest-finish device (no idle-gap search)."""
    return heft_timeline(problem, insert=False).plan("heft-append")
