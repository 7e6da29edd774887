"""onnxruntime's contrib ops that dynamic quantization leaves in a model (domain
com.microsoft): MatMulIntegerToFloat, DynamicQuantizeMatMul and DynamicQuantizeLSTM on the
kernel devices, over their type and zero-point layouts, against the exact reference (the
int64 sums, then onnxruntime's float32 epilogue: ``int_reference``) and onnxruntime (its
saturating u8 x s8 products made exact); and models as ``quantize_dynamic`` writes them,
before and after onnxruntime's optimiser fuses them, which run on the device whole."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from hetlab.graph import onnx_io
from hetlab.graph.onnx_exact import exact_source
from tests.devices.opencl_case import (
    agree_with_exact,
    ints,
    make_model,
    rel_err,
    rnd,
    run_case,
    to_graph,
)

pytest.importorskip("pyopencl")

MS = "com.microsoft"
QTYPES = [np.uint8, np.int8]
SHAPES = {
    "2d": ((5, 9), (9, 6)),
    "batch": ((2, 3, 4, 9), (9, 6)),
    "both_batch": ((3, 4, 9), (3, 9, 5)),  # B's per-column parameters: refused
    "one_matrix_b": ((3, 4, 9), (1, 9, 5)),
    "vec_a": ((9,), (9, 6)),
    "long_k": ((3, 130), (130, 21)),  # quant.cl's split-K kernel
}
# (A's zero point, B's zero point, B's scale, a bias)
MM_LAYOUTS = [
    ("none", "none", "tensor", False),
    ("tensor", "tensor", "tensor", True),
    ("tensor", "column", "column", False),
    ("none", "column", "column", True),
    ("tensor", "none", "column", True),
]


def _b_params(tb, sb, zp: str, scale: str, bias: bool, seed: int = 4) -> dict:
    """B, its scale, zero point and a bias, per tensor or per column (``[N]``, or
    ``[1.., 1, N]`` for a batched B)."""
    n = sb[-1] if len(sb) > 1 else 1
    col = [*sb[:-2], 1, n] if len(sb) > 2 else [n]  # per column of each matrix of B
    rng = np.random.default_rng(seed)
    out = {"b": ints(tb, *sb, seed=2)}
    out["bs"] = rng.uniform(0.01, 0.05, col if scale == "column" else ()).astype(np.float32)
    if zp != "none":
        out["bz"] = ints(tb, *(col if zp == "column" else ()), seed=seed + 1)
    if bias:
        out["bias"] = rng.uniform(-2, 2, n).astype(np.float32)
    return out


@pytest.mark.parametrize("ta", QTYPES, ids=["a_u8", "a_i8"])
@pytest.mark.parametrize("tb", QTYPES, ids=["b_u8", "b_i8"])
@pytest.mark.parametrize("layout", MM_LAYOUTS, ids=str)
@pytest.mark.parametrize("shapes", list(SHAPES))
def test_matmul_integer_to_float(dev, ta, tb, layout, shapes):
    sa, sb = SHAPES[shapes]
    za, zb, scale, bias = layout
    inits = _b_params(tb, sb, zb, scale, bias)
    inits["as"] = np.float32(0.0173)
    if za != "none":
        inits["az"] = ints(ta, seed=3)
    ins = ["a", "b", "as", "bs", "az" if za != "none" else "", "bz" if zb != "none" else ""]
    ins += ["bias"] if bias else []
    node = helper.make_node("MatMulIntegerToFloat", ins, ["y"], domain=MS)
    _agree(dev, node, {"a": ints(ta, *sa, seed=1)}, inits, per_matrix="column" in layout)


def _agree(dev, node, inputs, inits, per_matrix: bool) -> None:
    """The exact reference where the kernels take the layout; a refusal where B's
    parameters differ per matrix of B."""
    if per_matrix and len(inits["b"].shape) > 2 and inits["b"].shape[0] > 1:
        why = _why_not(dev, node, inputs, inits)
        assert why is not None and "per column" in why, why
        return
    why = agree_with_exact(dev, node, inputs, inits, opset=17)
    assert why is None, why


# (B's zero point, B's scale, a bias)
DQ_LAYOUTS = [
    ("none", "tensor", False),
    ("tensor", "tensor", True),
    ("column", "column", True),
    ("none", "column", False),
]


@pytest.mark.parametrize("tb", QTYPES, ids=["b_u8", "b_i8"])
@pytest.mark.parametrize("layout", DQ_LAYOUTS, ids=str)
@pytest.mark.parametrize("shapes", list(SHAPES))
def test_dynamic_quantize_matmul(dev, tb, layout, shapes):
    sa, sb = SHAPES[shapes]
    zb, scale, bias = layout
    inits = _b_params(tb, sb, zb, scale, bias)
    ins = ["a", "b", "bs", "bz" if zb != "none" else ""] + (["bias"] if bias else [])
    node = helper.make_node("DynamicQuantizeMatMul", ins, ["y"], domain=MS)
    _agree(dev, node, {"a": rnd(*sa, lo=-3, hi=5)}, inits, per_matrix="column" in layout)


@pytest.mark.parametrize(
    "a",
    [np.zeros((3, 9), np.float32), np.abs(rnd(3, 9)) + 1, -np.abs(rnd(3, 9)) - 1],
    ids=["zeros", "positive", "negative"],
)
def test_dynamic_quantize_matmul_ranges(dev, a):
    """A range that is empty (scale 1), or all on one side of 0 (zero point 0 or 255)."""
    inits = _b_params(np.int8, (9, 6), "tensor", "tensor", True)
    node = helper.make_node(
        "DynamicQuantizeMatMul", ["a", "b", "bs", "bz", "bias"], ["y"], domain=MS
    )
    assert agree_with_exact(dev, node, {"a": a}, inits, opset=17) is None


def _why_not(dev, node, inputs, inits) -> str | None:
    """``dev``'s refusal reason for the one-output matmul ``node`` (None: it runs it)."""
    shape = np.matmul(np.zeros(inputs["a"].shape), np.zeros(inits["b"].shape)).shape
    model = make_model([node], inputs, inits, ["y"])
    graph = to_graph(model, inputs, 17, {"y": np.zeros(shape, np.float32)})
    why = dev.why_not(graph.nodes[0], graph)
    assert (why is None) == dev.supports(graph.nodes[0], graph)
    return why


def test_layouts_the_kernels_do_not_take_are_refused(dev):
    """A's scale per row, B's zero point per matrix and column, a bias of another length:
    refused with a reason (the node then runs on a CPU device)."""
    a, b = ints(np.uint8, 2, 4, 9, seed=1), ints(np.int8, 2, 9, 5, seed=2)
    cases = [
        {"as": np.full((4, 1), 0.02, np.float32), "bs": np.float32(0.01)},
        {"as": np.float32(0.02), "bs": np.float32(0.01), "bz": ints(np.int8, 2, 1, 5, seed=3)},
        {"as": np.float32(0.02), "bs": np.float32(0.01), "bias": np.zeros(4, np.float32)},
    ]
    for extra in cases:
        ins = ["a", "b", "as", "bs", "", "bz" if "bz" in extra else ""]
        ins += ["bias"] if "bias" in extra else []
        node = helper.make_node("MatMulIntegerToFloat", ins, ["y"], domain=MS)
        why = _why_not(dev, node, {"a": a}, {"b": b, **extra})
        assert why is not None and why.strip(), extra


# --- DynamicQuantizeLSTM ----------------------------------------------------------------
# The LSTM's h is quantized again at every step, so an ulp off can move a quantization step
# and the recurrence carries it on: its gates are onnxruntime's to the bit (``MLAS_GATES``),
# and the tolerance is float rounding's, as for the quantized ops.
TOL = 1e-6


def _lstm_params(tw, D, I, H, per: str, seed: int) -> dict:
    """Quantized W [D, I, 4H] and R [D, H, 4H] with scales and zero points per direction or
    per direction and column; as onnxruntime takes them, an int8 weight's zero points are 0
    and a uint8 one's one value (per direction where they are per tensor)."""
    rng = np.random.default_rng(seed)
    shape = (D, 4 * H) if per == "column" else (D,)
    out = {}
    for name, k in (("W", I), ("R", H)):
        out[name] = ints(tw, D, k, 4 * H, seed=seed + k)
        out[name + "s"] = rng.uniform(0.002, 0.01, shape).astype(np.float32)
        z = np.zeros(shape, tw) if tw == np.int8 else np.ones(shape, tw)
        out[name + "z"] = z * (120 + 9 * np.arange(D, dtype=tw) * (per == "tensor")).reshape(
            [D] + [1] * (len(shape) - 1)
        )
    return out


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("tw", QTYPES, ids=["w_u8", "w_i8"])
@pytest.mark.parametrize("per", ["tensor", "column"])
@pytest.mark.parametrize("state", [True, False], ids=["bias_states", "bare"])
def test_dynamic_quantize_lstm(shaped, direction, tw, per, state):
    T, B, I, H = 5, 2, 7, 6
    D = 2 if direction == "bidirectional" else 1
    inits = _lstm_params(tw, D, I, H, per, seed=1)
    inputs = {"X": rnd(T, B, I, lo=-2, hi=2)}
    ins = ["X", "W", "R", "", "", "", ""]
    if state:
        inits["B"] = rnd(D, 8 * H, seed=3)
        inputs.update({"h0": rnd(D, B, H, seed=4), "c0": rnd(D, B, H, seed=5)})
        ins = ["X", "W", "R", "B", "", "h0", "c0"]
    ins += ["", "Ws", "Wz", "Rs", "Rz"]
    node = helper.make_node(
        "DynamicQuantizeLSTM", ins, ["Y", "Yh", "Yc"], hidden_size=H, direction=direction, domain=MS
    )
    run_case(shaped, [node], inputs, inits, outputs=["Y", "Yh", "Yc"], tol=TOL)


def test_dynamic_quantize_lstm_long_hidden(shaped):
    """H >= 64: the recurrent products take quant.cl's split-K kernel; batch 1, Y_h only."""
    inits = _lstm_params(np.int8, 1, 20, 70, "column", seed=2)
    ins = ["X", "W", "R", "", "", "", "", "", "Ws", "Wz", "Rs", "Rz"]
    node = helper.make_node("DynamicQuantizeLSTM", ins, ["", "Yh"], hidden_size=70, domain=MS)
    run_case(shaped, [node], {"X": rnd(4, 1, 20)}, inits, outputs=["Yh"], tol=TOL)


def test_lstm_variants_and_other_contrib_ops_are_refused(dev):
    """What the kernels do not compute is refused with a reason and runs on a CPU device:
    a DynamicQuantizeLSTM with clip or peepholes, and any other com.microsoft op."""
    T, B, I, H = 3, 1, 4, 2
    inits = _lstm_params(np.int8, 1, I, H, "tensor", seed=3)
    inits["P"] = rnd(1, 3 * H)
    x = {"X": rnd(T, B, I)}
    zeros = {"Y": np.zeros((T, 1, B, H), np.float32)}
    for kw, p in (({"clip": 1.0}, ""), ({}, "P")):
        ins = ["X", "W", "R", "", "", "", "", p, "Ws", "Wz", "Rs", "Rz"]
        node = helper.make_node("DynamicQuantizeLSTM", ins, ["Y"], hidden_size=H, domain=MS, **kw)
        graph = to_graph(make_model([node], x, inits, ["Y"]), x, 17, zeros)
        why = dev.why_not(graph.nodes[0], graph)
        assert why and not dev.supports(graph.nodes[0], graph), kw
    node = helper.make_node("FusedGemm", ["X", "X"], ["Y"], domain=MS)
    graph = to_graph(make_model([node], x, {}, ["Y"]), x, 17, zeros)
    assert "has no kernel" in dev.why_not(graph.nodes[0], graph)


# --- models as quantize_dynamic writes them ---------------------------------------------
def _float_model(kind: str):
    """A small float model: two MatMuls (and an Add) sharing their input, or an LSTM."""
    N = helper.make_node
    rng = np.random.default_rng(0)
    w = {
        k: rng.standard_normal(s).astype(np.float32) * 0.3
        for k, s in (("W1", (16, 8)), ("W2", (16, 5)))
    }
    if kind == "matmul":
        nodes = [
            N("MatMul", ["x", "W1"], ["m"]),
            N("Add", ["m", "b"], ["y1"]),
            N("MatMul", ["x", "W2"], ["y2"]),
        ]
        w["b"] = rng.standard_normal(8).astype(np.float32)
        x, outs = [2, 3, 16], ["y1", "y2"]
    else:
        H, D = 10, 2 if kind == "bilstm" else 1
        w = {
            "W": rng.standard_normal((D, 4 * H, 16)) * 0.3,
            "R": rng.standard_normal((D, 4 * H, H)) * 0.3,
        }
        w = {k: v.astype(np.float32) for k, v in w.items()}
        w["B"] = rng.standard_normal((D, 8 * H)).astype(np.float32) * 0.1
        direction = "bidirectional" if D == 2 else "reverse"
        nodes = [N("LSTM", ["x", "W", "R", "B"], ["y1", "y2"], hidden_size=H, direction=direction)]
        x, outs = [6, 1, 16], ["y1", "y2"]
    graph = helper.make_graph(
        nodes,
        kind,
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in outs],
        [numpy_helper.from_array(v, k) for k, v in w.items()],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _quantized(tmp_path, kind: str, weight: str, per_channel: bool, fused: bool) -> str:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src, q = tmp_path / "float.onnx", tmp_path / "q.onnx"
    onnx.save(_float_model(kind), src)
    qtype = QuantType.QInt8 if weight == "int8" else QuantType.QUInt8
    quantize_dynamic(src, q, weight_type=qtype, per_channel=per_channel)
    if not fused:
        return str(q)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(tmp_path / "fused.onnx")
    ort.InferenceSession(str(q), so, providers=["CPUExecutionProvider"])
    return so.optimized_model_filepath


@pytest.mark.parametrize("kind", ["matmul", "lstm", "bilstm"])
@pytest.mark.parametrize("weight", ["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_quantize_dynamic_models_run_whole(dev, tmp_path, kind, weight, per_channel):
    """The model quantize_dynamic writes and (for the matmuls) the one onnxruntime's
    optimiser saves from it (MatMulIntegerToFloat, DynamicQuantizeMatMul): every node on the
    device, within TOL of onnxruntime (one thread, as its LSTM's groups are ours)."""
    for fused in (False, True) if kind == "matmul" else (False,):
        path = _quantized(tmp_path, kind, weight, per_channel, fused)
        g = onnx_io.load(path)
        ops = {(n.domain, n.op_type) for n in g.nodes}
        if fused:
            assert {(MS, "MatMulIntegerToFloat"), (MS, "DynamicQuantizeMatMul")} & ops, ops
        assert all(dev.supports(n, g) for n in g.nodes), {
            n.op_type: dev.why_not(n, g) for n in g.nodes if not dev.supports(n, g)
        }
        feed = {"x": rnd(*g.tensors["x"].shape, lo=-2, hi=2)}
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(exact_source(path)[0], so, providers=["CPUExecutionProvider"])
        refs = sess.run(g.outputs, feed)
        unit = dev.prepare(g, [n.id for n in g.nodes])
        res = dev.run(unit, feed)
        for name, ref in zip(g.outputs, refs, strict=True):
            assert rel_err(dev.copy_out(res.outputs[name]), ref) <= TOL, (name, fused)
