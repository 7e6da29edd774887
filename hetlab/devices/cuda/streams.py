"""The parts a CUDA device supplies to measure its streams (``queue_measures.py``), inside
CUDA graphs, the way ``graph.py`` runs a plan.

The chain is ``tick``, a tiny kernel, captured ``n`` times into one graph on one stream, or
alternating over two streams with each launch after an event of the other; the whole graph
is launched at once, and the host's cost of that launch is an empty graph's. Copies of a
model are captured into one graph, one stream per copy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hetlab.devices.cuda.blas import uses_blas
from hetlab.devices.queue_measures import ChainTimers, QueueMeasures, Timer

TICK = r"""
extern "C" __global__ void tick(float *a, const int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * 0.5f + 1.0f;
}
"""


def _captured(device: Any, streams: Sequence[Any], record: Callable[[Any], None]) -> Any:
    """A graph captured on a stream of its own that forks to ``streams``, runs
    ``record(stream)`` on each, and joins them again."""
    cp = device.cp
    origin = cp.cuda.Stream(non_blocking=True)
    origin.begin_capture()
    try:
        start = origin.record()
        for s in streams:
            s.wait_event(start)
            record(s)
            origin.wait_event(s.record())
    finally:
        graph = origin.end_capture()
    return graph, origin


class _Launch:
    """One launch of ``graph`` on ``stream``, waited for, timed on the host. It keeps
    ``holds`` alive: what the graph's kernels read and write, which nothing else may keep."""

    def __init__(self, device: Any, graph: Any, stream: Any, holds: Any = None) -> None:
        self.device, self.graph, self.stream, self.holds = device, graph, stream, holds

    def __call__(self) -> float:
        with self.device.cp.cuda.Device(self.device.index):
            t0 = time.perf_counter()
            self.graph.launch(stream=self.stream)
            self.stream.synchronize()
            return time.perf_counter() - t0


class CudaStreams(QueueMeasures):
    """A CUDA device's parts (``device``: a ``CudaDevice``)."""

    def chain_timers(self, device: Any, n: int) -> ChainTimers:
        cp = device.cp
        with cp.cuda.Device(device.index):
            tick = cp.RawKernel(TICK, "tick")
            buf = cp.zeros(64, dtype=cp.float32)
            one, two = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)

            def chain(streams: list[Any]) -> Callable[[Any], None]:
                def record(_s: Any) -> None:
                    last = None
                    for i in range(n):
                        s = streams[i % len(streams)]
                        if last is not None and len(streams) > 1:
                            s.wait_event(last)
                        with s:
                            tick((1,), (64,), (buf, np.int32(64)))
                        last = s.record()
                    if len(streams) > 1:
                        one.wait_event(last)

                return record

            single = _Launch(device, *_captured(device, [one], chain([one])), holds=(tick, buf))
            alternate = _Launch(
                device, *_captured(device, [one], chain([one, two])), holds=(tick, buf)
            )
            empty = _Launch(device, *_captured(device, [one], lambda s: None))
        return ChainTimers(single, alternate, empty, launched_at_once=True)

    def copies_timer(self, queues: Sequence[Any], units: Sequence[Any], which: list[int]) -> Timer:
        dev = queues[0]
        launches = {id(queues[i].stream): units[i].handle.launches for i in which}

        def record(stream: Any) -> None:
            with stream:
                for L in launches[id(stream)]:
                    L.kernel.launch(L.gsize, L.lsize)

        with dev.cp.cuda.Device(dev.index):
            if any(uses_blas(units[i].handle.launches) for i in which):
                dev.blas.ready(queues[i].stream for i in which)
            graph, origin = _captured(dev, [queues[i].stream for i in which], record)
        return _Launch(dev, graph, origin, holds=units)


MEASURES = CudaStreams()
