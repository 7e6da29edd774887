"""In-context correction: isolated op costs rescaled by measured windows of consecutive ops.

An op run alone pays what it would not pay inside a longer unit: onnxruntime's CPU provider
turns Convs into its blocked NCHWc layout and, in a one-op session, converts the input and the
output around every Conv (ReorderInput/ReorderOutput), and it cannot fuse a Relu into the Conv
before it. Inside the model the tensors stay blocked and the Relu is free. On squeezenet that
makes the sum of isolated costs about twice the whole-model time.

So, besides each op alone, the profiler measures *windows*: runs of ``size`` consecutive
vertices in topological order, each as one unit. A window's measured time, divided by the sum of
its members' isolated costs, is a factor applied to those members. Relative costs inside a
window stay as measured in isolation; across windows they follow the windows' measured times.
This is the "measure ops in batches" variant of removing per-unit overheads (spec §2 costs
stay measured medians; ``stats`` keeps the isolated ones and ``context`` the factor).
"""

from __future__ import annotations

from hetlab.graph.ir import OpGraph

MIN_FACTOR, MAX_FACTOR = 0.2, 5.0


def windows(graph: OpGraph, size: int) -> list[list[str]]:
    """Consecutive chunks of ``size`` vertices of the topological order (the last may be shorter)."""
    if size <= 1:
        return []
    order = graph.topo_order()
    return [order[i : i + size] for i in range(0, len(order), size)]


def factors(win_ms: float | None, iso_ms: list[float | None]) -> float | None:
    """The factor for one window: its time over its members' isolated costs (clamped), or None
    when the window or a member was not measured."""
    if win_ms is None or any(c is None for c in iso_ms):
        return None
    total = sum(c for c in iso_ms if c is not None)
    if total <= 0:
        return None
    return min(MAX_FACTOR, max(MIN_FACTOR, win_ms / total))
