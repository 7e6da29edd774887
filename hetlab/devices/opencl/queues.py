"""The parts an OpenCL device supplies to measure its queues (``queue_measures.py``).

The chain is ``tick``, a tiny kernel, enqueued ``n`` times in order, each launch after the
last where the chain alternates over two queues; the host's cost of one launch is its
enqueue time over ``n``. Copies of a model are enqueued on queues without profiling, as timed
runs are, one launch of each copy in turn. A device whose event waits resolve on the host
shows it in ``event_ms``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.queue_measures import ChainTimers, QueueMeasures, Timer

TICK = """
__kernel void tick(__global float *a, const int n) {
    int i = get_global_id(0);
    if (i < n) a[i] = a[i] * 0.5f + 1.0f;
}
"""


class _Ticks:
    """The ``tick`` kernel on a buffer of its own, which it keeps alive (the kernel's
    argument does not)."""

    def __init__(self, device: Any) -> None:
        cl, ctx = device.cl, device.ctx
        self.cl = cl
        self.kernel = cl.Kernel(cl.Program(ctx, TICK).build(), "tick")
        self.buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * 4)
        self.kernel.set_args(self.buf, np.int32(64))

    def chain(self, queues: list[Any], n: int) -> tuple[float, float]:
        """(enqueue seconds, total seconds) of ``n`` dependent ticks alternating over
        ``queues``."""
        cl = self.cl
        t0 = time.perf_counter()
        last = None
        for i in range(n):
            q = queues[i % len(queues)]
            wait = [last] if last is not None and len(queues) > 1 else None
            last = cl.enqueue_nd_range_kernel(q, self.kernel, (64,), None, wait_for=wait)
        t1 = time.perf_counter()
        for q in queues:
            q.finish()
        return t1 - t0, time.perf_counter() - t0


class OpenCLQueues(QueueMeasures):
    """An OpenCL device's parts (``device``: an ``OpenCLDevice``)."""

    def chain_timers(self, device: Any, n: int) -> ChainTimers:
        ticks = _Ticks(device)
        one = [device.cl.CommandQueue(device.ctx)]
        two = [one[0], device.cl.CommandQueue(device.ctx)]
        return ChainTimers(
            single=lambda: ticks.chain(one, n)[1],
            alternate=lambda: ticks.chain(two, n)[1],
            launch=lambda: ticks.chain(one, n)[0] / n,
        )

    def copies_timer(self, queues: Sequence[Any], units: Sequence[Any], which: list[int]) -> Timer:
        cl = queues[0].cl
        plain = [q.plain_queue for q in queues]  # timed without profiling, as runs are

        def go() -> float:
            t0 = time.perf_counter()
            launches = [units[i].handle.launches for i in which]
            for k in range(max(len(ls) for ls in launches)):
                for i, ls in zip(which, launches, strict=True):
                    if k < len(ls):
                        L = ls[k]
                        cl.enqueue_nd_range_kernel(plain[i], L.kernel, L.gsize, L.lsize)
            for i in which:
                plain[i].finish()
            return time.perf_counter() - t0

        return go


MEASURES = OpenCLQueues()
