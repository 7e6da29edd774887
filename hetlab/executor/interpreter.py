"""The interpreter over a plan (HOPE §4.2-4.3), in the style of torch.fx's
``Interpreter.run -> run_node``, with one pinned worker thread per device.

- Each device's units form a queue in plan order; its worker waits on a per-unit event of
  every unit on another device it depends on, so a finished unit wakes its successors on
  their own devices (HOPE's per-operator ``executed`` flag, one per unit here).
- A tensor that changes device is copied to the host once by its producer (``send``) and
  into each receiving device once by the first unit there that reads it (``recv``, in the
  receiver's stream): tensor caching. Buffers are freed after their last use on a device.
- Units are prepared once (sessions, programs) and run many times.
- While a run has more than one worker, the interpreter's GIL switch interval is 0.1 ms
  (Python's default is 5 ms): a worker returning from onnxruntime or an OpenCL wait must
  not queue behind another worker's Python loop (e.g. enqueueing hundreds of kernels) for
  up to 5 ms. The old interval is restored after the run. ``HETLAB_SWITCH_INTERVAL_US``
  sets another; docs/decisions.md#gil-switch-interval says why 0.1 ms.
- The calling thread drives the first CPU group (HOPE), or the plan's one device or queue
  runner where there is one: a thread of its own costs two hand-offs a run.
- If a unit fails on an OpenCL device, it and the rest of that device's units run on the
  first other device (the first CPU group) from host copies; the report lists them.
- What a run shares with the workers and the device runners is one frozen ``RunContext``
  (``devices/runner.py``: the bound plan, its prepared units and their routes, whether the
  run times its nodes) the executor builds at ``prepare`` and hands them, whose live side
  is a ``RunState`` (``run_state.py``); neither ever sees the executor. Node timing is an
  argument of the run (``node_times``), passed to each device's ``run``.
Times: ``now()`` seconds on devices, ms from the repetition's start in events.
"""

from __future__ import annotations

import os
import queue
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Self

from hetlab.devices.base import is_accelerator
from hetlab.devices.bound import BoundPlan
from hetlab.devices.runner import QueueRunner, RunContext
from hetlab.devices.unit import Unit, now
from hetlab.errors import HetlabError
from hetlab.executor.run_state import RunState
from hetlab.executor.trace import Event
from hetlab.executor.units import RunError, check_fixed, route
from hetlab.executor.worker import QueueWorker, Worker
from hetlab.timeline import Interval


@dataclass
class Repetition:
    """One repetition's result: wall time (ms), model outputs on the host, measured events."""

    wall_ms: float
    outputs: dict[str, Any]
    events: list[Event]
    # unit -> the devices' node times (s on the device clock; may be lazy)
    raw_node_times: dict[int, Sequence[Interval]] = field(default_factory=dict)
    t0: float = 0.0  # the run's start on the device clock (s)

    @property
    def node_times(self) -> dict[int, list[Interval]]:
        """Unit -> its node times in ms from the run's start; read lazily, since OpenCL's
        per-kernel stamps cost microseconds each to fetch."""
        return {
            i: [
                replace(nt, start=(nt.start - self.t0) * 1e3, finish=(nt.finish - self.t0) * 1e3)
                for nt in raw
            ]
            for i, raw in self.raw_node_times.items()
            if len(raw)
        }


SWITCH_INTERVAL_S = 1e-4  # GIL switch interval while several workers run (s)


def switch_interval_s() -> float:
    """``SWITCH_INTERVAL_S``, or ``HETLAB_SWITCH_INTERVAL_US`` microseconds where that is set."""
    raw = os.environ.get("HETLAB_SWITCH_INTERVAL_US")
    if raw is None:
        return SWITCH_INTERVAL_S
    try:
        us = float(raw)
    except ValueError:
        us = float("nan")
    if not 0 < us < 1e6:
        raise HetlabError(
            f"HETLAB_SWITCH_INTERVAL_US must be microseconds between 0 and 1e6, not {raw!r}"
        )
    return us * 1e-6


class Executor:
    """Runs a bound plan (``devices.binding.bind``) on its devices: each node on its device,
    in the plan's global order; a sequential plan one unit at a time in that order (spec §3),
    one dispatch per unit of ``plan.units``. Call
    ``prepare`` once (``run_once`` does it if needed), ``run_once`` many times, ``close``
    at the end."""

    def __init__(
        self,
        plan: BoundPlan,
        main_thread: bool = True,
        node_times: bool = False,
        ahead_of_time: bool = True,
    ) -> None:
        self.plan = plan
        self.graph = plan.graph
        self.main_thread = main_thread
        self.node_times = node_times
        self.ahead_of_time = ahead_of_time
        self.switch_interval_s: float | None = switch_interval_s()  # None: leave Python's
        self.devices = plan.devices
        self.specs = plan.units
        self.units: list[Unit] = []
        self.failed: dict[str, str] = {}  # device -> first error
        self.fallbacks: dict[int, dict[str, Any]] = {}
        self.state: RunState | None = None  # built by ``prepare``
        self._workers: dict[str, Worker] = {}
        self._runners: list[QueueRunner] = []
        self.on_publish: dict[str, Callable[[], None]] = {}
        others = [d.name for d in self.devices.values() if not is_accelerator(d)]
        self.fallback_device = others[0] if others else None

    # --- preparing ----------------------------------------------------------------
    def prepare(self) -> None:
        if self.units:
            return
        for s in self.specs:
            try:
                self.units.append(self.devices[s.device].prepare(self.graph, s.nodes))
            except HetlabError:
                raise
            except Exception as e:
                raise RunError(f"preparing {s.label} failed: {type(e).__name__}: {e}") from e
        r = route(self.graph, self.specs, self.units, self.devices)
        used = self.plan.used()
        cpus = [d for d in used if not is_accelerator(self.devices[d])]
        self._inline = cpus[0] if self.main_thread and cpus else None
        if self.main_thread and len(used) == 1:  # one device: no thread of its own either
            self._inline = used[0]  # (docs/decisions.md#one-queue-runner-on-the-main-thread)
        self.state = RunState(
            self.fallback_device, self.failed, self.fallbacks, self.on_publish, self._runners
        )
        self.ctx = RunContext(self.plan, tuple(self.units), r, self.node_times, self.state)
        self.state.ctx = self.ctx
        together = self._queue_runners(used)
        for d in used:
            if d in together:
                continue
            self._workers[d] = Worker(
                self.ctx, d, [s for s in self.specs if s.device == d], threaded=d != self._inline
            )

    def _queue_runners(self, used: list[str]) -> set[str]:
        """The devices whose root offers a runner for their units (``Device.queue_runner``:
        enqueued ahead of time on OpenCL, one captured graph on CUDA), with their queue
        views: one runner and one thread per root device; returns the device names it runs."""
        if not self.ahead_of_time:
            return set()
        by_root: dict[int, list[str]] = {}
        for d in used:
            dev = self.devices[d]
            if dev.capabilities().runner is not None:
                by_root.setdefault(id(dev.root), []).append(d)
        # one runner for every device the plan uses: the main thread drives it, as it drives
        # the first CPU group otherwise (a thread of its own would cost two hand-offs a run)
        alone = (
            self.main_thread
            and len(by_root) == 1
            and len(next(iter(by_root.values()))) == len(used)
        )
        together: set[str] = set()
        for names in by_root.values():
            runner = self.devices[names[0]].root.queue_runner(self.ctx, names)
            if runner is None:
                continue
            self._runners.append(runner)
            self._workers[names[0]] = QueueWorker(self.ctx, runner, threaded=not alone)
            self._inline = names[0] if alone else self._inline
            together.update(names)
        return together

    # --- running ------------------------------------------------------------------
    def run_once(self, inputs: Mapping[str, Any]) -> Repetition:
        """One inference: every worker runs its queue; returns outputs and the timeline."""
        self.prepare()
        absent = [t for t in self.graph.inputs if t not in inputs]
        if absent:
            raise HetlabError(f"missing model input {absent[0]!r}")
        host = dict(inputs)
        for t in self.graph.inputs:
            check_fixed(self.graph, self.specs, self.ctx.routes.fixed_in, t, host[t])
        st = self.state
        st.start(host)
        finished: queue.Queue = queue.Queue()
        threaded = [w for w in self._workers.values() if w.thread is not None]
        interval = sys.getswitchinterval()
        if len(self._workers) > 1 and self.switch_interval_s:
            sys.setswitchinterval(min(interval, self.switch_interval_s))
        try:
            st.t0 = t0 = now()
            for w in threaded:
                w.jobs.put(finished)
            if self._inline is not None:  # HOPE: the main thread drives the first CPU group
                self._workers[self._inline].run_here()
            for _ in threaded:
                finished.get()
            wall = (now() - t0) * 1000.0
        finally:
            sys.setswitchinterval(interval)
        if st.abort is not None:
            s, e = st.abort
            if not isinstance(e, Exception):
                raise e
            if isinstance(e, HetlabError) and not isinstance(e, RunError):
                raise e
            raise RunError(f"{s.label} failed: {type(e).__name__}: {e}") from e
        for g in self._runners:  # read once the run is timed
            st.events += g.events()
            st.raw_node_times.update(g.node_times())
        outs = {t: st.host[t] for t in self.graph.outputs}
        events = sorted(st.events, key=lambda ev: (ev.start, ev.device))
        return Repetition(wall, outs, events, st.raw_node_times, t0)

    def close(self) -> None:
        for w in self._workers.values():
            if w.thread is not None:
                w.jobs.put(None)
        for w in self._workers.values():
            if w.thread is not None:
                w.thread.join(timeout=5)
            w.release()
        self._workers.clear()
        for g in self._runners:
            g.release()
        self._runners.clear()
        self.on_publish.clear()
        spare = list(self.state.fallback_units.values()) if self.state else []
        for name, dev in self.devices.items():  # sessions live on in the devices' caches else
            dev.forget([u for u in [*self.units, *spare] if u.device == name])

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
