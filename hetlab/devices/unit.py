"""What a run of a unit yields, and the clock it is measured on.

A *unit* is one node or a chain of nodes that run on one device as one dispatch (an
onnxruntime session over the extracted subgraph, or one OpenCL command sequence). These types
need no device: the device interface (``base.py``), the queue runners (``runner.py``), the
queue measures (``queue_measures.py``) and the backends all build on them, so they sit below
all of those. Times are seconds on ``now()``'s clock unless a name says ms.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hetlab.timeline import Interval


def now() -> float:
    """The one clock every measured interval uses (seconds)."""
    return time.perf_counter()


@dataclass
class Unit:
    """A prepared, runnable piece of a graph on one device.

    ``inputs``: tensors read from outside the unit (not weights, which the device holds);
    ``outputs``: tensors written by the unit that are read outside it or are model outputs.
    ``handle`` is the backend's own (a session, a list of kernel launches...).
    """

    device: str
    nodes: list[str]
    inputs: list[str]
    outputs: list[str]
    handle: Any = None


def node_time(device: str, node: str, start: float, finish: float) -> Interval:
    """The measured interval of one node on ``device``, in seconds on ``now()``'s clock."""
    return Interval("node", device, node, start, finish)


class LazyNodeTimes(Sequence):
    """Node times (``node_time`` intervals) computed on first use: reading per-kernel
    profiling stamps costs a few microseconds per launch, which must not be paid inside a
    timed run (the executor reads them after its clock has stopped)."""

    def __init__(self, compute: Callable[[], list[Interval]]) -> None:
        self._compute: Callable[[], list[Interval]] | None = compute
        self._items: list[Interval] = []

    def _get(self) -> list[Interval]:
        if self._compute is not None:
            self._items, self._compute = list(self._compute()), None
        return self._items

    def __getitem__(self, i):  # type: ignore[override]
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())


@dataclass
class RunResult:
    """What one run of a unit gives back: its outputs (device buffers) and its interval."""

    outputs: dict[str, Any]
    start: float
    finish: float
    # one ``node_time`` per node the device timed (s, ``now()``'s clock); may be lazy
    node_times: Sequence[Interval] = field(default_factory=list)
