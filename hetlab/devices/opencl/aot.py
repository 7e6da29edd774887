"""Ahead-of-time enqueue: one host thread issues all of a run's work on one OpenCL device.

The units a plan places on an OpenCL device and on its queue views (``cl0``, ``cl0.q1``...:
one context, several in-order queues) run together. Each run enqueues them all in one
pass, in the plan's global order, and the host waits only where it needs a result:

- a unit's launches go to its own queue; the first waits on the last event of every unit on
  another of the context's queues that it reads from (its own queue is in order). Tensors
  pass between the queues as buffers, with no copy, bound as the run reaches them;
- a model input is written by a non-blocking copy on the queue of its first reader;
- a tensor a CPU worker produces is written from a host array the worker fills, by a copy
  that waits on a user event the worker sets (``published``): the GPU side never waits on
  the host thread that enqueued it;
- a tensor that a CPU worker or the host needs is read into a host array by a non-blocking
  copy; the CPU worker waits on that copy's event (``UnitDone.wait``, which releases the
  GIL), and the enqueuing thread waits for the model outputs' copies at the end.

Unit intervals: where the run times its nodes (``RunContext.node_times``) the queues profile,
and each unit's interval is its first launch's start and its last launch's end on the device
clock, mapped to the host clock as a run's node times are (``stamps.py``); without
profiling, a unit runs from its enqueue to the run's end as far as the host can tell, and its event says so
(``"approx": True``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.buffer_pool import BufferPool
from hetlab.devices.kernels.launches import node_times
from hetlab.devices.opencl.launcher import enqueue, enqueue_each
from hetlab.devices.opencl.stamps import launch_spans
from hetlab.devices.runner import Event, QueueRunner, RunContext, UnitSpec, one_queue
from hetlab.devices.unit import now
from hetlab.timeline import Interval


class UnitDone:
    """A runner's unit's waiter (``QueueRunner.start_run``): ``wait`` returns once the unit is
    enqueued and the copies of what it publishes have finished."""

    def __init__(self, cl: Any) -> None:
        self.cl = cl
        self.enqueued = threading.Event()
        self.events: list[Any] = []
        self.aborted = False

    def wait(self) -> None:
        self.enqueued.wait()
        if self.events and not self.aborted:
            self.cl.wait_for_events(self.events)

    def set(self) -> None:  # an aborted run releases every waiter
        self.aborted = True
        self.enqueued.set()

    def is_set(self) -> bool:
        return self.enqueued.is_set()


class AotRunner(QueueRunner):
    """The units of one OpenCL context, enqueued ahead of time by ``run`` on one thread."""

    def __init__(self, ctx: RunContext, names: Sequence[str]) -> None:
        super().__init__(ctx, names)
        self.cl = self.root.cl
        # the queues the run's launches go to: profiling ones where the run times its nodes
        self.queues = {d: dev.queue_for(ctx.node_times) for d, dev in self.devs.items()}
        self._classify()
        self.pool = BufferPool(self.root)  # tensor -> device buffer written from the host
        self.done: dict[int, UnitDone] = {}
        self.user: dict[str, Any] = {}
        self.aborted = False
        self.end: float | None = None  # the last run's end, once it ran to the end
        self.report: tuple[list[Event], dict[int, list[Interval]]] | None = None

    @classmethod
    def fits(cls, ctx: RunContext, names: Sequence[str]) -> bool:
        """Whether the units on ``names`` (one OpenCL context) can be enqueued ahead of time:
        not a sequential plan unless it is all on one queue, no unit with control flow (those
        run on the host), and every tensor a CPU device sends into them has a static shape
        (its host array exists before the CPU produces it)."""
        specs = [s for s in ctx.specs if s.device in names]
        if ctx.plan.sequential and not one_queue(ctx.specs, specs):
            return False
        for s in specs:
            if hasattr(ctx.units[s.index].handle, "executed_nodes"):
                return False
        mine = {s.index for s in specs}
        for s in specs:
            for t in ctx.units[s.index].inputs:
                p = ctx.routes.producer.get(t)
                if p is not None and p not in mine:
                    tensor = ctx.plan.graph.tensors.get(t)
                    if tensor is None or tensor.shape is None:
                        return False
        return True

    def _classify(self) -> None:
        """Per unit: inputs from the runner's own units and inputs from the host; per host input, the units
        that read it; per tensor published, whether the host needs it. A tensor a CPU worker
        sends gets its host array here (shapes are static) and a hook the worker calls once
        it has filled ``host``."""
        ctx, graph = self.ctx, self.ctx.plan.graph
        self.from_inside: dict[int, list[tuple[str, int]]] = {}
        self.from_host: dict[int, list[str]] = {}
        self.cpu_made: set[str] = set()
        for s in self.specs:
            inner, outer = [], []
            for t in ctx.units[s.index].inputs:
                p = ctx.routes.producer.get(t)
                if p in self.index:
                    inner.append((t, p))
                else:
                    outer.append(t)
                    if p is not None:
                        self.cpu_made.add(t)
            self.from_inside[s.index], self.from_host[s.index] = inner, outer
        self.host_readers: dict[str, list[int]] = {}
        for s in self.specs:
            for t in self.from_host[s.index]:
                self.host_readers.setdefault(t, []).append(s.index)
        self.staging = {
            t: np.empty(tuple(graph.tensors[t].shape), dtype=graph.tensors[t].dtype)
            for t in self.cpu_made
        }
        for t in self.cpu_made:
            ctx.live.on_publish[t] = self._publisher(t)
        needed = self.needed_outside()
        publish = ctx.routes.publish
        self.reads = {s.index: [t for t in publish[s.index] if t in needed] for s in self.specs}

    # --- one run ------------------------------------------------------------------------
    def start_run(self) -> dict[int, UnitDone]:
        """Before the workers start: a fresh ``UnitDone`` per unit and a user event per
        tensor a CPU worker sends into the runner."""
        cl = self.cl
        self.done = {s.index: UnitDone(cl) for s in self.specs}
        self.user = {t: cl.UserEvent(self.root.ctx) for t in self.cpu_made}
        self.aborted, self.end, self.report = False, None, None
        return self.done

    def _publisher(self, t: str):
        def publish() -> None:
            host = self.staging[t]
            np.copyto(host, np.asarray(self.ctx.live.host[t]).reshape(host.shape), casting="unsafe")
            self.user[t].set_status(self.cl.command_execution_status.COMPLETE)

        return publish

    def abort(self) -> None:
        """Stop enqueueing; let commands waiting on user events go (a CPU worker failed
        before setting them)."""
        self.aborted = True
        for event in self.user.values():
            with contextlib.suppress(self.cl.Error):  # already set
                event.set_status(self.cl.command_execution_status.COMPLETE)

    def run(self) -> None:
        """Enqueue every unit of the runner, then wait for what the host needs."""
        ctx = self.ctx
        self.t0 = now()
        self.last: dict[int, Any] = {}
        self.written: dict[str, tuple[Any, str]] = {}
        self.launch_events: dict[int, list[Any]] = {}
        self.enqueued_at: dict[int, float] = {}
        host_reads: list[Any] = []
        for s in self.specs:
            if self.aborted:
                return
            self.enqueued_at[s.index] = now()
            waits = self._waits(s)
            self.last[s.index] = self._enqueue_launches(s, waits)
            done = self.done[s.index]
            for t in self.reads[s.index]:
                out, ev = self._read(s, t)
                ctx.live.host[t] = out  # filled once ``ev`` completes; readers wait on it
                host_reads.append(ev)
                done.events.append(ev)
            if not done.events:
                done.events.append(self.last[s.index])
            done.enqueued.set()
        if host_reads:
            self.cl.wait_for_events(host_reads)
        for q in {id(q): q for q in self.queues.values()}.values():
            q.finish()
        self.end = now()
        for s in self.specs:  # the bounds-checked build's error records (kernels/bounds.py)
            checks = ctx.units[s.index].handle.checks
            if checks is not None:
                checks.verify()

    def _waits(self, s: UnitSpec) -> list[Any]:
        """Events the unit's first launch waits on: its inputs from the runner's units on
        other queues, and the host copies of its other inputs (enqueued here on first use).
        An input from the runner's units is
        bound here, once its producer is: a producer's output may be a view of its own input,
        whose buffer is only known then (binding the same buffer again costs nothing)."""
        units = self.ctx.units
        h = units[s.index].handle
        for t, p in self.from_inside[s.index]:
            h.bind(t, units[p].handle.result(t))
        waits = [
            self.last[p] for _t, p in self.from_inside[s.index] if self._queue_of(p) != s.device
        ]
        for t in self.from_host[s.index]:
            if t not in self.written:
                self.written[t] = (self._write(s, t), s.device)
            ev, where = self.written[t]
            if where != s.device and ev is not None:
                waits.append(ev)
        return waits

    def _queue_of(self, unit: int) -> str:
        return self.ctx.specs[unit].device

    def _write(self, s: UnitSpec, t: str) -> Any:
        """Enqueue the host -> device copy of ``t`` on ``s``'s queue and bind the buffer to
        every unit of the runner that reads it."""
        ctx, q, cl = self.ctx, self.queues[s.device], self.cl
        if t in self.user:
            host, wait_for = self.staging[t], [self.user[t]]
        else:
            host, wait_for = np.ascontiguousarray(ctx.live.host[t]), None
        buf, _ = self.pool.get(t, host.shape, str(host.dtype))
        for r in self.host_readers[t]:
            ctx.units[r].handle.bind(t, buf)
        if host.size == 0:
            return cl.enqueue_marker(q, wait_for=wait_for)
        return cl.enqueue_copy(q, buf.buf, host, is_blocking=False, wait_for=wait_for)

    def _enqueue_launches(self, s: UnitSpec, waits: list[Any]) -> Any:
        """Enqueue the unit's launches; its last event. Profiling queues give every launch
        its event, to time it; otherwise only the last launch has one (``launcher``)."""
        q, h = self.queues[s.device], self.ctx.units[s.index].handle
        if not self.ctx.node_times or not h.launches:
            self.launch_events[s.index] = []
            return enqueue(self.cl, q, h.launches, waits)
        events = self.launch_events[s.index] = enqueue_each(self.cl, q, h.launches, waits)
        return events[-1]

    def _read(self, s: UnitSpec, t: str) -> tuple[np.ndarray, Any]:
        buf = self.ctx.units[s.index].handle.result(t)
        out = np.empty(buf.shape, dtype=buf.dtype)
        q = self.queues[s.device]
        if out.size == 0:
            return out, self.cl.enqueue_marker(q)
        return out, self.cl.enqueue_copy(q, out, buf.buf, is_blocking=False)

    # --- the report's events ------------------------------------------------------------
    def events(self) -> list[Event]:
        """The last run's unit events, from the launches' OpenCL stamps."""
        return self._stamps()[0]

    def node_times(self) -> dict[int, list[Interval]]:
        """The last run's node times per unit (profiling queues only)."""
        return self._stamps()[1]

    def _stamps(self) -> tuple[list[Event], dict[int, list[Interval]]]:
        """The last run's unit events and node times, read once, after the run is timed."""
        if self.report is None and self.end is not None:
            self.report = self._read_stamps(self.end)
        return self.report or ([], {})

    def _read_stamps(self, end: float) -> tuple[list[Event], dict[int, list[Interval]]]:
        ctx = self.ctx
        profiled = ctx.node_times
        firsts = [evs[0] for evs in self.launch_events.values() if evs]
        ref = firsts[0].profile.queued if profiled and firsts else None
        out, times = [], {}
        for s in self.specs:
            evs = self.launch_events[s.index]
            args: dict[str, Any] = {"unit": s.index, "nodes": len(s.nodes), "aot": True}
            if ref is not None and evs:
                start = self.t0 + (evs[0].profile.start - ref) * 1e-9
                finish = self.t0 + (evs[-1].profile.end - ref) * 1e-9
                start, finish = min(max(start, self.t0), end), min(max(finish, self.t0), end)
                finish = max(finish, start)
                h = ctx.units[s.index].handle
                span = launch_spans(h.launches, evs, ref, self.t0, end)
                first = min((v[0] for v in span.values()), default=self.t0)
                times[s.index] = node_times(h, span, first, s.device)
            else:
                start, finish = self.enqueued_at[s.index], end
                args["approx"] = True
            ms = ctx.live.ms
            out.append(Event("unit", s.device, s.label, ms(start), ms(finish), args))
        return out, times

    def release(self) -> None:
        self.pool.release()
