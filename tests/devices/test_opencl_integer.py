"""MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv on OpenCL against onnxruntime
over their attribute space: int32 sums and requantized outputs equal onnxruntime's bit for
bit (``opencl_case.agree_exactly``). A combination onnxruntime runs is either computed so or
refused by ``why_not`` with a reason."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import agree_exactly, ints

pytest.importorskip("pyopencl")

QTYPES = [np.uint8, np.int8]


# --- MatMulInteger ----------------------------------------------------------------------
MM_SHAPES = {
    "2d": ((5, 9), (9, 6)),
    "batch": ((2, 3, 4, 9), (9, 6)),
    "both_batch": ((3, 4, 9), (3, 9, 5)),
    "broadcast": ((2, 1, 4, 9), (3, 9, 5)),
    "vec_a": ((9,), (9, 6)),
    "vec_b": ((4, 9), (9,)),
    "long_k": ((3, 700), (700, 4)),  # sums past 2**24: exact only in int32
}


@pytest.mark.parametrize("ta", QTYPES, ids=["a_u8", "a_i8"])
@pytest.mark.parametrize("tb", QTYPES, ids=["b_u8", "b_i8"])
@pytest.mark.parametrize("zps", ["none", "a", "both", "b_column"])
@pytest.mark.parametrize("shapes", list(MM_SHAPES))
def test_matmul_integer(dev, ta, tb, zps, shapes):
    sa, sb = MM_SHAPES[shapes]
    inits = {"b": ints(tb, *sb, seed=2)}
    ins = ["a", "b"]
    if zps != "none":
        inits["za"] = ints(ta, seed=3)
        ins.append("za")
    if zps == "both":
        inits["zb"] = ints(tb, 1, seed=4)
        ins.append("zb")
    if zps == "b_column":
        inits["zb"] = ints(tb, sb[-1] if len(sb) > 1 else 1, seed=4)
        ins += ["zb"] if len(ins) == 3 else ["", "zb"]
    node = helper.make_node("MatMulInteger", ins, ["y"])
    why = agree_exactly(dev, [node], {"a": ints(ta, *sa, seed=1)}, inits, opset=10)
    assert why is None, why


def test_matmul_integer_extreme_values_exact(dev):
    """Every product at its extreme (255 * 255 with zero points 0): int32 sums near 2**26."""
    a = np.full((2, 1000), 255, np.uint8)
    b = np.full((1000, 3), 255, np.uint8)
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    assert agree_exactly(dev, [node], {"a": a, "b": b}, opset=10) is None


def test_matmul_integer_per_row_a_zero_point_refused_or_exact(dev):
    node = helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"])
    inits = {"b": ints(np.uint8, 6, 3), "za": ints(np.uint8, 4, seed=5)}
    why = agree_exactly(dev, [node], {"a": ints(np.uint8, 4, 6)}, inits, opset=10)
    assert why is None or "zero point" in why


# --- ConvInteger ------------------------------------------------------------------------
CONV_CASES = [
    {},
    {"pads": [1, 1, 1, 1]},
    {"strides": [2, 2], "pads": [1, 0, 2, 1]},
    {"dilations": [2, 1], "pads": [2, 1, 2, 1]},
    {"group": 2},
    {"group": 4, "strides": [2, 1], "pads": [1, 1, 1, 1]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"auto_pad": "SAME_LOWER", "dilations": [1, 2]},
    {"auto_pad": "VALID", "strides": [1, 2]},
]


@pytest.mark.parametrize("kw", CONV_CASES, ids=str)
@pytest.mark.parametrize("tx", QTYPES, ids=["x_u8", "x_i8"])
@pytest.mark.parametrize("tw", QTYPES, ids=["w_u8", "w_i8"])
@pytest.mark.parametrize("zps", ["none", "x", "both", "w_channel"])
def test_conv_integer(dev, kw, tx, tw, zps):
    g = kw.get("group", 1)
    inits = {"w": ints(tw, 8, 8 // g, 3, 3, seed=2)}
    ins = ["x", "w"]
    if zps != "none":
        inits["zx"] = ints(tx, seed=3)
        ins.append("zx")
    if zps == "both":
        inits["zw"] = ints(tw, seed=4)
        ins.append("zw")
    if zps == "w_channel":
        inits["zw"] = ints(tw, 8, seed=4)
        ins.append("zw")
    node = helper.make_node("ConvInteger", ins, ["y"], **kw)
    why = agree_exactly(dev, [node], {"x": ints(tx, 2, 8, 9, 7, seed=1)}, inits, opset=10)
    assert why is None, why


@pytest.mark.parametrize(
    "kw", [{}, {"strides": [2], "pads": [1, 2]}, {"group": 2, "dilations": [2]}]
)
def test_conv_integer_1d(dev, kw):
    g = kw.get("group", 1)
    inits = {"w": ints(np.uint8, 6, 4 // g, 3, seed=2), "zx": np.uint8(100), "zw": np.uint8(7)}
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **kw)
    assert agree_exactly(dev, [node], {"x": ints(np.uint8, 1, 4, 19)}, inits, opset=10) is None


# --- QLinearMatMul, QLinearConv ---------------------------------------------------------
def _qparams(tx, tw, ty, k, per=1, seed=0):
    """Scales (no powers of two: the requantization rounds) and zero points for a product
    over ``k`` terms, with y's scale set so that most outputs fall inside y's range."""
    rng = np.random.default_rng(seed)
    xs, ws = np.float32(rng.uniform(0.01, 0.05)), rng.uniform(0.01, 0.05, per).astype(np.float32)
    ws = ws.reshape(()) if per == 1 else ws
    ys = np.float32(xs * float(np.max(ws)) * 128 * 128 * k / 200)
    return [xs, ints(tx, seed=seed + 1), ws, ints(tw, per, seed=seed + 2).reshape(ws.shape)], [
        ys,
        ints(ty, seed=seed + 3),
    ]


@pytest.mark.parametrize("ta", QTYPES, ids=["a_u8", "a_i8"])
@pytest.mark.parametrize("tb", QTYPES, ids=["b_u8", "b_i8"])
@pytest.mark.parametrize("ty", QTYPES, ids=["y_u8", "y_i8"])
@pytest.mark.parametrize("shapes,per", [("2d", 1), ("2d", 6), ("batch", 1), ("long_k", 1)])
def test_qlinear_matmul(dev, ta, tb, ty, shapes, per):
    sa, sb = MM_SHAPES[shapes]
    (xs, zx, ws, zw), (ys, zy) = _qparams(ta, tb, ty, sa[-1], per)
    inits = {"as": xs, "az": zx, "b": ints(tb, *sb, seed=2), "bs": ws, "bz": zw, "ys": ys, "yz": zy}
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    why = agree_exactly(dev, [node], {"a": ints(ta, *sa, seed=1)}, inits, opset=10)
    assert why is None, why


@pytest.mark.parametrize("kw", CONV_CASES[:6] + CONV_CASES[6:7], ids=str)
@pytest.mark.parametrize("tx,tw,ty", [("u8", "u8", "u8"), ("u8", "i8", "u8"), ("i8", "i8", "i8")])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("per", [1, 8], ids=["tensor", "channel"])
def test_qlinear_conv(dev, kw, tx, tw, ty, bias, per):
    t = {"u8": np.uint8, "i8": np.int8}
    g = kw.get("group", 1)
    (xs, zx, ws, zw), (ys, zy) = _qparams(t[tx], t[tw], t[ty], 9 * 8 // g, per, seed=4)
    if t[tw] == np.int8:
        zw = np.zeros_like(zw)  # onnxruntime takes int8 weights with zero points of 0 only
    inits = {"xs": xs, "xz": zx, "w": ints(t[tw], 8, 8 // g, 3, 3, seed=2), "ws": ws, "wz": zw}
    inits.update({"ys": ys, "yz": zy})
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits["b"] = np.random.default_rng(9).integers(-3000, 3000, 8).astype(np.int32)
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], **kw)
    why = agree_exactly(dev, [node], {"x": ints(t[tx], 2, 8, 9, 7, seed=1)}, inits, opset=10)
    assert why is None, why
