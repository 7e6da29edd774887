"""What a check says about a wrong answer: which way it is off and roughly by how much, never
the right value, and where an answer still has a ``...`` to fill in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def how_far(got: Any, want: Any) -> str:
    """``"too high (off by less than 10%)"``, ``"too low, less than half of it"``...: the
    direction of a wrong number and a coarse size of the error, which a student can act on
    without reading the right value back from it; ``"not right"`` for anything not a number."""
    try:
        g, w = float(got), float(want)
    except (TypeError, ValueError):
        return "not right"
    if g == w:
        return "right"
    way = "high" if g > w else "low"
    if w == 0:
        return f"too {way}"
    if (g < 0) != (w < 0) and g != 0:
        return "of the wrong sign"
    if g.is_integer() and w.is_integer() and abs(w) < 20:
        return f"too {way}"  # a small count or a level: a share of it says little
    ratio = g / w
    if ratio >= 2:
        return f"too {way}, more than twice what it should be"
    if ratio <= 0.5:
        return f"too {way}, less than half of what it should be"
    rel = abs(g - w) / abs(w)
    if rel < 0.1:
        return f"a little too {way} (off by less than 10%)"
    return f"too {way} (off by 10% or more)"


def early_or_late(got: Any, want: Any) -> str:
    """``how_far`` for times: "too early" / "too late" instead of low / high."""
    return how_far(got, want).replace("high", "late").replace("low", "early")


def first_gap(x: Any, where: str) -> str | None:
    """Where ``x`` still holds a ``...`` (or None), e.g. ``answer['rank_u']['C']``; None
    when it holds none."""
    if x is ... or x is None or x is NotImplemented:
        return where
    if isinstance(x, Mapping):
        items = ((f"{where}[{k!r}]", v) for k, v in x.items())
    elif isinstance(x, list | tuple):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(x))
    else:
        return None
    for at, v in items:
        gap = first_gap(v, at)
        if gap:
            return gap
    return None
