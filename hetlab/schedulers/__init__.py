"""Scheduling algorithms behind one interface (``schedule``), the simulator and bounds; the
pieces the algorithms are built from: ranks (HEFT's upward rank, PEFT's optimistic cost
table), HOPE's partition into subgraphs and its merging of nodes into super-ops."""

from __future__ import annotations

from hetlab.lazy import lazy_names
from hetlab.schedulers.base import (
    REGISTRY,
    Param,
    algorithm,
    algorithms,
    defaults,
    param,
    schedule,
)
from hetlab.schedulers.bounds import lower_bound, validate_plan

# eager: a lazy ``partition`` would be shadowed by its module once that is imported
from hetlab.schedulers.partition import partition
from hetlab.schedulers.plan import Assignment, Plan
from hetlab.schedulers.sim import Timing, simulate

__all__ = [
    "REGISTRY",
    "Assignment",
    "Param",
    "Plan",
    "Timing",
    "algorithm",
    "algorithms",
    "defaults",
    "lower_bound",
    "mean_costs",
    "merge_superops",
    "optimistic_cost_table",
    "param",
    "partition",
    "rank_oct",
    "schedule",
    "simulate",
    "upward_rank",
    "validate_plan",
]

# imported on first use: the ranks are needed by a few algorithms only, and an algorithm's
# module registers it, which the registry does only when it is asked for (base.MODULES)
_LAZY = {
    "mean_costs": "hetlab.schedulers.ranks",
    "optimistic_cost_table": "hetlab.schedulers.ranks",
    "rank_oct": "hetlab.schedulers.ranks",
    "upward_rank": "hetlab.schedulers.ranks",
    "merge_superops": "hetlab.schedulers.greedy",
}


__getattr__ = lazy_names(__name__, _LAZY)
