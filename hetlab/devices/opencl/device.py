"""OpenCL devices driven through pyopencl, with hetlab's own kernels (``kernels/*.cl``).

One ``OpenCLDevice`` per device pyopencl finds (``cl0``, ``cl1``... in platform order). Each
has in-order command queues, one without profiling for timed runs and one with profiling,
made on first use, for runs that time their nodes (``queue_for``), and a program cache (a program
is compiled once per device, keyed by its source and build options). ``queue_view(k)`` is
another queue of the same context, a device of its own (``cl0.q1``...).

Buffers are mapped where the device shares memory with the host (``buffers.py``); in a
run that times its nodes every launch returns an event, whose stamps give the node times
(``stamps.py``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.capabilities import AHEAD_OF_TIME, Capabilities
from hetlab.devices.kernels import CLBuffer, bounds, source
from hetlab.devices.kernels.builder import UnitBuilder
from hetlab.devices.kernels.device import KernelDevice
from hetlab.devices.kernels.ops import why_not
from hetlab.devices.opencl import pocl
from hetlab.devices.opencl.aot import AotRunner
from hetlab.devices.opencl.buffers import OpenCLBuffers
from hetlab.devices.opencl.if_runner import prepare_composite
from hetlab.devices.opencl.launcher import enqueue, enqueue_each
from hetlab.devices.opencl.queues import MEASURES, OpenCLQueues
from hetlab.devices.opencl.runtime import device_type, exact_divide_option, pyopencl
from hetlab.devices.opencl.stamps import run_node_times
from hetlab.devices.opencl.threads import Started, enabled, pin
from hetlab.devices.runner import RunContext
from hetlab.devices.unit import LazyNodeTimes, RunResult, Unit, now
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph


def discover() -> list[OpenCLDevice]:
    """Every OpenCL device pyopencl finds, named cl0, cl1... in platform order."""
    try:
        cl = pyopencl()
    except HetlabError:
        return []
    pocl.size_pool()  # before PoCL starts its pool, at the first enumeration
    try:
        with Started() as first:  # the ICD loader may start every vendor's driver here
            platforms = cl.get_platforms()
    except cl.Error:  # no ICD registered: no OpenCL platform at all
        return []
    out: list[OpenCLDevice] = []
    for p in platforms:
        with Started() as started:  # the driver's own threads (threads.py)
            try:
                devs = p.get_devices()
            except cl.Error:  # a platform without devices
                devs = []
            mine = [OpenCLDevice(d, f"cl{len(out) + i}") for i, d in enumerate(devs)]
        for d in mine:
            d.driver_threads |= started.tids
        out += mine
    if len(platforms) == 1:  # else whose the enumeration's threads are is unknown
        for d in out:
            d.driver_threads |= first.tids
    return out


class OpenCLDevice(OpenCLBuffers, KernelDevice):
    """An OpenCL device; see the module docstring for buffers and timing."""

    kind = "opencl"
    times_nodes = True  # a run not told otherwise times its nodes (the profiler's runs)

    def __init__(self, cl_device: Any, name: str) -> None:
        cl = pyopencl()
        self.cl = cl
        self.name = name
        self.dev = cl_device
        self.ctx = cl.Context([cl_device])
        # a queue without profiling for timed runs (a launch costs the host about half as
        # much there), and one with profiling, made on first use, for node timelines
        self.plain_queue = cl.CommandQueue(self.ctx)
        self._profiling_queue: Any = None
        self.unified = bool(getattr(cl_device, "host_unified_memory", False))
        # zero-copy map/unmap for the host's copies, except on a CPU device (buffers.py)
        self.map_io = self.unified and device_type(cl_device) != "CPU"
        # sub-buffers start at multiples of the base address alignment (given in bits)
        self.view_align = max(int(cl_device.mem_base_addr_align) // 8, 1)
        self._programs: dict[tuple[str, str, bool], Any] = {}
        self.build_options = exact_divide_option(cl, cl_device) + pocl.build_options(cl_device)
        # programs built from now on check every global index (bounds.py, HETLAB_CL_BOUNDS)
        self.bounds_check = bounds.from_env()
        self.parent: OpenCLDevice | None = None  # the device whose context a queue view shares
        self.queue_index = 0
        self.host_cores: list[int] | None = None  # where the driving thread runs (platform)
        # threads the driver started for this device, pinned to host_cores with the driving
        # thread (threads.py); not on a CPU device, whose driver threads do the compute
        self.driver_threads: set[int] = set()
        self.pin_driver_threads = enabled() and device_type(cl_device) != "CPU"
        self.cpu_kernels = device_type(cl_device) == "CPU"

    @property
    def queue(self) -> Any:
        """The queue of the host's copies (``buffers.py``), each of which waits for its end."""
        return self.plain_queue

    def queue_for(self, node_times: bool) -> Any:
        """The queue a run's launches go to: the profiling one where it times its nodes."""
        if not node_times:
            return self.plain_queue
        if self._profiling_queue is None:
            props = self.cl.command_queue_properties.PROFILING_ENABLE
            self._profiling_queue = self.cl.CommandQueue(self.ctx, properties=props)
        return self._profiling_queue

    def queue_view(self, index: int) -> OpenCLDevice:
        """Queue ``index`` of this device as a device of its own, named ``<name>.q<index>``:
        it shares the context (so buffers pass between queues without a copy), the compiled
        programs and the driving thread's cores, and has its own command queues."""
        view = object.__new__(OpenCLDevice)
        view.__dict__.update(self.__dict__)
        view.name = f"{self.name}.q{index}"
        view.parent, view.queue_index = self, index
        view.plain_queue = self.cl.CommandQueue(self.ctx)
        view._profiling_queue = None
        return view

    @property
    def root(self) -> OpenCLDevice:
        """The device that owns the context (itself unless this is a queue view)."""
        return self if self.parent is None else self.parent

    # --- identity -----------------------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(
            accelerator=True,
            runner=AHEAD_OF_TIME,
            node_times=True,
            writes_inputs=True,
            unified_memory=self.unified,
            share_key="opencl_share",
        )

    def queue_runner(self, ctx: RunContext, names: Sequence[str]) -> AotRunner | None:
        """The units on this context's queues enqueued ahead of time (``aot.py``)."""
        return AotRunner.for_units(ctx, names)

    def queue_measures(self) -> OpenCLQueues:
        return MEASURES

    def info(self) -> dict[str, Any]:
        """spec §5's entry, plus ``type``: GPU, CPU or ACCELERATOR (the OpenCL device type)."""
        d = self.dev
        return {
            "name": self.name,
            "kind": self.kind,
            "platform": d.platform.name.strip(),
            "device": d.name.strip(),
            "driver_version": d.driver_version.strip(),
            "device_version": d.version.strip(),
            "compute_units": int(d.max_compute_units),
            "global_mem_bytes": int(d.global_mem_size),
            "local_mem_bytes": int(d.local_mem_size),
            "max_work_group_size": int(d.max_work_group_size),
            "host_unified_memory": self.unified,
            "type": device_type(d),
            "host_cores": self.host_cores,
            **({"queue_of": self.parent.name, "queue": self.queue_index} if self.parent else {}),
            **({"driver_threads_pinned": self.pin_driver_threads} if self.host_cores else {}),
            **({"bounds_check": True} if self.bounds_check else {}),  # a debug build's timings
        }

    def hardware_id(self) -> str | None:
        """The GPU's PCI domain and bus from NVIDIA's attribute query; None elsewhere."""
        try:
            bus = int(self.dev.pci_bus_id_nv)
        except Exception:  # noqa: BLE001 - not an NVIDIA device: the query is refused
            return None
        try:
            domain = int(self.dev.pci_domain_id_nv)
        except Exception:  # noqa: BLE001 - older drivers answer the bus only
            domain = 0
        return f"pci:{domain:04x}:{bus:02x}"

    def bind_thread(self) -> None:
        """Pin the driving thread, and the driver's own threads, to ``host_cores`` when the
        platform gave some."""

        if self.host_cores and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, self.host_cores)
            self.pin_driver()

    def pin_driver(self) -> list[int]:
        """Pin the driver threads recorded so far to ``host_cores``; their thread ids."""
        if not (self.host_cores and self.pin_driver_threads):
            return []
        return pin(self.driver_threads, self.host_cores)

    def supports(self, node: Node, graph: OpGraph) -> bool:
        return self.why_not(node, graph) is None

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        return why_not(node, graph)

    # --- programs -----------------------------------------------------------
    def program(self, filename: str, options: str = "") -> Any:
        """The built program of ``kernels/<filename>`` with ``options`` (compiled once), with
        the bounds check while ``bounds_check`` is set (a program of its own)."""
        src = source(filename)
        checked = bool(self.bounds_check)
        key = (hashlib.sha1(src.encode()).hexdigest(), options, checked)
        prg = self._programs.get(key)
        if prg is None:
            try:
                opts = [*self.build_options, *options.split()]
                opts += bounds.OPTIONS if checked else []
                prg = self.cl.Program(self.ctx, src).build(options=opts)
            except self.cl.RuntimeError as e:
                raise HetlabError(
                    f"OpenCL build of {filename} failed on {self.name}: {str(e)[:300]}"
                ) from None
            self._programs[key] = prg
        return prg

    def kernel(self, filename: str, name: str, options: str = "") -> Any:
        """A fresh kernel object (own argument slots) of a cached program."""
        return self.cl.Kernel(self.program(filename, options), name)

    # --- running -------------------------------------------------------------
    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit:
        # program builds may start driver threads; recorded only where they are pinned
        with Started(self.pin_driver_threads) as started:
            if any(graph.node(v).op_type == "If" for v in nodes):  # control flow: if_runner.py
                unit = prepare_composite(self, graph, list(nodes))
            else:
                unit = UnitBuilder(self, graph, list(nodes)).build()
        if started.tids:
            self.driver_threads |= started.tids
            self.pin_driver()
        return unit

    def run(self, unit: Unit, inputs: dict[str, Any], node_times: bool | None = None) -> RunResult:
        """Enqueue the unit's prebuilt launches and wait. Outputs are the unit's own buffers,
        overwritten by its next run (copy them out or consume them before that)."""
        h = unit.handle
        timed = self.times_nodes if node_times is None else node_times
        if hasattr(h, "executed_nodes"):  # a unit with control flow (if_runner.Composite)
            return h.run(self, unit, inputs, timed)
        t0, events = self.enqueue_unit(unit, inputs, timed)
        self.queue_for(timed).finish()
        t1 = now()
        if h.checks is not None:
            h.checks.verify()
        outs = {name: h.result(name) for name in unit.outputs}
        times = LazyNodeTimes(lambda: run_node_times(h, events, t0, t1, self.name)) if timed else []
        return RunResult(outputs=outs, start=t0, finish=t1, node_times=times)

    def enqueue_unit(
        self, unit: Unit, inputs: dict[str, Any], timed: bool
    ) -> tuple[float, list[Any]]:
        """Bind the inputs of a kernel unit and enqueue its launches on ``queue_for(timed)``
        without waiting: its outputs (``unit.handle.result``) hold once that queue finishes.
        The time just before the first enqueue, and each launch's event where ``timed``."""
        h = unit.handle
        for name in unit.inputs:
            if name not in inputs:
                raise HetlabError(f"unit on {self.name} needs input {name!r}; pass it to run()")
            h.bind(name, self._as_buffer(h, name, inputs[name]))
        cl, q = self.cl, self.queue_for(timed)
        t0 = now()
        if timed:  # an event per launch, to time each
            return t0, enqueue_each(cl, q, h.launches)
        if h.launches:  # a unit of views only (Identity, Reshape...) enqueues nothing
            enqueue(cl, q, h.launches)
        return t0, []

    def _as_buffer(self, h: Any, name: str, value: Any) -> CLBuffer:
        if isinstance(value, CLBuffer) and value.device == self.name:
            return value
        if isinstance(value, CLBuffer):
            raise HetlabError(
                f"input {name!r} lives on {value.device}; copy it out before passing it to {self.name}"
            )
        stage = h.staging(name)
        self.write(stage, np.asarray(value))
        return stage

    def close(self) -> None:
        self._programs.clear()
