"""What passing work between two streams of one CUDA device costs, and how much copies of a
model slow each other, measured inside CUDA graphs (the way ``graph.py`` runs
a plan). The CUDA counterpart of ``devices/opencl/queues.py``, with the same keys:

- ``queue_costs``: ``event_ms``, what a kernel waiting on an event of the other stream adds
  to a graph of ``n`` dependent tiny kernels over the same chain on one stream;
  ``launch_ms``, one graph launch on the host; ``chain_ms``, one kernel of the chain;
- ``model_slowdown``: one copy of the model in a graph, against one copy per stream in one
  graph; ``slowdown`` = together / single.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

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


def _timed(graph: Any, stream: Any, rounds: int) -> float:
    graph.launch(stream=stream)
    stream.synchronize()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        graph.launch(stream=stream)
        stream.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def queue_costs(device: Any, n: int = 200, rounds: int = 7) -> dict[str, float]:
    """``{"launch_ms", "event_ms", "chain_ms"}`` for ``device`` (a ``CudaDevice``)."""
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

        single = _timed(*_captured(device, [one], chain([one])), rounds)
        alternate = _timed(*_captured(device, [one], chain([one, two])), rounds)
        empty = _timed(*_captured(device, [one], lambda s: None), rounds)
    return {
        "launch_ms": round(empty * 1e3, 5),
        "event_ms": round(max(0.0, (alternate - single) / (n - 1)) * 1e3, 5),
        "chain_ms": round(max(0.0, single - empty) / n * 1e3, 5),
    }


def model_slowdown(streams: list[Any], graph: Any, rounds: int = 5) -> dict[str, float]:
    """How much a copy of the model runs slower beside copies on the other streams (as
    ``opencl.queues.model_slowdown``, each side one captured graph)."""
    dev = streams[0]
    nodes = [n.id for n in graph.nodes if dev.supports(n, graph)]
    units = [s.prepare(graph, nodes) for s in streams]
    rng = np.random.default_rng(0)
    for s, unit in zip(streams, units, strict=True):
        for name in unit.inputs:
            t = graph.tensors[name]
            host = rng.standard_normal(t.shape or ()).astype(t.dtype)
            unit.handle.bind(name, s.copy_in(host))
    launches = {id(s.stream): u.handle.launches for s, u in zip(streams, units, strict=True)}

    def record(stream: Any) -> None:
        with stream:
            for L in launches[id(stream)]:
                L.kernel.launch(L.gsize, L.lsize)

    with dev.cp.cuda.Device(dev.index):
        single = _timed(*_captured(dev, [streams[0].stream], record), rounds)
        together = _timed(*_captured(dev, [s.stream for s in streams], record), rounds)
    return {
        "single_ms": round(single * 1e3, 4),
        "together_ms": round(together * 1e3, 4),
        "slowdown": round(max(1.0, together / single), 4),
    }
