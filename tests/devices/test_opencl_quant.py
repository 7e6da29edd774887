"""The quantized OpenCL ops against onnxruntime over their attribute space. Integer outputs
(uint8/int8 quantized values, int32 accumulators, zero points) must equal onnxruntime's bit
for bit; float outputs agree to float rounding. A combination onnxruntime runs is either
computed so or refused by ``why_not`` with a reason, never computed differently."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import make_model, reference, to_graph

pytest.importorskip("pyopencl")


def agree_exactly(dev, nodes, inputs, inits=None, opset=19, outputs=None) -> str | None:
    """Run ``nodes`` as one unit on ``dev`` and compare every output with onnxruntime's:
    equal for integer outputs, within 1e-6 relative for float ones. The refusal reason
    where ``dev`` refuses a node; skips what onnxruntime itself does not run."""
    inits = inits or {}
    outputs = list(outputs or [o for o in nodes[-1].output if o])
    model = make_model(nodes, inputs, inits, outputs, opset)
    try:
        refs = reference(model, inputs, outputs)
    except Exception:  # noqa: BLE001 - onnxruntime's own error types
        pytest.skip("onnxruntime does not run this combination")
    graph = to_graph(model, inputs, opset)
    for n in graph.nodes:
        why = dev.why_not(n, graph)
        if why is not None:
            assert not dev.supports(n, graph) and why.strip()
            return why
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    res = dev.run(unit, {k: inputs[k] for k in unit.inputs})
    for name, ref in zip(outputs, refs, strict=True):
        out = dev.copy_out(res.outputs[name])
        assert out.dtype == ref.dtype and out.shape == ref.shape, (name, out.dtype, ref.dtype)
        if ref.dtype.kind in "iu":
            bad = np.flatnonzero(out.reshape(-1) != ref.reshape(-1))
            assert bad.size == 0, (
                name,
                bad[:5],
                out.reshape(-1)[bad[:5]],
                ref.reshape(-1)[bad[:5]],
            )
        else:
            np.testing.assert_allclose(out, ref, rtol=1e-6, atol=0)
    return None


def ints(dtype, *shape, seed=0):
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


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
}


@pytest.mark.parametrize("case", list(DQL_INPUTS))
def test_dynamic_quantize_linear(dev, case):
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"])
    why = agree_exactly(dev, [node], {"x": DQL_INPUTS[case]}, opset=11)
    assert why is None, why


def test_dynamic_quantize_feeds_matmul_integer(dev):
    """DynamicQuantizeLinear's uint8 output and run-time zero point feed a MatMulInteger
    in the same unit."""
    x = np.random.default_rng(17).normal(0, 2, (5, 33)).astype(np.float32)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"]),
        helper.make_node("MatMulInteger", ["q", "w", "qz", "wz"], ["y"]),
    ]
    inits = {"w": ints(np.uint8, 33, 7, seed=3), "wz": np.uint8(128)}
    assert agree_exactly(dev, nodes, {"x": x}, inits, outputs=["q", "qs", "qz", "y"]) is None


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
