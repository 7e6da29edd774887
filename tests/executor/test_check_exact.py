"""The check's reference where onnxruntime saturates u8 x s8 integer products (AVX2 without
VNNI): exact on every CPU, and saying so where it had to be made exact; and a check that
never passes on a non-finite reference or result."""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from hetlab.cli import main as cli_main
from hetlab.commands.run_adaptive import check_status
from hetlab.executor.check import Reference, check_line, reference_outputs
from hetlab.graph.onnx_exact import SATURATION_NOTE, exact_source, onnxruntime_saturates
from tests.devices.int_reference import conv_integer, matmul_integer
from tests.executor.models import save

K = 64


def _model(path, nodes, inputs, outputs, inits=()) -> str:
    g = helper.make_graph(nodes, "m", inputs, outputs, list(inits))
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def _vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def _u8_by_s8(path, zb=None) -> str:
    """a[2, K] (uint8, an input) x b[K, 3] (int8 127, a weight), b's zero point per column."""
    inits = [numpy_helper.from_array(np.full((K, 3), 127, np.int8), "b")]
    ins = ["a", "b"]
    if zb is not None:
        inits.append(numpy_helper.from_array(zb, "zb"))
        ins += ["", "zb"]
    node = helper.make_node("MatMulInteger", ins, ["y"], name="mm")
    out = _vi("y", TensorProto.INT32, [2, 3])
    return _model(path, [node], [_vi("a", TensorProto.UINT8, [2, K])], [out], inits)


def test_the_reference_is_exact_on_every_cpu(tmp_path):
    """255 x 127 over 64 terms is 2,072,640 (onnxruntime without VNNI: 1,048,544)."""
    zb = np.array([0, -1, 5], np.int8)
    path = _u8_by_s8(tmp_path / "m.onnx", zb)
    a = np.full((2, K), 255, np.uint8)
    for optimize in (True, False):
        got = reference_outputs(path, {"a": a}, ["y"], optimize=optimize)["y"]
        want = matmul_integer(a, np.full((K, 3), 127, np.int8), None, zb)
        assert got.dtype == np.int32 and np.array_equal(got, want)
    assert want[0, 0] == 255 * 127 * K
    assert exact_source(path)[1] == (1 if onnxruntime_saturates() else 0)


def test_int8_operands_computed_at_run_time_are_made_exact_too(tmp_path):
    """A ConvInteger whose int8 input is the model's (onnxruntime multiplies it by the
    uint8 weights, which saturates without VNNI): shifted by nodes in the model."""
    x = np.random.default_rng(0).integers(-128, 128, (1, 16, 5, 5)).astype(np.int8)
    x[0, :, :3, :3] = -128
    w = np.full((2, 16, 3, 3), 255, np.uint8)
    node = helper.make_node("ConvInteger", ["x", "w", "zx"], ["y"], pads=[1, 1, 1, 1])
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.int8(3), "zx")]
    path = _model(
        tmp_path / "c.onnx",
        [node],
        [_vi("x", TensorProto.INT8, list(x.shape))],
        [_vi("y", TensorProto.INT32, None)],
        inits,
    )
    got = reference_outputs(path, {"x": x}, ["y"], optimize=False)["y"]
    assert np.array_equal(got, conv_integer(x, w, np.int8(3), None, pads=[1, 1, 1, 1]))


def test_a_model_without_such_products_is_left_as_it_is(tmp_path):
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    b = numpy_helper.from_array(np.full((K, 3), 200, np.uint8), "b")
    path = _model(
        tmp_path / "u.onnx",
        [node],
        [_vi("a", TensorProto.UINT8, [2, K])],
        [_vi("y", TensorProto.INT32, [2, 3])],
        [b],
    )
    assert exact_source(path) == (path, 0)


def test_cli_check_says_where_the_reference_was_made_exact(tmp_path, capsys):
    """cpu0 computes the same exact products, so the error is 0 on any CPU; the report names
    the exact reference only where onnxruntime saturates."""
    path = _u8_by_s8(tmp_path / "m.onnx")
    np.save(tmp_path / "a.npy", np.full((2, K), 255, np.uint8))
    args = ["run", path, "--device", "cpu0", "--check", "--repeat", "1"]
    args += ["--input", f"a={tmp_path / 'a.npy'}"]
    assert cli_main(args) == 0
    text = capsys.readouterr().out
    assert cli_main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["max_rel_err"] == 0.0 and doc["within_reference_spread"]
    if onnxruntime_saturates():
        assert SATURATION_NOTE in text and doc["saturating_products"] == 1
    else:
        assert SATURATION_NOTE not in text and "saturating_products" not in doc


def test_probe_agrees_with_onnxruntime_on_the_probed_product():
    """The probe's answer is what onnxruntime does to that product in a session of its own."""
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    g = helper.make_graph(
        [node],
        "p",
        [_vi("a", TensorProto.UINT8, [1, K])],
        [_vi("y", TensorProto.INT32, [1, 1])],
        [numpy_helper.from_array(np.full((K, 1), 127, np.int8), "b")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    got = int(sess.run(None, {"a": np.full((1, K), 255, np.uint8)})[0][0, 0])
    assert onnxruntime_saturates() == (got != 255 * 127 * K)


# --- non-finite values ------------------------------------------------------------------
def test_an_infinite_reference_never_passes_even_against_the_same_infinity(capsys):
    inf = np.array([1.0, np.inf], np.float32)
    doc = Reference({"y": inf}, float("inf")).report({"y": inf.copy()})
    assert doc["non_finite"] == {"reference": ["y"], "result": ["y"]}
    assert doc["within_reference_spread"] is False
    assert "FAILED" in check_line(doc) and "--input" in check_line(doc)
    assert check_status(doc) == 1
    assert "give real inputs with --input" in capsys.readouterr().err


def test_a_non_finite_result_against_a_finite_reference_fails_and_says_so(capsys):
    ref = Reference({"y": np.array([1.0, 2.0], np.float32)}, 0.0)
    doc = ref.report({"y": np.array([1.0, np.nan], np.float32)})
    assert doc["non_finite"] == {"result": ["y"]} and doc["within_reference_spread"] is False
    assert "run's output y is not finite" in check_line(doc)
    assert check_status(doc) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "check failed" in err and "--input" not in err


def test_nothing_is_within_an_infinite_spread():
    """onnxruntime with graph optimisations off infinite where it is finite with them on."""
    ref = Reference({"y": np.array([1.0, 2.0], np.float32)}, float("inf"))
    doc = ref.report({"y": np.array([1.0, 3.0], np.float32)})
    assert doc["within_reference_spread"] is False and "within" not in check_line(doc)


def test_a_finite_check_carries_no_verdict_and_exits_0():
    ref = Reference({"y": np.array([1.0, 2.0], np.float32)}, 0.0)
    doc = ref.report({"y": np.array([1.0, 2.0], np.float32)})
    assert "non_finite" not in doc and doc["within_reference_spread"]
    assert check_status(doc) == 0


def test_cli_run_on_inputs_that_make_the_reference_infinite_exits_non_zero(tmp_path, capsys):
    """log(0) = -inf in onnxruntime and on the device alike: the check fails, exit 1."""
    node = helper.make_node("Log", ["x"], ["y"])
    path = _model(
        tmp_path / "log.onnx",
        [node],
        [_vi("x", TensorProto.FLOAT, [4])],
        [_vi("y", TensorProto.FLOAT, [4])],
    )
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0, 0.0, 3.0], np.float32))
    args = ["run", path, "--device", "cpu0", "--check", "--repeat", "1"]
    args += ["--input", f"x={tmp_path / 'x.npy'}", "--json"]
    assert cli_main(args) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["non_finite"]["reference"] == ["y"]
    assert "not finite" in out.err and "--input" in out.err


def test_dynamic_quantization_stays_exact_through_onnxruntimes_fusions(tmp_path):
    """DynamicQuantizeLinear -> MatMulInteger (int8 weights, per-column zero points) -> Cast
    -> Mul, which onnxruntime fuses (graph optimisations on) into one integer op: the
    reference equals the exact product of onnxruntime's own quantized input."""
    rng = np.random.default_rng(1)
    w = rng.integers(-128, 128, (K, 5)).astype(np.int8)
    zb = rng.integers(-3, 4, 5).astype(np.int8)
    n = helper.make_node
    nodes = [
        n("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"]),
        n("MatMulInteger", ["q", "w", "qz", "zb"], ["acc"]),
        n("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        n("Mul", ["qs", "ws"], ["s"]),
        n("Mul", ["accf", "s"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(zb, "zb"),
        numpy_helper.from_array(np.float32(0.01), "ws"),
    ]
    out = [_vi("y", TensorProto.FLOAT, [3, 5]), _vi("q", TensorProto.UINT8, [3, K])]
    out += [_vi("qs", TensorProto.FLOAT, []), _vi("qz", TensorProto.UINT8, [])]
    path = _model(tmp_path / "d.onnx", nodes, [_vi("x", TensorProto.FLOAT, [3, K])], out, inits)
    x = rng.normal(0, 3, (3, K)).astype(np.float32)
    x[0] = 40.0  # far from the zero point: 255-ish codes against extreme weights
    for optimize in (False, True):
        got = reference_outputs(path, {"x": x}, ["y", "q", "qs", "qz"], optimize=optimize)
        acc = matmul_integer(got["q"], w, got["qz"], zb)
        want = acc.astype(np.float32) * (got["qs"] * np.float32(0.01))
        np.testing.assert_allclose(got["y"], want, rtol=1e-6, atol=0)
