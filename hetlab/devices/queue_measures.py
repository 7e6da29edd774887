"""What a device's queue views cost, measured one way for every backend.

Two measures, each a median over ``rounds`` after one warm-up call of every timer:

- ``queue_costs``: a chain of ``n`` tiny dependent kernels on one queue, and the same chain
  alternating over two queues, each kernel waiting on an event of the other queue's last.
  ``event_ms`` is what a wait across queues adds per kernel, (alternate - single) / (n - 1):
  the problem charges it to every tensor passed between two queues (``cost/queues.py``);
  ``launch_ms`` the host's cost of one launch; ``chain_ms`` one kernel of the chain, less
  the chain's own launch where the whole chain is launched at once.
- ``model_slowdown``: one copy of the model on the first queue alone, against one copy on
  every queue at once; ``slowdown`` = together / single, 1 where the device runs the copies
  side by side for free, ``len(queues)`` where they run one after another.

A backend supplies the parts (``QueueMeasures``' two hooks): how it times a chain and how it
runs copies of a model's launches together. ``Device.queue_measures`` returns its measures;
this module sits below ``base.py`` and reads a device only as a ``Queue``.
"""

from __future__ import annotations

import statistics
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hetlab.devices.unit import Unit
from hetlab.graph.ir import Node, OpGraph

Timer = Callable[[], float]  # one timed run, in seconds


class Queue(Protocol):
    """What the measures read of a device or queue view: a protocol, so ``base.py`` can
    declare queue measures without the two importing each other (a ``Device`` is one)."""

    def supports(self, node: Node, graph: OpGraph) -> bool: ...

    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit: ...

    def copy_in(self, array: np.ndarray) -> Any: ...


@dataclass(frozen=True)
class ChainTimers:
    """A backend's timers of a chain of ``n`` tiny dependent kernels (``queue_costs``)."""

    single: Timer  # the chain on one queue
    alternate: Timer  # the chain alternating over two queues, each kernel after an event
    launch: Timer  # the host's cost of one launch
    # the chain is launched at once (one graph), paying ``launch`` once, which comes off
    # ``chain_ms``; else each kernel is launched while the device runs the ones before
    launched_at_once: bool = False


def medians(timers: Sequence[Timer], rounds: int) -> list[float]:
    """Each timer's median over ``rounds``, in turn each round, after one warm-up call each
    (builds, first launches, captures)."""
    for t in timers:
        t()
    samples: list[list[float]] = [[] for _ in timers]
    for _ in range(rounds):
        for s, t in zip(samples, timers, strict=True):
            s.append(t())
    return [statistics.median(s) for s in samples]


class QueueMeasures(ABC):
    """The two measures of a device's queues, from the parts its backend supplies."""

    @abstractmethod
    def chain_timers(self, device: Queue, n: int) -> ChainTimers:
        """The timers of a chain of ``n`` tiny dependent kernels on ``device``."""

    @abstractmethod
    def copies_timer(
        self, queues: Sequence[Queue], units: Sequence[Unit], which: list[int]
    ) -> Timer:
        """A timer of one run of the launches of ``units[i]`` on ``queues[i]`` for each ``i``
        in ``which``, issued in turn, all at once."""

    def queue_costs(self, device: Queue, n: int = 200, rounds: int = 7) -> dict[str, float]:
        """``{"launch_ms", "event_ms", "chain_ms"}`` for ``device``."""
        timers = self.chain_timers(device, n)
        single, alternate, launch = medians(
            [timers.single, timers.alternate, timers.launch], rounds
        )
        own = launch if timers.launched_at_once else 0.0
        return {
            "launch_ms": round(launch * 1e3, 5),
            "event_ms": round(max(0.0, (alternate - single) / (n - 1)) * 1e3, 5),
            "chain_ms": round(max(0.0, single - own) / n * 1e3, 5),
        }

    def model_slowdown(
        self, queues: Sequence[Queue], graph: OpGraph, rounds: int = 5
    ) -> dict[str, float]:
        """How much a copy of the model runs slower beside copies on the other queues: the
        nodes the first queue supports (control flow, which runs on the host, left out) are
        prepared once per queue, on seeded random inputs."""
        units = prepared_copies(queues, graph)
        everyone = list(range(len(queues)))
        single, together = medians(
            [self.copies_timer(queues, units, [0]), self.copies_timer(queues, units, everyone)],
            rounds,
        )
        return {
            "single_ms": round(single * 1e3, 4),
            "together_ms": round(together * 1e3, 4),
            "slowdown": round(max(1.0, together / single), 4),
        }


def prepared_copies(queues: Sequence[Queue], graph: OpGraph) -> list[Unit]:
    """One unit per queue of the nodes the first queue supports (no ``If``), its inputs
    bound to seeded random buffers on that queue."""
    dev = queues[0]
    nodes = [n.id for n in graph.nodes if dev.supports(n, graph) and n.op_type != "If"]
    units = [q.prepare(graph, nodes) for q in queues]
    rng = np.random.default_rng(0)
    for q, unit in zip(queues, units, strict=True):
        for name in unit.inputs:
            t = graph.tensors[name]
            host = rng.standard_normal(t.shape or ()).astype(t.dtype)
            unit.handle.bind(name, q.copy_in(host))
    return units
