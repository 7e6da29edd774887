"""Whether a device runs a node, and why not: the CPU device asks onnxruntime itself (ops it
runs as functions, such as HardSwish, are accepted); refusals are grouped by op in one line."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from hetlab.cli import main as cli_main
from hetlab.devices import ort_refusals
from hetlab.devices.base import Device, unsupported_summary
from hetlab.devices.binding import bind
from hetlab.devices.capabilities import Capabilities
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.devices.ort_refusals import ort_cpu_ops
from hetlab.errors import HetlabError
from hetlab.executor import Executor
from hetlab.graph.ir import Node, OpGraph
from hetlab.graph.onnx_io import load
from hetlab.schedulers.plan import Plan

CORE = [min(os.sched_getaffinity(0))]


def one_node(path, op, dtype=TensorProto.FLOAT, opset=14, shape=(1, 8, 4, 4), **attrs) -> str:
    n = helper.make_node(op, ["x"], ["y"], name=f"{op}.0", **attrs)
    g = helper.make_graph(
        [n],
        op.lower(),
        [helper.make_tensor_value_info("x", dtype, list(shape))],
        [helper.make_tensor_value_info("y", dtype, list(shape))],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, str(path))
    return str(path)


def test_hardswish_has_no_kernel_but_a_session_runs_it(tmp_path):
    assert ("", "HardSwish") not in ort_cpu_ops()  # onnxruntime runs it as a function
    g = load(one_node(tmp_path / "hs.onnx", "HardSwish"))
    dev = OrtCpuDevice("cpu0", CORE)
    assert dev.supports(g.nodes[0], g) and dev.why_not(g.nodes[0], g) is None


def test_cli_runs_hardswish_on_cpu0_with_check(tmp_path, capsys):
    path = one_node(tmp_path / "hs.onnx", "HardSwish")
    assert cli_main(["run", path, "--device", "cpu0", "--check", "--repeat", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["devices"] == {"cpu0": 1} and doc["max_rel_err"] == 0.0


def test_refusal_names_onnxruntime_reason_and_is_cached(tmp_path, monkeypatch):
    g = load(one_node(tmp_path / "s.onnx", "Sigmoid", dtype=TensorProto.BFLOAT16, opset=13))
    dev = OrtCpuDevice("cpu0", CORE)
    why = dev.why_not(g.nodes[0], g)
    assert why == "no onnxruntime CPU implementation for inputs of type bfloat16"
    calls = []
    monkeypatch.setattr(ort_refusals, "_session_refusal", lambda *a: calls.append(a))
    assert dev.why_not(g.nodes[0], g) == why and not calls  # answered from the cache


def test_signature_keys_attributes_and_dtypes(tmp_path):
    a = load(one_node(tmp_path / "a.onnx", "HardSigmoid", alpha=0.2))
    b = load(one_node(tmp_path / "b.onnx", "HardSigmoid", alpha=0.3))
    c = load(one_node(tmp_path / "c.onnx", "HardSigmoid", alpha=0.2))
    sig = ort_refusals._signature
    assert sig(a.nodes[0], a) != sig(b.nodes[0], b) and sig(a.nodes[0], a) == sig(c.nodes[0], c)


class Picky(Device):
    """Runs everything but Resize with mode 'cubic' and NonZero."""

    name, kind = "picky", "test"

    def info(self):
        return {"name": self.name, "kind": self.kind}

    def capabilities(self):
        return Capabilities()

    def supports(self, node, graph):
        return self.why_not(node, graph) is None

    def why_not(self, node, graph):
        if node.op_type == "Resize" and node.attrs.get("mode") == "cubic":
            return "Resize mode 'cubic' unsupported"
        if node.op_type == "Resize" and node.attrs.get("antialias"):
            return "antialias=1 when downsampling unsupported"
        if node.op_type == "NonZero":
            return "data-dependent output shape"
        return None

    def prepare(self, graph, nodes):
        raise NotImplementedError

    def run(self, unit, inputs):
        raise NotImplementedError


def _graph(*nodes: Node) -> OpGraph:
    return OpGraph(name="g", nodes=list(nodes), edges=[])


def test_summary_groups_by_op_most_frequent_first():
    g = _graph(
        Node("n1", "NonZero", [], []),
        Node("r1", "Resize", [], [], attrs={"mode": "cubic"}),
        Node("c1", "Conv", [], []),
        Node("r2", "Resize", [], [], attrs={"mode": "cubic"}),
        Node("r3", "Resize", [], [], attrs={"antialias": 1}),
    )
    line = unsupported_summary(Picky(), g)
    assert line == (
        "picky cannot run 4 nodes: Resize ×3 (mode 'cubic' unsupported; antialias=1 when "
        "downsampling unsupported), NonZero ×1 (data-dependent output shape)"
    )
    assert unsupported_summary(Picky(), g, [g.node("c1")]) is None


def test_executor_refusal_is_one_grouped_line(tmp_path):
    g = load(one_node(tmp_path / "s.onnx", "Sigmoid", dtype=TensorProto.BFLOAT16, opset=13))
    dev = OrtCpuDevice("cpu0", CORE)
    with pytest.raises(HetlabError, match=r"cpu0 cannot run 1 node: Sigmoid ×1 \(") as e:
        Executor(bind(Plan.of({"Sigmoid.0": "cpu0"}, g.topo_order()), g, [dev]))
    assert "\n" not in str(e.value)


def test_opencl_refusals_group_by_reason(dev, tmp_path):
    nodes = [
        helper.make_node("Resize", ["x", "", "s"], [f"y{i}"], mode="cubic", name=f"r{i}")
        for i in range(2)
    ] + [helper.make_node("NonZero", ["x"], ["nz"], name="nz")]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in ("y0", "y1")]
        + [helper.make_tensor_value_info("nz", TensorProto.INT64, None)],
        [onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")],
    )
    onnx.save(
        helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "r.onnx"
    )
    line = unsupported_summary(dev, load(tmp_path / "r.onnx"))
    assert line.startswith(f"{dev.name} cannot run 3 nodes: Resize ×2 (mode 'cubic' unsupported")
    assert "NonZero ×1 (data-dependent output shape" in line
