"""MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv on OpenCL over their attribute
space and every zero-point layout ONNX allows: int32 sums and requantized outputs equal the
exact integer reference bit for bit, and so does onnxruntime's where it runs the combination
(``opencl_case.agree_with_exact``; onnxruntime's saturating u8 x s8 products made exact, as
``--check`` makes them). A combination is either computed so or refused by ``why_not`` with
a reason."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import agree_with_exact, ints

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
    # split over K (K >= 64) with several batches: groups along the launch's third dimension
    "long_k_batch": ((2, 3, 130), (2, 130, 21)),
    # a CPU device's blocks of 6 rows x 16 columns: full ones, and edges in both directions
    "blocks": ((2, 13, 40), (40, 37)),
}


def _row_zero_point(t, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """A's zero point per row: ``[M]`` for a 2-D A, ``[1.., M, 1]`` above."""
    if len(shape) == 1:
        return ints(t, 1, seed=seed)
    z = ints(t, shape[-2], seed=seed)
    return z if len(shape) == 2 else z.reshape([1] * (len(shape) - 2) + [shape[-2], 1])


def _column_zero_point(t, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """B's zero point per column: ``[N]`` for a 2-D B, ``[1.., 1, N]`` above."""
    if len(shape) == 1:
        return ints(t, 1, seed=seed)
    z = ints(t, shape[-1], seed=seed)
    return z if len(shape) == 2 else z.reshape([1] * (len(shape) - 1) + [shape[-1]])


ZPS = ["none", "a", "both", "b_column", "a_row", "a_row_b_column"]


@pytest.mark.parametrize("ta", QTYPES, ids=["a_u8", "a_i8"])
@pytest.mark.parametrize("tb", QTYPES, ids=["b_u8", "b_i8"])
@pytest.mark.parametrize("zps", ZPS)
@pytest.mark.parametrize("shapes", list(MM_SHAPES))
def test_matmul_integer(dev, ta, tb, zps, shapes):
    sa, sb = MM_SHAPES[shapes]
    inits = {"b": ints(tb, *sb, seed=2)}
    za = {"a": ints(ta, seed=3), "both": ints(ta, seed=3), "a_row": _row_zero_point(ta, sa, 3)}
    za["a_row_b_column"] = za["a_row"]
    zb = {"both": ints(tb, 1, seed=4), "b_column": _column_zero_point(tb, sb, 4)}
    zb["a_row_b_column"] = zb["b_column"]
    ins = ["a", "b", "za" if zps in za else "", "zb" if zps in zb else ""]
    inits.update({"za": za[zps]} if zps in za else {})
    inits.update({"zb": zb[zps]} if zps in zb else {})
    node = helper.make_node(
        "MatMulInteger", ins[: 4 if zps in zb else 3 if zps in za else 2], ["y"]
    )
    why = agree_with_exact(dev, node, {"a": ints(ta, *sa, seed=1)}, inits)
    assert why is None, why


def test_matmul_integer_extreme_values_exact(dev):
    """Every product at its extreme (255 * 255, 255 * -128 with zero points 0): int32 sums
    near 2**26, where onnxruntime without VNNI saturates the second."""
    a = np.full((2, 1000), 255, np.uint8)
    for b in (np.full((1000, 3), 255, np.uint8), np.full((1000, 3), -128, np.int8)):
        node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
        assert agree_with_exact(dev, node, {"a": a}, {"b": b}) is None


def test_matmul_integer_per_batch_zero_point_refused(dev):
    """A zero point per batch and row ([D, M, 1] with D > 1): refused, with a reason."""
    node = helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"])
    inits = {"b": ints(np.uint8, 3, 6, 5), "za": ints(np.uint8, 3, 4, 1, seed=5)}
    why = agree_with_exact(dev, node, {"a": ints(np.uint8, 3, 4, 6)}, inits)
    assert why is not None and "zero point" in why


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
    why = agree_with_exact(dev, node, {"x": ints(tx, 2, 8, 9, 7, seed=1)}, inits)
    assert why is None, why


@pytest.mark.parametrize(
    "kw", [{}, {"strides": [2], "pads": [1, 2]}, {"group": 2, "dilations": [2]}]
)
def test_conv_integer_1d(dev, kw):
    g = kw.get("group", 1)
    inits = {"w": ints(np.uint8, 6, 4 // g, 3, seed=2), "zx": np.uint8(100), "zw": np.uint8(7)}
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **kw)
    assert agree_with_exact(dev, node, {"x": ints(np.uint8, 1, 4, 19)}, inits) is None


# rows of 40 outputs: a CPU device's 16-wide blocks inside a row (stride 1 and 2), across rows
# and at their edges; 16 output channels: blocks of 6 of them and the rest
WIDE_CASES = [{}, {"strides": [1, 2], "pads": [1, 1, 1, 1]}, {"group": 2, "pads": [0, 2, 0, 1]}]


@pytest.mark.parametrize("kw", WIDE_CASES, ids=str)
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.int8), (np.int8, np.uint8)], ids=["u8i8", "i8u8"])
@pytest.mark.parametrize("const_w", [True, False], ids=["const_w", "input_w"])
def test_conv_integer_wide(dev, kw, tx, tw, const_w):
    g = kw.get("group", 1)
    w = {"w": ints(tw, 16, 4 // g, 3, 3, seed=2)}
    inits = {"zx": ints(tx, seed=3), "zw": ints(tw, 16, seed=4), **(w if const_w else {})}
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **kw)
    x = {"x": ints(tx, 2, 4, 5, 40, seed=1), **({} if const_w else w)}
    why = agree_with_exact(dev, node, x, inits)
    assert why is None, why


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
@pytest.mark.parametrize(
    "shapes,per,zrow",
    [
        ("2d", 1, False),
        ("2d", 6, False),
        ("2d", 6, True),
        ("batch", 1, True),
        ("long_k", 4, False),
        ("blocks", 37, True),
    ],
)
def test_qlinear_matmul(dev, ta, tb, ty, shapes, per, zrow):
    sa, sb = MM_SHAPES[shapes]
    (xs, zx, ws, zw), (ys, zy) = _qparams(ta, tb, ty, sa[-1], per)
    inits = {"as": xs, "az": zx, "b": ints(tb, *sb, seed=2), "bs": ws, "bz": zw, "ys": ys, "yz": zy}
    if zrow:  # A's zero point per row (its scale stays per tensor)
        inits["az"] = _row_zero_point(ta, sa, 7)
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    why = agree_with_exact(dev, node, {"a": ints(ta, *sa, seed=1)}, inits)
    assert why is None, why


@pytest.mark.parametrize("kw", CONV_CASES[:6] + CONV_CASES[6:7], ids=str)
@pytest.mark.parametrize(
    "tx,tw,ty", [("u8", "u8", "u8"), ("u8", "i8", "u8"), ("u8", "i8", "i8"), ("i8", "i8", "i8")]
)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("per", [1, 8], ids=["tensor", "channel"])
def test_qlinear_conv(dev, kw, tx, tw, ty, bias, per):
    t = {"u8": np.uint8, "i8": np.int8}
    g = kw.get("group", 1)
    (xs, zx, ws, zw), (ys, zy) = _qparams(t[tx], t[tw], t[ty], 9 * 8 // g, per, seed=4)
    inits = {"xs": xs, "xz": zx, "w": ints(t[tw], 8, 8 // g, 3, 3, seed=2), "ws": ws, "wz": zw}
    inits.update({"ys": ys, "yz": zy})
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits["b"] = np.random.default_rng(9).integers(-3000, 3000, 8).astype(np.int32)
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], **kw)
    why = agree_with_exact(dev, node, {"x": ints(t[tx], 2, 8, 9, 7, seed=1)}, inits)
    assert why is None, why
