"""Scheduling algorithms behind one interface (``schedule``), the simulator and bounds."""

from hetlab.schedulers.base import (
    REGISTRY,
    Decision,
    Param,
    algorithm,
    algorithms,
    defaults,
    param,
    schedule,
)
from hetlab.schedulers.bounds import lower_bound, validate_plan
from hetlab.schedulers.plan import Assignment, Plan
from hetlab.schedulers.sim import Timing, simulate

__all__ = [
    "REGISTRY",
    "Assignment",
    "Decision",
    "Param",
    "Plan",
    "Timing",
    "algorithm",
    "algorithms",
    "defaults",
    "lower_bound",
    "param",
    "schedule",
    "simulate",
    "validate_plan",
]
