"""What CUDA's timings read: a captured graph's launch timed on the host (the profiler's
timer of a unit) and a run's node intervals from the CUDA events around its launches."""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.launches import node_times
from hetlab.devices.unit import node_time, now
from hetlab.timeline import Interval


class GraphTimer:
    """One launch of a captured graph, timed on the host. It holds what the graph points
    into (the unit, its handle, its input buffers), which nothing else may keep alive."""

    def __init__(self, graph: Any, stream: Any, holds: tuple[Any, ...]) -> None:
        self.graph, self.stream, self.holds = graph, stream, holds

    def __call__(self) -> float:
        t0 = now()
        self.graph.launch(stream=self.stream)
        self.stream.synchronize()
        return now() - t0


def launch_node_times(
    cp: Any, h: Any, marks: list[Any], t0: float, t1: float, device: str
) -> list[Interval]:
    """Per node, the span of its launches on ``device``, from the CUDA events around each
    launch."""
    if len(marks) < 2:
        return [node_time(device, nid, t0, t0) for nid in h.node_ids]
    span: dict[str, list[float]] = {}
    for i, L in enumerate(h.launches):
        a = t0 + cp.cuda.get_elapsed_time(marks[0], marks[i]) * 1e-3
        b = t0 + cp.cuda.get_elapsed_time(marks[0], marks[i + 1]) * 1e-3
        a, b = min(a, t1), min(max(b, a), t1)
        cur = span.get(L.node)
        span[L.node] = [a, b] if cur is None else [min(cur[0], a), max(cur[1], b)]
    return node_times(h, span, t0, device)
