"""What passing work between two queues of one OpenCL device costs, measured on the device.

Two figures, each from a chain of ``n`` tiny dependent kernels (``tick``), medians over
``rounds``:

- ``launch_ms``: the host's time to enqueue one kernel on a queue without profiling;
- ``event_ms``: what a kernel waiting on an event of the other queue adds to the chain over
  the same chain on one in-order queue, the latency of a dependency between queues.

The problem charges ``event_ms`` to every tensor passed between two queues of one device
(``cost/queues.py``); a device whose event waits resolve on the host shows it here.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

TICK = """
__kernel void tick(__global float *a, const int n) {
    int i = get_global_id(0);
    if (i < n) a[i] = a[i] * 0.5f + 1.0f;
}
"""


def _chain(cl: Any, kernel: Any, queues: list[Any], n: int) -> tuple[float, float]:
    """(enqueue seconds, total seconds) of ``n`` dependent ticks alternating over ``queues``."""
    t0 = time.perf_counter()
    last = None
    for i in range(n):
        q = queues[i % len(queues)]
        wait = [last] if last is not None and len(queues) > 1 else None
        last = cl.enqueue_nd_range_kernel(q, kernel, (64,), None, wait_for=wait)
    t1 = time.perf_counter()
    for q in queues:
        q.finish()
    return t1 - t0, time.perf_counter() - t0


def queue_costs(device: Any, n: int = 200, rounds: int = 7) -> dict[str, float]:
    """``{"launch_ms", "event_ms", "chain_ms"}`` for ``device`` (an ``OpenCLDevice``)."""
    cl, ctx = device.cl, device.ctx
    kernel = cl.Kernel(cl.Program(ctx, TICK).build(), "tick")
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * 4)
    kernel.set_args(buf, np.int32(64))
    one = [cl.CommandQueue(ctx)]
    two = [one[0], cl.CommandQueue(ctx)]
    _chain(cl, kernel, one, n)  # warm up: build, first launches
    _chain(cl, kernel, two, n)
    single, alternate, launch = [], [], []
    for _ in range(rounds):
        enq, total = _chain(cl, kernel, one, n)
        single.append(total)
        launch.append(enq / n)
        alternate.append(_chain(cl, kernel, two, n)[1])
    s, a = statistics.median(single), statistics.median(alternate)
    return {
        "launch_ms": round(statistics.median(launch) * 1e3, 5),
        "event_ms": round(max(0.0, (a - s) / (n - 1)) * 1e3, 5),
        "chain_ms": round(s / n * 1e3, 5),
    }


def model_slowdown(queues: list[Any], graph: Any, rounds: int = 5) -> dict[str, float]:
    """How much a copy of the model runs slower beside copies on the other queues.

    The nodes the first queue's device supports are prepared once per queue; ``single_ms``
    is one copy alone (enqueue to finish), ``together_ms`` one copy on each queue, their
    launches enqueued in turn. ``slowdown`` = together / single: 1 where the device runs the
    copies side by side for free, ``len(queues)`` where they run one after another (a host
    bound by enqueueing, or a device already full)."""
    dev = queues[0]
    nodes = [n.id for n in graph.nodes if dev.supports(n, graph) and n.op_type != "If"]
    units = [q.prepare(graph, nodes) for q in queues]
    rng = np.random.default_rng(0)
    for q, unit in zip(queues, units, strict=True):
        for name in unit.inputs:
            t = graph.tensors[name]
            host = rng.standard_normal(t.shape or ()).astype(t.dtype)
            unit.handle.bind(name, q.copy_in(host))
    cl = dev.cl
    plain = [q._plain_queue for q in queues]  # timed without profiling, as runs are

    def go(which: list[int]) -> float:
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

    everyone = list(range(len(queues)))
    go([0]), go(everyone)
    single = statistics.median(go([0]) for _ in range(rounds))
    together = statistics.median(go(everyone) for _ in range(rounds))
    return {
        "single_ms": round(single * 1e3, 4),
        "together_ms": round(together * 1e3, 4),
        "slowdown": round(max(1.0, together / single), 4),
    }
