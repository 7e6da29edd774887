"""The device interface: a few hooks behind which every backend sits (tinygrad-style).

A backend is a bundle of parts handed to this one base class: what it runs a unit with
(``prepare``, ``run``: ``unit.py``), its queue runner (``runner.py``) and its queue measures
(``queue_measures.py``). Those modules sit below this one and never import it. Buffers are
opaque handles; the host layout (a C-contiguous numpy array) is the exchange format. Times
are seconds on ``unit.now()``'s clock unless a name says ms.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hetlab.devices.capabilities import Capabilities
from hetlab.devices.cgroup import memory_bytes as host_memory_bytes
from hetlab.devices.precision import FP32, check_precision
from hetlab.devices.queue_measures import QueueMeasures
from hetlab.devices.runner import QueueRunner, RunContext
from hetlab.devices.unit import RunResult, Unit
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph


class Device(ABC):
    """A compute device. Subclasses set ``name`` and ``kind``, declare their
    ``capabilities`` and implement the hooks. ``kind`` names the backend for people and
    reports; what the layers above do with a device follows its capabilities only."""

    name: str
    kind: str
    # whether ``run`` times each node where its caller does not say (``Capabilities.node_times``)
    times_nodes = False
    cores: Sequence[int] = ()  # the host cores a CPU device computes on; none elsewhere
    # the precision its convolutions and matrix products run at, one of its declared
    # ``Capabilities.precisions`` (``precision.py``)
    precision = FP32
    # the device whose context and memory a queue view shares (None: this is no view)
    parent: Device | None = None

    # --- identity -----------------------------------------------------------
    @abstractmethod
    def info(self) -> dict[str, Any]:
        """The entry of ``hetlab devices --json`` (spec §5): at least name and kind."""

    @abstractmethod
    def capabilities(self) -> Capabilities:
        """What this device declares it can do (``capabilities.py``)."""

    @property
    def root(self) -> Device:
        """The device whose context and memory this one shares: itself unless it is a queue
        view (``cl0.q1``) of another."""
        return self

    def fingerprint(self) -> str:
        """A stable string that changes when the hardware or driver changes (profile cache key)."""
        i = self.info()
        key = "|".join(f"{k}={i[k]}" for k in sorted(i) if k not in ("name",))
        return key if self.precision == FP32 else f"{key}|precision={self.precision}"

    def with_precision(self, precision: str) -> Device:
        """This device at ``precision``: itself where it runs at it already, else a copy that
        shares its context, memory and compiled programs, as a queue view does (the device
        object itself never changes). A queue view's copy is a view of its device's copy, and
        one device and precision give one object, so roots stay shared. A precision the
        device does not declare (``Capabilities.precisions``) is one clear line."""
        check_precision(precision)
        if precision == self.precision:
            return self
        declared = self.capabilities().precisions
        if precision not in declared:
            raise HetlabError(
                f"{self.name} cannot run at {precision}: it declares {', '.join(declared)} only"
            )
        family = self.root.__dict__.setdefault("precision_family", {})
        family.setdefault((self.name, self.precision), self)
        key = (self.name, precision)
        if key not in family:
            dup = copy.copy(self)
            dup.precision = precision
            if self.parent is not None:
                dup.parent = self.parent.with_precision(precision)
            family[key] = dup
        return family[key]

    def hardware_id(self) -> str | None:
        """Where the device sits (a GPU's PCI address), the same whichever driver reaches
        it; None where unknown. Two devices with one id are one piece of hardware."""
        return None

    @abstractmethod
    def supports(self, node: Node, graph: OpGraph) -> bool:
        """Whether this device can run ``node`` with its shapes and attributes. Decided
        before any run: an op refused here is never discovered mid-run."""

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        """A short reason when ``supports`` is False (for UIs and error messages)."""
        return (
            None
            if self.supports(node, graph)
            else f"{node.op_type} is not supported on {self.name}"
        )

    # --- buffers --------------------------------------------------------------
    def alloc(self, shape: Sequence[int], dtype: str = "float32") -> Any:
        return np.empty(tuple(shape), dtype=dtype)

    def copy_in(self, array: np.ndarray) -> Any:
        """Host array -> device buffer (identity on host-memory devices)."""
        return array

    def copy_out(self, buf: Any) -> np.ndarray:
        """Device buffer -> host array (blocking)."""
        return np.asarray(buf)

    def write(self, dst: Any, array: np.ndarray) -> None:
        """Host array -> an existing device buffer, in place; only on devices that declare
        ``writes_inputs``."""
        raise NotImplementedError(f"{self.name} does not write into its buffers")

    def write_all(self, pairs: Sequence[tuple[Any, np.ndarray]]) -> None:
        """``write`` of each (buffer, host array) pair; a device may wait once for them all."""
        for dst, array in pairs:
            self.write(dst, array)

    def copy_out_all(self, bufs: Sequence[Any]) -> list[np.ndarray]:
        """``copy_out`` of each buffer; a device may wait once for them all."""
        return [self.copy_out(buf) for buf in bufs]

    def free(self, buf: Any) -> None:
        """Release a buffer after its last use (no-op where the GC does it)."""

    def memory_bytes(self) -> int | None:
        """The memory this device's tensors live in, in bytes (None: unknown). By default
        the host's: the machine's, or the container's limit where smaller."""
        return host_memory_bytes()

    def max_alloc_bytes(self) -> int | None:
        """The largest single buffer the device allocates, in bytes (None: unknown); by
        default its whole memory."""
        return self.memory_bytes()

    # --- running -------------------------------------------------------------
    @abstractmethod
    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit:
        """Compile/build everything ``nodes`` need (sessions, programs, weights) once."""

    @abstractmethod
    def run(self, unit: Unit, inputs: dict[str, Any], node_times: bool | None = None) -> RunResult:
        """Run a prepared unit on device buffers; blocks until its outputs are ready. A device
        that declares ``Capabilities.node_times`` times each node where ``node_times`` is
        True (None: its ``times_nodes``); the executor passes it only to such devices."""

    def profile_timer(
        self, unit: Unit, inputs: dict[str, Any]
    ) -> tuple[Callable[[], float], str] | None:
        """The profiler's timer of ``unit`` on these input buffers where this device is timed
        otherwise than by ``run`` (a function returning one run's seconds, and its name for
        the profile's key); None: the profiler times ``run``."""
        return None

    def queue_runner(self, ctx: RunContext, names: Sequence[str]) -> QueueRunner | None:
        """The runner of the plan's units on ``names`` (this device and its queue views)
        together (``Capabilities.runner`` names it), or None: they run one at a time, or
        the plan does not fit the runner."""
        return None

    def queue_measures(self) -> QueueMeasures | None:
        """What measures this device's queue views (``queue_measures.py``: ``queue_costs``
        and ``model_slowdown`` from the backend's parts); None where it has no queues."""
        return None

    def bind_thread(self) -> None:
        """Called once on the worker thread that drives this device (pin it to its cores)."""

    def forget(self, units: Sequence[Unit] | None = None) -> None:
        """Drop what this device keeps of ``units`` (all when None) for reuse by a later
        ``prepare``; a unit still held elsewhere keeps working. No-op where nothing is kept."""

    def close(self) -> None:
        """Release sessions, queues and buffers."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ({self.kind})>"


def unsupported_summary(
    device: Device, graph: OpGraph, nodes: Sequence[Node] | None = None
) -> str | None:
    """One line naming the nodes of ``nodes`` (default: all) that ``device`` cannot run,
    grouped by op type with their reasons, most frequent first, e.g. ``cl0 cannot run 3
    nodes: Resize ×2 (mode 'cubic'), NonZero ×1 (data-dependent output shape)``; None when
    it runs them all."""
    groups: dict[str, list[str]] = {}
    for n in graph.nodes if nodes is None else nodes:
        why = device.why_not(n, graph)
        if why is not None:
            groups.setdefault(n.op_type, []).append(_reason_text(n.op_type, why))
    if not groups:
        return None
    total = sum(len(v) for v in groups.values())
    parts = []
    for op, reasons in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        distinct = list(dict.fromkeys(reasons))
        shown = "; ".join(distinct[:2]) + (
            f"; {len(distinct) - 2} more reasons" if len(distinct) > 2 else ""
        )
        parts.append(f"{op} ×{len(reasons)} ({shown})")
    return f"{device.name} cannot run {total} node{'s' if total != 1 else ''}: {', '.join(parts)}"


def _reason_text(op_type: str, why: str) -> str:
    """A reason without the op type it would repeat ('Resize mode ...' -> 'mode ...')."""
    why = why.strip().rstrip(".")
    for lead in (f"{op_type} ", f"ai.onnx::{op_type} "):
        if why.startswith(lead) and len(why) > len(lead):
            return why[len(lead) :]
    return why


def is_accelerator(device: Device) -> bool:
    """Whether ``device`` runs hetlab's kernels (OpenCL, CUDA) rather than the host's CPU."""
    return device.capabilities().accelerator


def one_hardware_twice(devices: Sequence[Device]) -> tuple[Device, Device] | None:
    """Two of ``devices`` that are one piece of hardware reached through two drivers (an
    NVIDIA GPU as an OpenCL and as a CUDA device), or None. Queues of one device are views
    of it (same ``root``), not a second device."""
    seen: dict[str, Device] = {}
    for d in devices:
        hw = d.hardware_id()
        if hw is None:
            continue
        first = seen.setdefault(hw, d)
        if first.root is not d.root:
            return first, d
    return None
