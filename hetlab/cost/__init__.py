"""Costs: the problem format (spec §2); the profiles that ship with the repository (HOPE's
phones, hetlab's machines), queue views and what-if platforms derived from a problem; the
profile cache's store and the timing statistics. The profiler that measures a problem on
devices is a layer above (``hetlab.profiling``)."""

from __future__ import annotations

from hetlab.cost.problem import Group, Link, PEdge, PNode, Problem
from hetlab.lazy import lazy_names

__all__ = [
    "HOPE_DIR",
    "Group",
    "Link",
    "PEdge",
    "PNode",
    "Problem",
    "load_hope_profile",
    "load_measured_profile",
    "only_devices",
    "spearman",
    "what_if",
    "with_queues",
]

# imported on first use: a user loads only the modules of the names they reach
_LAZY = {
    "load_hope_profile": "hetlab.cost.datasets",
    "load_measured_profile": "hetlab.cost.datasets",
    "HOPE_DIR": "hetlab.cost.datasets",
    "only_devices": "hetlab.cost.queues",
    "with_queues": "hetlab.cost.queues",
    "what_if": "hetlab.cost.whatif",
    "spearman": "hetlab.cost.stats",
}


__getattr__ = lazy_names(__name__, _LAZY)
