"""QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear on OpenCL against onnxruntime
over their attribute space: quantized values and zero points equal onnxruntime's bit for
bit, float outputs agree to float rounding (``opencl_case.agree_exactly``). A combination
onnxruntime runs is either computed so or refused by ``why_not`` with a reason."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import agree_exactly, ints

pytest.importorskip("pyopencl")


def ties(*shape):
    """Values that are exact multiples of 0.125: with power-of-two scales, x / scale hits
    exact .5 ties (round half to even) and both saturation ends."""
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32) - n / 2).reshape(shape) * np.float32(0.375)


QTYPES = [np.uint8, np.int8]


# --- QuantizeLinear ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", QTYPES, ids=["u8", "i8"])
@pytest.mark.parametrize("zp", [True, False], ids=["zp", "no_zp"])
@pytest.mark.parametrize(
    "layout",
    [("tensor", None), ("axis", 1), ("axis", 0), ("axis", -1), ("axis", 2), ("len1", 1)],
    ids=str,
)
@pytest.mark.parametrize("opset", [13, 19, 21])
def test_quantize_linear(dev, dtype, zp, layout, opset):
    x = ties(2, 3, 4, 5)
    kind, axis = layout
    c = {None: 1, 1: 3, 0: 2, -1: 5, 2: 4}[axis] if kind == "axis" else 1
    scale = np.array([0.25, 0.5, 1.0, 0.125, 2.0][:c] * 1, np.float32)
    scale = scale if kind != "tensor" else np.array(0.5, np.float32)
    inits = {"s": scale}
    ins = ["x", "s"]
    if zp:
        inits["z"] = (np.arange(c) * 7 + (3 if dtype == np.uint8 else -5)).astype(dtype)
        inits["z"] = inits["z"].reshape(scale.shape)
        ins.append("z")
    kw = {"axis": axis} if axis is not None else {}
    if not zp and dtype == np.int8:
        if opset < 21:
            pytest.skip("without a zero point the output is uint8 before opset 21")
        kw["output_dtype"] = 3  # INT8
    node = helper.make_node("QuantizeLinear", ins, ["y"], **kw)
    why = agree_exactly(dev, [node], {"x": x}, inits, opset=opset)
    assert why is None, why


def test_quantize_linear_random_scale_and_runtime_params(dev):
    """A scale that is no power of two (the division rounds) and scale and zero point fed
    at run time."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-40, 40, (4, 3, 17)).astype(np.float32)
    s = np.array([0.173, 0.0917, 0.31], np.float32)
    z = np.array([120, 3, 250], np.uint8)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
    assert agree_exactly(dev, [node], {"x": x, "s": s, "z": z}) is None


def test_quantize_dequantize_long_rows(dev):
    """Rows of 48 along the axis: a CPU device's 16-element blocks all inside one scale's
    run, as vectors (the smaller cases above straddle runs)."""
    rng = np.random.default_rng(4)
    x = rng.uniform(-40, 40, (2, 5, 48)).astype(np.float32)
    s = rng.uniform(0.05, 0.4, 5).astype(np.float32)
    z = np.array([120, 3, 250, 0, 77], np.uint8)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
    assert agree_exactly(dev, [node], {"x": x}, {"s": s, "z": z}) is None
    q = rng.integers(0, 256, (2, 5, 48)).astype(np.uint8)
    node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)
    assert agree_exactly(dev, [node], {"q": q}, {"s": s, "z": z}) is None


def test_quantize_linear_blocked_refused(dev):
    x = ties(4, 6)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1, block_size=2)
    inits = {"s": np.full((4, 3), 0.5, np.float32), "z": np.zeros((4, 3), np.uint8)}
    assert "block" in agree_exactly(dev, [node], {"x": x}, inits, opset=21)


# --- DequantizeLinear -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32], ids=["u8", "i8", "i32"])
@pytest.mark.parametrize("zp", [True, False], ids=["zp", "no_zp"])
@pytest.mark.parametrize("axis", [None, 1, -1, 0], ids=str)
def test_dequantize_linear(dev, dtype, zp, axis):
    rng = np.random.default_rng(5)
    x = (
        rng.integers(-(2**20), 2**20, (3, 4, 5)).astype(dtype)
        if dtype == np.int32
        else ints(dtype, 3, 4, 5, seed=1)
    )
    c = {None: 1, 1: 4, -1: 5, 0: 3}[axis]
    scale = rng.uniform(0.01, 2.0, c if axis is not None else ()).astype(np.float32)
    inits = {"s": scale}
    ins = ["x", "s"]
    if zp:
        z = ints(dtype, c, seed=2) if dtype != np.int32 else np.zeros(c, dtype)
        inits["z"], _ = z.reshape(scale.shape), ins.append("z")
    kw = {"axis": axis} if axis is not None else {}
    node = helper.make_node("DequantizeLinear", ins, ["y"], **kw)
    assert agree_exactly(dev, [node], {"x": x}, inits) is None


def test_quantize_dequantize_chain(dev):
    """QuantizeLinear -> DequantizeLinear in one unit: the uint8 tensor between them never
    leaves the device."""
    x = np.random.default_rng(7).uniform(-3, 3, (2, 8, 6)).astype(np.float32)
    inits = {"s": np.float32(0.023), "z": np.uint8(131)}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
    ]
    assert agree_exactly(dev, nodes, {"x": x}, inits, outputs=["q", "y"]) is None


# --- DynamicQuantizeLinear --------------------------------------------------------------
DQL_INPUTS = {
    "mixed": np.random.default_rng(11).normal(0, 3, (2, 3, 40, 41)).astype(np.float32),
    "positive": np.random.default_rng(12).uniform(0.5, 9, (5, 77)).astype(np.float32),
    "negative": np.random.default_rng(13).uniform(-9, -0.5, (300,)).astype(np.float32),
    "zeros": np.zeros((3, 5), np.float32),
    "ties": ties(6, 85),
    "scalar": np.array(2.5, np.float32),
    # a CPU device's range in parts of whole vectors and a tail: the extremes near the end
    "long": np.concatenate([np.random.default_rng(14).normal(0, 1, 70001), [-7.5, 9.25]]).astype(
        np.float32
    ),
}


@pytest.mark.parametrize("case", list(DQL_INPUTS))
def test_dynamic_quantize_linear(dev, case):
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"])
    why = agree_exactly(dev, [node], {"x": DQL_INPUTS[case]}, opset=11)
    assert why is None, why


@pytest.mark.parametrize("wt", QTYPES, ids=["w_u8", "w_i8"])
def test_dynamic_quantize_feeds_matmul_integer(dev, wt):
    """DynamicQuantizeLinear's uint8 output and run-time zero point feed a MatMulInteger
    in the same unit (int8 weights: dynamic quantization's u8 x s8 product, compared with
    onnxruntime's exact result where its own saturates)."""
    x = np.random.default_rng(17).normal(0, 2, (5, 330)).astype(np.float32)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"]),
        helper.make_node("MatMulInteger", ["q", "w", "qz", "wz"], ["y"]),
    ]
    inits = {"w": ints(wt, 330, 7, seed=3), "wz": wt(100)}
    assert agree_exactly(dev, nodes, {"x": x}, inits, outputs=["q", "qs", "qz", "y"]) is None
