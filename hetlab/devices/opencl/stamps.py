"""Launch stamps on the device clock as node times on hetlab's clock.

In a run that times its nodes every launch returns an event. A run notes ``perf_counter()`` just
before its first enqueue (``t0``); the first event's ``CL_PROFILING_COMMAND_QUEUED`` stamp
(``ref``) is the device-clock time of that same moment, so a device stamp ``s`` (ns) maps to
``t0 + (s - ref) * 1e-9`` seconds on hetlab's clock. The error is the duration of one enqueue
call (microseconds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetlab.devices.kernels.launches import node_times
from hetlab.timeline import Interval


def launch_spans(
    launches: Sequence[Any], events: Sequence[Any], ref: int, t0: float, end: float
) -> dict[str, list[float]]:
    """Per node, the interval its launches cover on hetlab's clock: each launch's event's
    start and end stamps mapped from ``ref`` at ``t0``, kept within ``[t0, end]``."""
    span: dict[str, list[float]] = {}
    for launch, ev in zip(launches, events, strict=True):
        a = min(max(t0 + (ev.profile.start - ref) * 1e-9, t0), end)
        b = min(max(t0 + (ev.profile.end - ref) * 1e-9, a), end)
        cur = span.get(launch.node)
        span[launch.node] = [a, b] if cur is None else [min(cur[0], a), max(cur[1], b)]
    return span


def run_node_times(
    h: Any, events: Sequence[Any], t0: float, t1: float, device: str
) -> list[Interval]:
    """The node times of one run of a unit on ``device`` from ``t0`` to ``t1``
    (``OpenCLDevice.run``), its stamps mapped from its first event's; a node with no launch
    sits at ``t0``."""
    if not events:
        return []
    span = launch_spans(h.launches, events, events[0].profile.queued, t0, t1)
    return node_times(h, span, t0, device)
