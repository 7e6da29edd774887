"""How a device runs all of a plan's units on it and on its queue views at once.

The executor runs a plan unit by unit, one worker thread per device. A device that can do
better (enqueue them all ahead of time, capture them as one graph) declares a queue runner
through ``Device.queue_runner``; the executor asks the device for one and never knows its
kind (tinygrad's runtime: a backend hands its graph runner to the engine). A runner sees the
run only through ``RunContext``, one frozen value the executor makes once per prepared plan,
and overrides the declared hooks of ``QueueRunner`` (torch.fx's Interpreter: named override
points).

The plan's units (``UnitSpec``, ``bound.py``) and the run's events (``Event``, here) sit
below the executor, since both sides use them. This module sits below ``base.py``: ``Device``
declares its runner with these types, and a device here is what a runner reads of one
(``RunnerDevice``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

from hetlab.devices.bound import BoundPlan, UnitSpec
from hetlab.devices.unit import Unit
from hetlab.timeline import Interval


def one_queue(plan_specs: Sequence[UnitSpec], specs: Sequence[UnitSpec]) -> bool:
    """Whether ``specs`` are every unit of the plan, all on one device: a sequential plan's
    one-at-a-time order is then the order that device's one queue keeps."""
    return len(specs) == len(plan_specs) and len({s.device for s in specs}) <= 1


# A run's events are intervals (ms from the run's start): 'unit' (a dispatch), 'node' (one
# node, where the device timed it), 'send' (device -> host copy of a tensor) or 'recv'
# (host -> device, a transfer).
Event = Interval


class RunnerDevice(Protocol):
    """What ``QueueRunner`` reads of a device: a protocol, so ``base.py`` can declare queue
    runners without the two importing each other (a ``Device`` is one)."""

    @property
    def root(self) -> RunnerDevice:
        """The device whose context and memory this one shares (``Device.root``)."""
        ...


class Waiter(Protocol):
    """What a worker waits on before a unit that depends on another (a ``threading.Event``
    or a runner's own)."""

    def wait(self) -> None: ...

    def set(self) -> None: ...

    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class Routes:
    """Where each unit's inputs come from and where its outputs go, per unit index:
    ``recv`` the tensors it receives from another device (or the host), ``publish`` those it
    sends to the host, ``free_after`` those whose last use on its device it is; ``producer``
    maps a tensor to the unit that makes it, ``fixed_in`` a tensor a kernel device reads from
    the host to its first reader there (the executor's ``route`` makes them)."""

    producer: Mapping[str, int]
    recv: Sequence[Sequence[str]]
    publish: Sequence[Sequence[str]]
    free_after: Sequence[Sequence[str]]
    fixed_in: Mapping[str, int]


class RunStore(Protocol):
    """One run's live side, which the executor owns and the runners write into: the host's
    arrays (model inputs, then what units publish), the hooks called once a tensor is there
    (a runner's own), and the run's clock."""

    host: dict[str, Any]
    on_publish: dict[str, Callable[[], None]]

    def published(self, tensor: str) -> None:
        """``tensor`` is in ``host``: wake whatever waits for it."""

    def ms(self, t: float) -> float:
        """A ``now()`` time as ms from this run's start (an ``Event``'s clock)."""


@dataclass(frozen=True, eq=False)
class RunContext:
    """What the executor hands its workers and the queue runners, once per prepared plan:
    the bound plan, its prepared units (by unit index) and their routes, whether the run
    times each node (``node_times``: an argument of the run, passed on to ``Device.run``),
    and the run's live side (``live``)."""

    plan: BoundPlan
    units: tuple[Unit, ...]
    routes: Routes
    node_times: bool
    live: RunStore

    @property
    def specs(self) -> tuple[UnitSpec, ...]:
        """Every unit of the plan, in global order."""
        return self.plan.units


class QueueRunner(ABC):
    """Runs the units of one device and its queue views (``names``, the root first) on one
    thread: built once per plan, then ``start_run``, ``run`` per run, ``release`` at the end.
    A subclass declares which plans it takes (``fits``) and overrides the hooks below."""

    names: list[str]  # the devices whose units it runs
    specs: list[UnitSpec]  # its units, in global order

    def __init__(self, ctx: RunContext, names: Sequence[str]) -> None:
        self.ctx = ctx
        self.names = list(names)
        self.devs = {d: ctx.plan.devices[d] for d in names}
        self.root = self.devs[names[0]].root
        self.specs = [s for s in ctx.specs if s.device in self.devs]
        self.index = {s.index for s in self.specs}

    @classmethod
    @abstractmethod
    def fits(cls, ctx: RunContext, names: Sequence[str]) -> bool:
        """Whether this runner can run the units on ``names`` of the plan in ``ctx``."""

    @classmethod
    def for_units(cls, ctx: RunContext, names: Sequence[str]) -> Self | None:
        """A runner of the units on ``names``, or None where they do not fit it."""
        return cls(ctx, names) if cls.fits(ctx, names) else None

    def needed_outside(self) -> set[str]:
        """The tensors that leave the runner: model outputs and what other devices receive."""
        ctx = self.ctx
        outside = [s for s in ctx.specs if s.index not in self.index]
        return set(ctx.plan.graph.outputs) | {t for s in outside for t in ctx.routes.recv[s.index]}

    @abstractmethod
    def start_run(self) -> Mapping[int, Waiter]:
        """Before the workers start: a fresh waiter per unit of the runner, which the
        executor's workers wait on."""

    @abstractmethod
    def run(self) -> None:
        """Run every unit of the runner once; blocks until what the host needs is there."""

    def abort(self) -> None:
        """Another device failed: let go whatever in the runner waits on the host."""

    def events(self) -> list[Event]:
        """The last run's unit events, read once the run is timed."""
        return []

    def node_times(self) -> dict[int, Sequence[Interval]]:
        """The last run's node times per unit (``unit.node_time``), where the devices timed
        them."""
        return {}

    def release(self) -> None:
        """Free what the runner holds (buffers, graphs)."""
