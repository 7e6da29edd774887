"""An in-test onnxruntime device, a device with a known link cost, and tiny-model helpers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hetlab.devices.base import Device
from hetlab.devices.capabilities import Capabilities
from hetlab.devices.unit import RunResult, Unit, now
from hetlab.graph.ir import Node, OpGraph


class OrtTestDevice(Device):
    """Runs units as onnxruntime sessions over ``extract`` (one thread); counts prepares."""

    kind = "test-ort"

    def __init__(self, name: str, refuse: Sequence[str] = (), tag: str = "") -> None:
        self.name = name
        self.refuse = set(refuse)
        self.tag = tag
        self.prepared: list[tuple[str, ...]] = []

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "threads": 1,
            "tag": self.tag,
            "refuse": sorted(self.refuse),
        }

    def capabilities(self) -> Capabilities:
        return Capabilities()  # a host device: onnxruntime sessions on the host's memory

    def supports(self, node: Node, graph: OpGraph) -> bool:
        return node.op_type not in self.refuse

    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit:
        import onnxruntime as ort

        from hetlab.graph.onnx_io import extract

        self.prepared.append(tuple(nodes))
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 3
        sess = ort.InferenceSession(
            extract(graph, list(nodes)), so, providers=["CPUExecutionProvider"]
        )
        return Unit(
            self.name,
            list(nodes),
            [i.name for i in sess.get_inputs()],
            [o.name for o in sess.get_outputs()],
            sess,
        )

    def run(self, unit: Unit, inputs: dict[str, Any]) -> RunResult:
        t0 = now()
        outs = unit.handle.run(unit.outputs, {t: inputs[t] for t in unit.inputs})
        return RunResult(dict(zip(unit.outputs, outs, strict=False)), t0, now())


def _busy(seconds: float) -> None:
    end = now() + seconds
    while now() < end:
        pass


class LinkDevice(Device):
    """A host-memory device whose ``copy_in`` costs ``latency_ms + bytes / bw`` (busy wait)."""

    kind = "test-link"

    def __init__(
        self, name: str, latency_ms: float = 0.0, bw_bytes_per_ms: float | None = None
    ) -> None:
        self.name = name
        self.latency_ms = latency_ms
        self.bw = bw_bytes_per_ms

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "lat": self.latency_ms, "bw": self.bw}

    def capabilities(self) -> Capabilities:
        return Capabilities()

    def supports(self, node: Node, graph: OpGraph) -> bool:
        return True

    def copy_in(self, array: Any) -> Any:
        ms = self.latency_ms + (array.nbytes / self.bw if self.bw else 0.0)
        _busy(ms / 1e3)
        return array  # no real copy: the busy wait is the whole cost

    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit:
        raise NotImplementedError

    def run(self, unit: Unit, inputs: dict[str, Any]) -> RunResult:
        raise NotImplementedError


def save_model(
    path: Path, nodes: list, inputs: list, outputs: list, inits: list | None = None
) -> str:
    g = helper.make_graph(nodes, "t", inputs, outputs, inits or [])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.save(m, str(path))
    return str(path)


def vi(name: str, shape: list, dtype: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name: str, arr: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(arr, name)


class OwnedOutputsDevice(OrtTestDevice):
    """Like OrtTestDevice, but its handle hides the session (the generic ``device.run`` timer)
    and, like OpenCL, its outputs are its own: freeing one is an error."""

    kind = "test-owned"

    class _Handle:
        def __init__(self, sess: Any) -> None:
            self.sess = sess

    def prepare(self, graph: OpGraph, nodes: Sequence[str]) -> Unit:
        u = super().prepare(graph, nodes)
        u.handle = self._Handle(u.handle)
        return u

    def run(self, unit: Unit, inputs: dict[str, Any]) -> RunResult:
        t0 = now()
        outs = unit.handle.sess.run(unit.outputs, {t: inputs[t] for t in unit.inputs})
        return (
            RunResult({k: ("owned", k) for k in unit.outputs}, t0, now())
            if outs
            else RunResult({}, t0, now())
        )

    def free(self, buf: Any) -> None:
        if isinstance(buf, tuple) and buf and buf[0] == "owned":
            raise AssertionError("freed a buffer the unit owns")
