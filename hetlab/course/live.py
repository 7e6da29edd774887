"""Cells that measure the machine they run on, with a shipped profile to fall back on.

A course notebook must run on any machine: a measurement that fails, or gives costs no
scheduler can use (a device missing, a zero or non-finite time), is replaced by a profile
shipped in ``data/profiles``, and the cell says so in its output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from hetlab.cost.datasets import load_measured_profile
from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError

# what a measurement raises on a machine that lacks what it needs (a device, a runtime, time);
# anything else is a bug and surfaces
MEASUREMENT_ERRORS = (HetlabError, RuntimeError, OSError, ValueError, ArithmeticError)


def unusable_costs(problem: Problem, devices: Sequence[str]) -> str | None:
    """Why ``problem`` cannot stand for a measurement on ``devices``, or None if it can:
    every device is there with a positive total, and every operator has a finite cost on at
    least one of them."""
    missing = [d for d in devices if d not in problem.devices]
    if missing:
        return f"no device {missing[0]!r}"
    for n in problem.nodes:
        costs = [n.cost.get(d) for d in devices]
        if not any(c is not None and math.isfinite(c) and c >= 0 for c in costs):
            return f"operator {n.id!r} has no finite cost"
    for d in devices:
        total = sum(c for n in problem.nodes if (c := n.cost.get(d)) is not None)
        if not total > 0:
            return f"no time measured on {d}"
    return None


def fallback_note(what: str, why: str, instead: str) -> str:
    """The line a cell prints when it uses a shipped profile instead of this machine."""
    return f"⚠ {what} gave no usable result on this machine ({why}); using {instead} instead."


def measured_or_shipped(
    measure: Callable[[], Problem],
    devices: Sequence[str],
    shipped: tuple[str, str],
    what: str = "the measurement",
) -> tuple[Problem, bool]:
    """``measure()``'s profile and True when it is usable on ``devices`` (see
    ``unusable_costs``); else the shipped profile ``(platform, model)`` and False, after one
    printed line that says why. A measurement error (``MEASUREMENT_ERRORS``) counts as no
    usable result: the point of the cell is the profile, not this machine's failure."""
    why = None
    try:
        got: Any = measure()
        why = unusable_costs(got, devices)
    except MEASUREMENT_ERRORS as e:
        why = f"{type(e).__name__}: {str(e)[:120]}"
    if why is None:
        return got, True
    platform, model = shipped
    print(fallback_note(what, why, f"the profile shipped in data/profiles/{platform}/{model}"))
    return load_measured_profile(platform, model), False
