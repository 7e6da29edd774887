"""One CUDA graph per run: a plan's units on one CUDA device and its streams, captured once.

The units a plan places on a CUDA device and on its stream views (``cuda0``, ``cuda0.q1``...)
run together: their nodes are built as one program on the device: the same kernels,
fusions and elided Concats as the one-device build. The first run captures it into a CUDA
graph, each launch on the stream of its node's device, in the plan's order, after the
events of the launches on other streams that make what it reads (``launch_deps.py``). Every
run writes the model inputs into fixed device buffers, launches the graph once and reads back
what the host needs, all on one stream, and waits once. So the host pays one graph launch
per run, not one launch per kernel, and the streams' units overlap on the GPU as far as the
plan's dependencies let them.

The runner takes them when the plan is not sequential, no node timeline is asked for (a
graph is not timed per kernel), and every input of its units that comes from outside them
is a model input (a CPU unit's output would need the host inside the graph). Otherwise the
devices run unit by unit (``CudaDevice.run``).

Unit intervals: a unit runs from the graph's launch to the run's end as far as the host
can tell, and its event says so (``"approx": True``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.buffer_pool import BufferPool
from hetlab.devices.cuda.blas import uses_blas
from hetlab.devices.cuda.launch_deps import issue_order, launch_waits
from hetlab.devices.runner import Event, QueueRunner, RunContext, one_queue
from hetlab.devices.unit import now


class GraphRunner(QueueRunner):
    """The units of one CUDA device and its streams, run as one captured graph."""

    def __init__(self, ctx: RunContext, names: Sequence[str]) -> None:
        super().__init__(ctx, names)
        self.cp = self.root.cp
        plan, routes = ctx.plan, ctx.routes
        needed = self.needed_outside()
        self.reads = [t for s in self.specs for t in routes.publish[s.index] if t in needed]
        self.inputs = sorted(
            {t for s in self.specs for t in ctx.units[s.index].inputs if t not in routes.producer}
        )
        nodes = [v for s in self.specs for v in s.nodes]
        with self.cp.cuda.Device(self.root.index):
            self.program = self.root.prepare(plan.graph, nodes).handle
        stream_of = {v: plan.device_of[v] for v in nodes}
        launches, fused = self.program.launches, self.program.fused
        self.issue = issue_order(launches, fused, plan.order)
        rank = {i: k for k, i in enumerate(self.issue)}
        self.waits = launch_waits(
            plan.graph, launches, fused, stream_of, [rank[i] for i in range(len(launches))]
        )
        self.stream_of = [stream_of[L.node] for L in launches]
        self.pool = BufferPool(self.root)  # the model inputs' buffers the graph reads
        self.staged: dict[str, np.ndarray] = {}  # their page-locked host copies
        self.graph: Any = None
        self.span: tuple[float, float] | None = None  # the last run's interval
        with self.cp.cuda.Device(self.root.index):
            self.stream = self.cp.cuda.Stream(non_blocking=True)
        self.done = threading.Event()

    @classmethod
    def fits(cls, ctx: RunContext, names: Sequence[str]) -> bool:
        """Whether the units on ``names`` (one CUDA device) can run as one captured graph: a
        sequential plan only where it is all on one stream."""
        if ctx.node_times:
            return False
        specs = [s for s in ctx.specs if s.device in names]
        if ctx.plan.sequential and not one_queue(ctx.specs, specs):
            return False
        mine = {s.index for s in specs}
        for s in specs:
            for t in ctx.units[s.index].inputs:
                p = ctx.routes.producer.get(t)
                if p is not None and p not in mine:
                    return False
        return True

    def start_run(self) -> dict[int, threading.Event]:
        """One fresh done-event for every unit of the runner (the executor's protocol for
        its workers): the graph makes them all at once."""
        self.done = threading.Event()
        self.span = None
        return {s.index: self.done for s in self.specs}

    def abort(self) -> None:
        """Nothing waits inside a graph on the host: nothing to let go."""

    def run(self) -> None:
        """Write the inputs, launch the graph (captured on the first run), read back."""
        live, cp = self.ctx.live, self.cp
        t0 = now()
        with cp.cuda.Device(self.root.index):
            self._write_inputs()
            if self.graph is None:
                self._capture()
            self.graph.launch(stream=self.stream)
            outs = {}
            for t in self.reads:
                buf = self.program.result(t)
                out = np.empty(buf.shape, dtype=buf.dtype)
                if out.size:
                    buf.buf[: out.size].get(stream=self.stream, out=out.reshape(-1))
                outs[t] = out
            self.stream.synchronize()
        end = now()
        for t, out in outs.items():
            live.host[t] = out
            live.published(t)
        self.span = (t0, end)
        self.done.set()

    def events(self) -> list[Event]:
        """The last run's unit events, made once the run is timed: a plan of hundreds of
        units would otherwise time the host making them."""
        if self.span is None:
            return []
        ms, (t0, end) = self.ctx.live.ms, self.span
        return [
            Event(
                "unit",
                s.device,
                s.label,
                ms(t0),
                ms(end),
                {"unit": s.index, "nodes": len(s.nodes), "graph": True, "approx": True},
            )
            for s in self.specs
        ]

    def _write_inputs(self) -> None:
        """Each model input copied into page-locked host memory, then to its device buffer
        on the run's stream: a copy from pageable memory is a staged, blocking one, about
        twice as long for an image (docs/decisions.md#page-locked-inputs). The run waits for
        its stream before the next one overwrites the page-locked copy."""
        host_arrays = self.ctx.live.host
        for t in self.inputs:
            host = np.asarray(host_arrays[t])
            buf, new = self.pool.get(t, host.shape, str(host.dtype))
            if new:
                self.graph = None  # the captured graph reads the old buffer
                self.program.bind(t, buf)
            if host.size:
                staged = self._staging(t, host)
                buf.buf[: host.size].set(staged, stream=self.stream)

    def _staging(self, name: str, host: np.ndarray) -> np.ndarray:
        """``host``'s values in the page-locked array kept for input ``name``."""
        staged = self.staged.get(name)
        if staged is None or staged.size != host.size or staged.dtype != host.dtype:
            mem = self.cp.cuda.alloc_pinned_memory(max(host.nbytes, 1))
            staged = np.frombuffer(mem, dtype=host.dtype, count=host.size)
            self.staged[name] = staged
        np.copyto(staged, host.reshape(-1))
        return staged

    def _capture(self) -> None:
        """Record every launch on its node's stream, forked from and joined to ours; a launch
        first waits on the events of the launches on other streams it reads from."""
        st = self.stream
        streams = {d: dev.stream for d, dev in self.devs.items()}
        needed = {j for w in self.waits for j in w}
        done: dict[int, Any] = {}
        if uses_blas(self.program.launches):
            self.root.blas.ready(streams.values())
        st.begin_capture()
        try:
            start = st.record()
            for s in streams.values():
                s.wait_event(start)
            for i in self.issue:
                L = self.program.launches[i]
                stream = streams[self.stream_of[i]]
                for j in self.waits[i]:
                    stream.wait_event(done[j])
                with stream:
                    L.kernel.launch(L.gsize, L.lsize)
                if i in needed:
                    done[i] = stream.record()
            for s in streams.values():
                st.wait_event(s.record())
        finally:
            self.graph = st.end_capture()

    def release(self) -> None:
        self.graph = None
        self.staged.clear()
        self.pool.release()
        self.program = None
