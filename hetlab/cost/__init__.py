"""Costs: the problem format (spec §2), the profiler and the link calibrator; the profiles
that ship with the repository (HOPE's phones, hetlab's machines), queue views and what-if
platforms derived from a problem."""

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
    "cpu_model",
    "load_hope_profile",
    "load_measured_profile",
    "only_devices",
    "profile",
    "spearman",
    "what_if",
    "with_queues",
]

# imported on first use: the profiler and its helpers load numpy and the device interface
_LAZY = {
    "profile": "hetlab.cost.profiler",
    "load_hope_profile": "hetlab.cost.datasets",
    "load_measured_profile": "hetlab.cost.datasets",
    "HOPE_DIR": "hetlab.cost.datasets",
    "only_devices": "hetlab.cost.queues",
    "with_queues": "hetlab.cost.queues",
    "what_if": "hetlab.cost.whatif",
    "spearman": "hetlab.cost.stats",
    "cpu_model": "hetlab.cost.platform_info",
}


__getattr__ = lazy_names(__name__, _LAZY)
