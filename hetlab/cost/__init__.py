"""Costs: the problem format (spec §2), the profiler and the link calibrator."""

from __future__ import annotations

import importlib

from hetlab.cost.problem import Group, Link, PEdge, PNode, Problem

__all__ = [
    "Group",
    "Link",
    "PEdge",
    "PNode",
    "Problem",
    "cpu_model",
    "load_hope_profile",
    "only_devices",
    "profile",
    "spearman",
]

# imported on first use: the profiler and its helpers load numpy and the device interface
_LAZY = {
    "profile": "hetlab.cost.profiler",
    "load_hope_profile": "hetlab.cost.datasets",
    "only_devices": "hetlab.cost.queues",
    "spearman": "hetlab.cost.stats",
    "cpu_model": "hetlab.cost.platform_info",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hetlab.cost' has no attribute {name!r}")
