"""Costs: the problem format (spec §2), the profiler and the link calibrator."""

from hetlab.cost.problem import Group, Link, PEdge, PNode, Problem

__all__ = ["Group", "Link", "PEdge", "PNode", "Problem", "profile"]


def __getattr__(name: str):
    if name == "profile":
        from hetlab.cost.profiler import profile

        return profile
    raise AttributeError(name)
