"""Which ops two plans place on different devices, and both Gantts with those ops marked."""

from __future__ import annotations

from collections import Counter
from typing import Any

import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import as_bars
from hetlab.viz.gantt import compare_figure


def moved_ops(plan_a: Any, plan_b: Any) -> dict[str, tuple[str, str]]:
    """node -> (device in ``plan_a``, device in ``plan_b``) for every node the two plans
    (``Plan`` or plan JSON) place on different devices."""
    a = {r.name: r.device for r in as_bars(plan_a).rows}
    b = {r.name: r.device for r in as_bars(plan_b).rows}
    if set(a) != set(b):
        only = sorted(set(a) ^ set(b))
        raise HetlabError(
            f"the plans cover different nodes ({len(only)} in one only, e.g. {only[0]!r}):"
            " are they plans of the same problem?"
        )
    return {v: (a[v], b[v]) for v in a if a[v] != b[v]}


def diff_summary(moved: dict[str, tuple[str, str]], total: int) -> str:
    """``"7 of 120 ops placed differently: cpu→gpu ×5, gpu→cpu ×2"``."""
    if not moved:
        return f"both plans place all {total} ops on the same devices"
    ways = Counter(f"{a}→{b}" for a, b in moved.values())
    text = ", ".join(f"{w} ×{k}" for w, k in sorted(ways.items(), key=lambda x: (-x[1], x[0])))
    return f"{len(moved)} of {total} ops placed differently: {text}"


def plan_diff_figure(
    plan_a: Any,
    plan_b: Any,
    problem: Any = None,
    titles: tuple[str, str] | None = None,
    *,
    color: str = "op",
    height: int | None = None,
    width: int | None = None,
) -> go.Figure:
    """``plan_a`` above ``plan_b`` on one ms axis, each op placed differently outlined and
    crossed in both (trace "moved"); the title counts them by direction."""
    moved = moved_ops(plan_a, plan_b)
    back = {v: (b, a) for v, (a, b) in moved.items()}
    total = len(as_bars(plan_a).rows)
    return compare_figure(
        [plan_a, plan_b],
        list(titles) if titles else None,
        problem,
        color,
        height,
        width=width,
        moved=[back, moved],
        title=diff_summary(moved, total),
    )
