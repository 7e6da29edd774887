"""``If`` on the OpenCL device (devices/opencl/if_runner.py): both branches and a nested If
against onnxruntime, the branch cache, supports() refusing a body with an unsupported op,
and silero VAD end to end through ``hetlab run --device cl0 --check``."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("pyopencl")

from hetlab.devices.binding import bind, placement
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.executor.api import run
from hetlab.executor.check import max_rel_err, reference_outputs
from hetlab.executor.interpreter import Executor
from hetlab.graph.onnx_io import load

RNG = np.random.default_rng(7)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3
B = RNG.standard_normal(4).astype(np.float32)
W2 = RNG.standard_normal((4, 3, 1, 1)).astype(np.float32)


def _flatten_by_shape(p: str, src: str, out: str) -> list[onnx.NodeProto]:
    """Shape arithmetic: out = Reshape(src, [Shape(src)[0], -1])."""
    return [
        helper.make_node("Shape", [src], [f"{p}s"]),
        helper.make_node(
            "Constant", [], [f"{p}i0"], value=numpy_helper.from_array(np.array(0, np.int64))
        ),
        helper.make_node("Gather", [f"{p}s", f"{p}i0"], [f"{p}n"]),
        helper.make_node(
            "Constant", [], [f"{p}ax"], value=numpy_helper.from_array(np.array([0], np.int64))
        ),
        helper.make_node("Unsqueeze", [f"{p}n", f"{p}ax"], [f"{p}u"]),
        helper.make_node(
            "Constant", [], [f"{p}m1"], value=numpy_helper.from_array(np.array([-1], np.int64))
        ),
        helper.make_node("Concat", [f"{p}u", f"{p}m1"], [f"{p}shape"], axis=0),
        helper.make_node("Reshape", [src, f"{p}shape"], [out]),
    ]


def _out(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def _model(tmp_path, nested: bool = False, else_op: str = "Mul") -> str:
    """y = Relu(If(flag, then: conv(x, W)+relu, flattened; else: conv1x1(x * 2), flattened)).
    ``nested``: the then branch ends in an If on input ``flag2`` (Sigmoid / Tanh of the conv
    plus a model initializer read two scopes out)."""
    then_nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["t_c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["t_c"], ["t_r"]),
    ]
    if nested:
        inner_t = helper.make_graph(
            [helper.make_node("Sigmoid", ["t_r"], ["in_t"])], "inner_t", [], [_out("in_t")]
        )
        inner_e = helper.make_graph(
            [
                helper.make_node("Tanh", ["t_r"], ["in_e0"]),
                helper.make_node("Add", ["in_e0", "B4"], ["in_e"]),
            ],
            "inner_e",
            [],
            [_out("in_e")],
        )
        then_nodes.append(
            helper.make_node("If", ["flag2"], ["t_in"], then_branch=inner_t, else_branch=inner_e)
        )
        then_nodes += _flatten_by_shape("t_", "t_in", "t_out")
    else:
        then_nodes += _flatten_by_shape("t_", "t_r", "t_out")
    two = numpy_helper.from_array(np.array(2.0, np.float32))
    else_nodes = [
        helper.make_node("Constant", [], ["e_two"], value=two),
        helper.make_node(else_op, ["x", "e_two"] if else_op == "Mul" else ["x"], ["e_m"]),
        helper.make_node("Conv", ["e_m", "W2"], ["e_c"]),
    ]
    else_nodes += _flatten_by_shape("e_", "e_c", "e_out")
    then_g = helper.make_graph(then_nodes, "then", [], [_out("t_out")])
    else_g = helper.make_graph(else_nodes, "else", [], [_out("e_out")])
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5]),
        helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
    ]
    if nested:
        inputs.append(helper.make_tensor_value_info("flag2", TensorProto.BOOL, []))
    g = helper.make_graph(
        [
            helper.make_node("If", ["flag"], ["z"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Relu", ["z"], ["y"]),
        ],
        "if_case",
        inputs,
        [_out("y")],
        [
            numpy_helper.from_array(W, "W"),
            numpy_helper.from_array(B, "B"),
            numpy_helper.from_array(W2, "W2"),
            numpy_helper.from_array(B.reshape(4, 1, 1), "B4"),
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / ("nested.onnx" if nested else f"if_{else_op}.onnx")
    onnx.save(m, str(path))
    return str(path)


def _feed(flag: bool, flag2: bool | None = None) -> dict[str, np.ndarray]:
    f = {
        "x": np.random.default_rng(1).standard_normal((1, 3, 5, 5)).astype(np.float32),
        "flag": np.array(flag),
    }
    if flag2 is not None:
        f["flag2"] = np.array(flag2)
    return f


def _executor(path: str, dev, feed):
    g = load(path, values={k: v for k, v in feed.items() if k != "x"})
    devs = {"cpu0": OrtCpuDevice("cpu0", [0]), dev.name: dev}
    return g, Executor(bind(dev.name, g, devs))


def test_if_both_branches_match_onnxruntime_and_are_cached(dev, tmp_path):
    path = _model(tmp_path)
    g, ex = _executor(path, dev, _feed(True))
    if_node = next(n for n in g.nodes if n.op_type == "If")
    assert dev.supports(if_node, g), dev.why_not(if_node, g)
    assert {ex.plan.device_of[n.id] for n in g.nodes} == {dev.name}  # If and Relu, both on OpenCL
    with ex:
        for flag in (True, False, True):
            feed = _feed(flag)
            out = ex.run_once(feed).outputs
            ref = reference_outputs(path, feed, ["y"])
            assert max_rel_err(out, ref) <= 1e-4, flag
        assert not ex.fallbacks
        step = next(s for u in ex.units for k, s in u.handle.steps if k == "if")
        assert len(step.branches) == 2  # one build per branch, reused on the third run
        # else branch: Mul, Conv, Reshape on OpenCL; Shape, Gather, Unsqueeze, Concat on the host
        assert step.executed == {"device": 3, "shape": 4, "folded": 0}


def test_run_report_counts_if_body_nodes(dev, tmp_path):
    path = _model(tmp_path)
    feed = _feed(True)
    g = load(path, values={"flag": feed["flag"]})
    rep = run(
        g, dev.name, [OrtCpuDevice("cpu0", [0]), dev], repeat=1, warmup=0, check=True, inputs=feed
    )
    doc = rep.to_json()
    assert doc["max_rel_err"] <= 1e-4 and not doc["fallbacks"]
    assert doc["devices"] == {dev.name: 2}
    # If + Relu, plus Conv, Relu, Reshape of the then branch; 4 shape nodes resolved on the host
    assert doc["nodes_executed"] == {dev.name: 5}
    assert doc["host_resolved"] == {"shape_arithmetic": 4, "constant_folded": 0}
    assert doc["opencl_share"] == {
        "vertices": 1.0,
        "executed": 1.0,
        "with_host_resolved": round(5 / 9, 4),
    }


def test_nested_if_follows_a_non_float_input(dev, tmp_path):
    path = _model(tmp_path, nested=True)
    _, ex = _executor(path, dev, _feed(True, True))
    with ex:
        outs = {}
        for f2 in (True, False):
            feed = _feed(True, f2)
            outs[f2] = ex.run_once(feed).outputs["y"]
            assert max_rel_err({"y": outs[f2]}, reference_outputs(path, feed, ["y"])) <= 1e-4, f2
        assert not ex.fallbacks
        assert not np.allclose(outs[True], outs[False])  # Sigmoid vs Tanh + B4: both really ran
        step = next(s for u in ex.units for k, s in u.handle.steps if k == "if")
        assert len(step.branches) == 2  # flag2 is part of the then branch's signature
        assert step.executed["device"] == 2 + 1 + 2 + 1  # Conv, Relu, inner If (Tanh, Add), Reshape


def test_supports_refuses_if_with_unsupported_body_op(dev, tmp_path):
    path = _model(tmp_path, else_op="Hardmax")
    g = load(path, values={"flag": np.array(True)})
    if_node = next(n for n in g.nodes if n.op_type == "If")
    assert not dev.supports(if_node, g)
    why = dev.why_not(if_node, g)
    assert "else_branch" in why and "Hardmax" in why and "no OpenCL kernel" in why
    devs = {"cpu0": OrtCpuDevice("cpu0", [0]), dev.name: dev}
    device_of = placement(g, dev.name, devs).device_of
    assert device_of[if_node.id] == "cpu0"  # the If stays on the CPU; nothing found mid-run


def test_silero_vad_on_opencl(dev, capsys):
    from tests.thirdparty.conftest import model_path

    path = model_path("silero_vad")
    from hetlab.cli import main

    rc = main(
        [
            "run",
            path,
            "--device",
            dev.name,
            "--shape",
            "input=1x512",
            "--shape",
            "state=2x1x128",
            "--input",
            "sr=16000",
            "--check",
            "--repeat",
            "1",
            "--json",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["max_rel_err"] <= 1e-3
    assert not doc["fallbacks"]
    assert doc["devices"][dev.name] == 4  # Equal(sr) (an int64 compare), If, Identity, Identity
    assert doc["opencl_share"]["executed"] >= 0.8
    assert doc["nodes_executed"][dev.name] > 40  # the taken body's Conv/LSTM/... ran as kernels


def test_branch_failing_a_shape_limit_falls_back_to_cpu_and_is_reported(dev, tmp_path):
    """A limit only a built branch can check (here: an Add whose rank-7 operand shape
    arithmetic makes) is a run-time unit failure: the executor re-runs the unit on the CPU
    and says so."""
    n = numpy_helper.from_array(np.ones(7, np.int64))
    zero = numpy_helper.from_array(np.array([0], np.float32))
    body = lambda tag: helper.make_graph(
        [
            helper.make_node("Constant", [], [f"{tag}n"], value=n),
            helper.make_node("ConstantOfShape", [f"{tag}n"], [f"{tag}i"], value=zero),
            helper.make_node("Add", ["x", f"{tag}i"], [f"{tag}o"]),
        ],
        tag,
        [],
        [_out(f"{tag}o")],
    )
    g = helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], then_branch=body("t"), else_branch=body("e"))],
        "if_gather",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
        ],
        [_out("y")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = str(tmp_path / "if_gather.onnx")
    onnx.save(m, path)
    feed = _feed(True)
    graph, ex = _executor(path, dev, feed)
    assert (
        ex.plan.device_of[graph.nodes[0].id] == dev.name
    )  # the op type is supported: placed on OpenCL
    with ex:
        out = ex.run_once(feed).outputs
        assert max_rel_err(out, reference_outputs(path, feed, ["y"])) <= 1e-6
        (fb,) = ex.fallbacks.values()
        assert fb["device"] == dev.name and fb["to"] == "cpu0" and "rank 7 > 6" in fb["error"]


def test_supports_checks_attributes_of_body_ops_with_known_shapes(dev, tmp_path):
    """A body op whose shapes shape inference fixes gets its full OpenCL check up front."""
    pool = lambda tag, order: helper.make_graph(
        [helper.make_node("MaxPool", ["x"], [f"{tag}o"], kernel_shape=[2, 2], storage_order=order)],
        tag,
        [],
        [_out(f"{tag}o")],
    )
    for order, ok in ((0, True), (1, False)):
        g = helper.make_graph(
            [
                helper.make_node(
                    "If", ["flag"], ["y"], then_branch=pool("t", 0), else_branch=pool("e", order)
                )
            ],
            "if_pool",
            [
                helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5]),
                helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
            ],
            [_out("y")],
        )
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        path = str(tmp_path / f"if_pool{order}.onnx")
        onnx.save(m, path)
        graph = load(path, values={"flag": np.array(True)})
        why = dev.why_not(graph.nodes[0], graph)
        assert (why is None) == ok, why
        if not ok:
            assert "else_branch" in why and "storage_order" in why
