"""The live side of a run, shared by the executor (``interpreter.Executor``) and its worker
threads (``worker.py``), declared in one place below both so that neither imports the other:
the host's arrays, the events and node times the workers measure, each unit's done-waiter,
the run's first failure, the devices that failed and the device their units run on instead,
and a sequential plan's turn.

The executor builds one ``RunState`` per prepared plan, with the frozen ``RunContext``
(``devices/runner.py``: the bound plan, its prepared units and routes) whose ``live`` side it
is, and ``start``s it afresh for each run; the workers read and write only what it declares.
Times: ``now()`` seconds on devices, ms from the run's start (``t0``) in events."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hetlab.devices.bound import UnitSpec
from hetlab.devices.runner import QueueRunner, RunContext, Waiter
from hetlab.devices.unit import Unit
from hetlab.executor.trace import Event
from hetlab.executor.units import check_fixed
from hetlab.timeline import Interval


@dataclass(eq=False)
class RunState:
    """What holds across runs, then one run's side (``start`` resets it). ``ctx`` is the
    prepared plan's ``RunContext``, whose ``live`` side this is (the executor sets it)."""

    fallback_device: str | None  # where a failed accelerator's units run instead
    failed: dict[str, str]  # device -> its first error; kept across runs
    fallbacks: dict[int, dict[str, Any]]  # unit -> where it ran instead, and why
    # tensor -> what to call once a worker has put it in ``host`` (a queue runner's hook)
    on_publish: dict[str, Callable[[], None]]
    runners: list[QueueRunner]  # the plan's queue runners, which a failure lets go
    ctx: RunContext = field(init=False)
    fallback_units: dict[int, Unit] = field(default_factory=dict)  # prepared on demand
    fallback_lock: threading.Lock = field(default_factory=threading.Lock)
    # one run's
    host: dict[str, Any] = field(default_factory=dict)  # model inputs, then what units publish
    done: list[Waiter] = field(default_factory=list)  # per unit, set once it has run
    abort: tuple[UnitSpec, BaseException] | None = None  # the run's first failure
    events: list[Event] = field(default_factory=list)
    raw_node_times: dict[int, Sequence[Interval]] = field(
        default_factory=dict
    )  # unit -> node times
    t0: float = 0.0  # the run's start (``now()`` s)
    turn: int = 0  # a sequential plan: the unit whose turn it is
    turn_cv: threading.Condition = field(default_factory=threading.Condition)

    def start(self, host: dict[str, Any]) -> None:
        """A fresh run from the model inputs in ``host``: a new done-event per unit, where a
        queue runner gives its own units theirs (``QueueRunner.start_run``)."""
        self.host = host
        self.abort = None
        self.turn = 0
        self.turn_cv = threading.Condition()
        self.events = []
        self.raw_node_times = {}
        theirs: dict[int, Waiter] = {}
        for g in self.runners:
            theirs.update(g.start_run())
        self.done = [
            theirs[i] if i in theirs else threading.Event() for i in range(len(self.ctx.specs))
        ]

    def ms(self, t: float) -> float:
        """A ``now()`` time as ms from the run's start (an ``Event``'s clock)."""
        return (t - self.t0) * 1000.0

    def fail(self, spec: UnitSpec, e: BaseException) -> None:
        """Keep the run's first failure; let go every queue runner and every waiting worker (on a
        unit's done-waiter, or on its turn)."""
        if self.abort is None:
            self.abort = (spec, e)
        for g in self.runners:
            g.abort()
        for ev in self.done:
            ev.set()
        with self.turn_cv:
            self.turn_cv.notify_all()

    def published(self, tensor: str) -> None:
        """A worker has put ``tensor`` in ``host``: pass it on to a device waiting for it
        (once its shape is the one a kernel device reading it was built for)."""
        ctx = self.ctx
        check_fixed(ctx.plan.graph, ctx.specs, ctx.routes.fixed_in, tensor, self.host[tensor])
        hook = self.on_publish.get(tensor)
        if hook is not None:
            hook()
        with self.turn_cv:
            self.turn_cv.notify_all()

    def wait_turn(self, spec: UnitSpec) -> None:
        """A sequential plan: block until it is ``spec``'s turn, or the run has failed."""
        with self.turn_cv:
            while self.turn != spec.index and self.abort is None:
                self.turn_cv.wait()

    def end_turn(self) -> None:
        """A sequential plan: the next unit's turn."""
        with self.turn_cv:
            self.turn += 1
            self.turn_cv.notify_all()

    def fallback_unit(self, spec: UnitSpec) -> Unit:
        """``spec``'s nodes prepared on ``fallback_device`` (once, on first need)."""
        with self.fallback_lock:
            if spec.index not in self.fallback_units:
                dev = self.ctx.plan.devices[self.fallback_device]
                self.fallback_units[spec.index] = dev.prepare(self.ctx.plan.graph, spec.nodes)
            return self.fallback_units[spec.index]
