"""NVIDIA GPUs driven through CUDA (via CuPy), with hetlab's own kernels compiled by NVRTC.

``CudaDevice`` runs the OpenCL device's kernels (``source.to_cuda``) and builds its units
with the same op builders (``kernels.builder.UnitBuilder``): the builder only asks a device
for kernels, buffers and uploads. What CUDA adds is the graph: the executor captures a
plan's GPU units once into one CUDA graph (``graph.py``) and launches that
graph per run, so the host pays one launch per run instead of one per kernel, and units on
different streams (``queue_view``: ``cuda0.q1``...) run concurrently inside it.

``run`` launches a unit's kernels on the device's stream and waits: the path for plans the
graph cannot take. With ``node_times``, CUDA events around each launch time it on the
device clock, mapped to hetlab's clock from the run's first event (as the OpenCL device maps
its stamps). The profiler times a unit as a captured graph instead (``graph_timer``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hetlab.devices.capabilities import GRAPH, Capabilities
from hetlab.devices.cuda.blas import Blas, BlasGemm, tensor_precisions, timer_stream, uses_blas
from hetlab.devices.cuda.blas_lt import LtGemm
from hetlab.devices.cuda.graph import GraphRunner
from hetlab.devices.cuda.kernel import CudaBuffer, CudaKernel
from hetlab.devices.cuda.runtime import cupy_module, kernel_limits
from hetlab.devices.cuda.source import options_to_nvrtc, to_cuda
from hetlab.devices.cuda.streams import MEASURES, CudaStreams
from hetlab.devices.cuda.timing import GraphTimer, launch_node_times
from hetlab.devices.kernels import CLBuffer, source
from hetlab.devices.kernels.builder import UnitBuilder
from hetlab.devices.kernels.device import KernelDevice
from hetlab.devices.kernels.ops import why_not
from hetlab.devices.runner import RunContext
from hetlab.devices.unit import LazyNodeTimes, RunResult, Unit, now
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph


class CudaDevice(KernelDevice):
    """One CUDA device; see the module docstring."""

    kind = "cuda"
    launches_from_graph = True  # plans replay their launches from a captured graph (graph.py)
    library_epilogue = True  # cuBLASLt applies a product's bias and ReLU in its own call
    view_align = 256  # views start where cudaMalloc's buffers do, as cuBLASLt assumes

    def __init__(self, index: int, name: str) -> None:
        cp = cupy_module()
        self.cp, self.index, self.name = cp, index, name
        with cp.cuda.Device(index):
            props = cp.cuda.runtime.getDeviceProperties(index)
            self.stream = cp.cuda.Stream(non_blocking=True)
        self.props = props
        self.dev = kernel_limits(props)
        self._modules: dict[tuple[str, str], Any] = {}
        self.blas = Blas(cp, index)  # cuBLAS handles, shared with the stream views
        self.parent: CudaDevice | None = None
        self.queue_index = 0
        self.host_cores: list[int] | None = None
        self.unified = False

    def queue_view(self, index: int) -> CudaDevice:
        """Stream ``index`` of this device as a device of its own (``<name>.q<index>``)."""
        view = object.__new__(CudaDevice)
        view.__dict__.update(self.__dict__)
        view.name = f"{self.name}.q{index}"
        view.parent, view.queue_index = self, index
        with self.cp.cuda.Device(self.index):
            view.stream = self.cp.cuda.Stream(non_blocking=True)
        return view

    @property
    def root(self) -> CudaDevice:
        return self if self.parent is None else self.parent

    def capabilities(self) -> Capabilities:
        return Capabilities(
            accelerator=True,
            runner=GRAPH,
            node_times=True,
            writes_inputs=True,
            unified_memory=self.unified,
            precisions=tensor_precisions(int(self.props["major"])),
        )

    def library_gemm(self, spec: Any) -> BlasGemm | LtGemm | None:
        """cuBLAS's GEMM of ``spec``, or cuBLASLt's with its epilogue; None: no algorithm."""
        if not (spec.relu or spec.plane):
            return BlasGemm(self.blas, spec)
        try:
            return LtGemm(self.blas, spec) if self.library_epilogue else None
        except (RuntimeError, HetlabError):
            return None

    def queue_runner(self, ctx: RunContext, names: Sequence[str]) -> GraphRunner | None:
        """The units on this device's streams as one captured graph (``graph.py``)."""
        return GraphRunner.for_units(ctx, names)

    def queue_measures(self) -> CudaStreams:
        return MEASURES

    def info(self) -> dict[str, Any]:
        p, rt = self.props, self.cp.cuda.runtime
        name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
        return {
            "name": self.name,
            "kind": self.kind,
            "device": name,
            "driver_version": str(rt.driverGetVersion()),
            "runtime_version": str(rt.runtimeGetVersion()),
            "compute_capability": f"{p['major']}.{p['minor']}",
            "compute_units": int(p["multiProcessorCount"]),
            "global_mem_bytes": int(p["totalGlobalMem"]),
            "type": "GPU",
            "profiled_as": "captured graph",  # graph_timer; part of the profile cache's key
            **({"precision": self.precision} if self.precision != "fp32" else {}),
            "host_cores": self.host_cores,
            **({"queue_of": self.parent.name, "queue": self.queue_index} if self.parent else {}),
        }

    def hardware_id(self) -> str | None:
        """The GPU's PCI domain and bus (as OpenCL gives them); None where the props lack it."""
        p = self.props
        if "pciBusID" not in p:
            return None
        return f"pci:{int(p.get('pciDomainID', 0)):04x}:{int(p['pciBusID']):02x}"

    def bind_thread(self) -> None:
        self.cp.cuda.Device(self.index).use()
        if self.host_cores and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, self.host_cores)

    def supports(self, node: Node, graph: OpGraph) -> bool:
        return self.why_not(node, graph) is None

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        if node.op_type in ("If", "Loop", "Scan"):
            return f"{node.op_type}: control flow runs on the OpenCL and CPU devices only"
        return why_not(node, graph)

    # --- kernels ----------------------------------------------------------------
    def kernel(self, filename: str, name: str, options: str = "") -> CudaKernel:
        src = source(filename)
        key = (hashlib.sha1(src.encode()).hexdigest(), options)
        mod = self._modules.get(key)
        if mod is None:
            try:
                with self.cp.cuda.Device(self.index):
                    mod = self.cp.RawModule(code=to_cuda(src), options=options_to_nvrtc(options))
                    mod.compile()
            except Exception as e:  # noqa: BLE001 - NVRTC's log in one line
                raise HetlabError(
                    f"CUDA build of {filename} failed on {self.name}: {str(e)[:300]}"
                ) from None
            self._modules[key] = mod
        return CudaKernel(mod.get_function(name), name)

    # --- buffers ------------------------------------------------------------------
    def alloc(self, shape: Sequence[int], dtype: str = "float32") -> CudaBuffer:
        shape = tuple(int(s) for s in shape)
        n = max(int(np.prod(shape, dtype=np.int64)), 1)
        with self.cp.cuda.Device(self.index):
            raw = self.cp.empty((n,), dtype=dtype)
        return CudaBuffer(raw, shape, str(np.dtype(dtype)), self.name)

    def view(self, buf: CudaBuffer, offset: int, shape: tuple[int, ...], dtype: str) -> CudaBuffer:
        return buf.part(offset, shape, dtype)

    def write(self, dst: CudaBuffer, array: np.ndarray) -> None:
        a = np.ascontiguousarray(array, dtype=dst.dtype).reshape(-1)
        if a.size:
            dst.buf[: a.size].set(a, stream=self.stream)
            self.stream.synchronize()

    def copy_in(self, array: np.ndarray) -> CudaBuffer:
        array = np.asarray(array)
        buf = self.alloc(array.shape, str(array.dtype))
        self.write(buf, array)
        return buf

    def copy_out(self, buf: Any) -> np.ndarray:
        if not isinstance(buf, CudaBuffer):
            return np.asarray(buf)
        n = int(np.prod(buf.shape, dtype=np.int64))
        out = np.empty(buf.shape, dtype=buf.dtype)
        if n:
            buf.buf[:n].get(stream=self.stream, out=out.reshape(-1))
            self.stream.synchronize()
        return out

    def free(self, buf: Any) -> None:
        """Nothing: CuPy returns a buffer to its pool when the last reference goes."""

    def memory_bytes(self) -> int | None:
        """The device's global memory (``totalGlobalMem``)."""
        return int(self.props["totalGlobalMem"])

    # --- running ----------------------------------------------------------------------
    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit:
        with self.cp.cuda.Device(self.index):
            return UnitBuilder(self, graph, list(nodes)).build()

    def run(self, unit: Unit, inputs: dict[str, Any], node_times: bool | None = None) -> RunResult:
        """Launch the unit's kernels on this device's stream and wait; with ``node_times``,
        between CUDA events that time each launch."""
        h = self._bound(unit, inputs)
        cp = self.cp
        timed = self.times_nodes if node_times is None else node_times
        marks: list[Any] = []
        with cp.cuda.Device(self.index), self.stream:
            t0 = now()
            for L in h.launches:
                if timed:
                    marks.append(self.stream.record())
                L.kernel.launch(L.gsize, L.lsize)
            if timed:
                marks.append(self.stream.record())
            self.stream.synchronize()
            t1 = now()
        outs = {name: h.result(name) for name in unit.outputs}
        times = (
            LazyNodeTimes(lambda: launch_node_times(cp, h, marks, t0, t1, self.name))
            if timed
            else []
        )
        return RunResult(outputs=outs, start=t0, finish=t1, node_times=times)

    def graph_timer(self, unit: Unit, inputs: dict[str, Any]) -> Callable[[], float]:
        """A timer of ``unit`` as a plan's CUDA graph runs it (the profiler's timer here):
        its launches captured once into a graph; each call launches the graph, waits, and
        returns the seconds that took. Launched one by one from the host, each kernel would
        also pay its host launch, which a captured plan does not. The timer keeps the unit
        and its input buffers alive: a graph replayed after they were freed would read
        memory (weights, shape tables) that other allocations now own."""
        h = self._bound(unit, inputs)
        cp = self.cp
        with cp.cuda.Device(self.index):
            stream = self._capture_stream(h.launches)
            stream.begin_capture()
            try:
                with stream:
                    for L in h.launches:
                        L.kernel.launch(L.gsize, L.lsize)
            finally:
                graph = stream.end_capture()

        return GraphTimer(graph, stream, (unit, h, dict(inputs)))

    def _capture_stream(self, launches: Sequence[Any]) -> Any:
        """A fresh stream to capture ``launches`` on; the device's timer stream where they
        include cuBLAS products (``blas.timer_stream``)."""
        if not uses_blas(launches):
            return self.cp.cuda.Stream(non_blocking=True)
        return timer_stream(self)

    def profile_timer(
        self, unit: Unit, inputs: dict[str, Any]
    ) -> tuple[Callable[[], float], str] | None:
        """``graph_timer``: the profiler times a unit as a plan's captured graph runs it."""
        return self.graph_timer(unit, inputs), "captured graph"

    def _bound(self, unit: Unit, inputs: dict[str, Any]) -> Any:
        """The unit's handle with ``inputs`` bound to its input slots."""
        h = unit.handle
        for name in unit.inputs:
            if name not in inputs:
                raise HetlabError(f"unit on {self.name} needs input {name!r}; pass it to run()")
            h.bind(name, self._as_buffer(h, name, inputs[name]))
        return h

    def _as_buffer(self, h: Any, name: str, value: Any) -> CudaBuffer:
        if isinstance(value, CudaBuffer) and value.device.split(".q")[0] == self.root.name:
            return value
        if isinstance(value, CLBuffer):
            raise HetlabError(
                f"input {name!r} lives on {value.device}; copy it out before passing it to {self.name}"
            )
        stage = h.staging(name)
        self.write(stage, np.asarray(value))
        return stage

    def close(self) -> None:
        self._modules.clear()
        if self.parent is None:
            self.blas.close()


def discover() -> list[CudaDevice]:
    """Every CUDA device CuPy finds, named cuda0, cuda1...; none without CuPy or a GPU."""
    try:
        cp = cupy_module()
        count = cp.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no GPU: no CUDA devices
        return []
    return [CudaDevice(i, f"cuda{i}") for i in range(count)]
