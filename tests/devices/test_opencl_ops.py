"""Every OpenCL kernel against onnxruntime on random inputs (fp32, ||out-ref||/||ref|| <= 1e-4)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import kernel_name, rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


# --- convolution -------------------------------------------------------------------------
CONV_CASES = [
    {"x": (1, 5, 9, 7), "w": (6, 5, 3, 3), "kw": {"pads": [1, 1, 1, 1]}},
    {"x": (2, 4, 11, 10), "w": (8, 4, 3, 3), "kw": {"strides": [2, 2]}},
    {
        "x": (1, 6, 10, 9),
        "w": (9, 2, 3, 3),
        "kw": {"group": 3, "pads": [2, 1, 0, 1], "dilations": [2, 1]},
    },
    {
        "x": (1, 8, 9, 9),
        "w": (8, 1, 3, 3),
        "kw": {"group": 8, "pads": [1, 1, 1, 1], "strides": [2, 2]},
    },
    {"x": (1, 4, 7, 7), "w": (8, 1, 3, 3), "kw": {"group": 4, "auto_pad": "SAME_UPPER"}},
    {"x": (1, 70, 6, 5), "w": (67, 70, 1, 1), "kw": {}},
    {"x": (1, 3, 13, 13), "w": (5, 3, 5, 3), "kw": {"auto_pad": "SAME_LOWER", "strides": [2, 3]}},
    {"x": (1, 3, 8, 8), "w": (4, 3, 1, 7), "kw": {"pads": [0, 3, 0, 3]}},
    {"x": (2, 3, 17), "w": (5, 3, 3), "kw": {"strides": [2], "pads": [1, 1]}},
    {"x": (1, 8, 12, 12), "w": (130, 8, 3, 3), "kw": {"pads": [1, 1, 1, 1]}},  # 64x64 tiles
]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c['x']}-{c['w']}-{c['kw']}")
@pytest.mark.parametrize("bias", [True, False])
def test_conv(dev, case, bias):
    ins = ["x", "w", "b"] if bias else ["x", "w"]
    inits = {"w": rnd(*case["w"], seed=1)}
    if bias:
        inits["b"] = rnd(case["w"][0], seed=2)
    run_case(dev, [N("Conv", ins, **case["kw"])], {"x": rnd(*case["x"])}, inits)


def test_conv_runtime_weights_and_split_k(dev):
    dev.gemm_splits = 3
    try:
        run_case(
            dev,
            [N("Conv", ["x", "w"], pads=[1, 1, 1, 1])],
            {"x": rnd(1, 40, 5, 5), "w": rnd(7, 40, 3, 3, seed=3)},
        )
    finally:
        dev.gemm_splits = None


@pytest.mark.parametrize(
    "kw",
    [
        {"strides": [2, 2]},
        {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
        {"group": 2, "dilations": [2, 1]},
        {"strides": [3, 2], "output_shape": [10, 8]},
    ],
)
def test_conv_transpose(dev, kw):
    run_case(
        dev,
        [N("ConvTranspose", ["x", "w", "b"], **kw)],
        {"x": rnd(1, 4, 4, 5)},
        {"w": rnd(4, 3, 3, 3, seed=1), "b": rnd(6 if kw.get("group") else 3, seed=2)}
        if kw.get("group") is None
        else {"w": rnd(4, 3, 3, 3, seed=1), "b": rnd(6, seed=2)},
    )


def test_conv_bn_relu_fused(dev):
    c = 6
    bn = {
        "s": rnd(c, seed=3, lo=0.5, hi=1.5),
        "o": rnd(c, seed=4),
        "m": rnd(c, seed=5),
        "v": rnd(c, seed=6, lo=0.5, hi=2.0),
    }
    nodes = [
        N("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        N("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"], epsilon=1e-3),
        N("Relu", ["n"], ["y"]),
    ]
    _, (unit, res), _ = run_case(
        dev,
        nodes,
        {"x": rnd(1, 3, 8, 8)},
        {"w": rnd(c, 3, 3, 3, seed=1), "b": rnd(c, seed=2), **bn},
        node_times=dev.capabilities().node_times,
    )
    plan = unit.handle
    assert len(plan.launches) == 1 and set(plan.fused) == {"n1", "n2"}
    if not dev.capabilities().node_times:  # a device that times only whole units
        return
    assert [t.name for t in res.node_times] == ["n0", "n1", "n2"]
    assert all(res.start <= t.start <= t.finish <= res.finish for t in res.node_times)


def test_conv_output_read_twice_not_fused(dev):
    nodes = [N("Conv", ["x", "w"], ["c"]), N("Relu", ["c"], ["r"]), N("Add", ["c", "r"], ["y"])]
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(1, 3, 5, 5)}, {"w": rnd(4, 3, 1, 1, seed=1)})
    assert "n0" not in unit.handle.fused.values()  # (a CPU device chains the Relu and the Add)


def test_inception_block_writes_concat_in_place(dev):
    """Conv/pool branches write their slice of the Concat output; nested Concat too."""
    x = rnd(1, 6, 9, 9)
    w = {f"w{i}": rnd(c, 6, k, k, seed=i) for i, (c, k) in enumerate([(5, 1), (3, 3), (4, 3)])}
    nodes = [
        N("Conv", ["x", "w0"], ["a0"]),
        N("Relu", ["a0"], ["a"]),
        N("Conv", ["x", "w1"], ["b"], pads=[1, 1, 1, 1]),
        N("Conv", ["x", "w2"], ["c"], pads=[1, 1, 1, 1]),
        N("Concat", ["b", "c"], ["bc"], axis=1),
        N("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("Sigmoid", ["x"], ["s"]),
        N("Concat", ["a", "bc", "p", "s"], ["y"], axis=1),
    ]
    _, (unit, _), _ = run_case(dev, nodes, {"x": x}, w)
    plan = unit.handle
    copies = [L for L in plan.launches if L.node in ("n4", "n7")]
    assert len(copies) == 1 and len(plan.launches) == 6  # only the Sigmoid output is copied


def test_concat_batch_not_in_place(dev):
    nodes = [N("Conv", ["x", "w"], ["a"]), N("Concat", ["a", "x"], ["y"], axis=1)]
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(2, 3, 4, 4)}, {"w": rnd(2, 3, 1, 1, seed=1)})
    names = [kernel_name(L) for L in unit.handle.launches if L.node == "n1"]
    assert names == ["concat4"]  # the Conv writes its own buffer; one launch copies both


# --- GEMM ------------------------------------------------------------------------------
@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("cshape", [(29,), (1, 29), (19, 1), (19, 29), ()])
def test_gemm(dev, ta, tb, cshape):
    a = rnd(*((33, 19) if ta else (19, 33)))
    b = rnd(*((29, 33) if tb else (33, 29)), seed=1)
    run_case(
        dev,
        [N("Gemm", ["a", "b", "c"], transA=ta, transB=tb, alpha=0.7, beta=1.3)],
        {"a": a},
        {"b": b, "c": rnd(*cshape, seed=2) if cshape else np.float32(0.5)},
    )


def test_gemm_runtime_b_no_c(dev):
    run_case(dev, [N("Gemm", ["a", "b"], transB=1)], {"a": rnd(70, 65), "b": rnd(66, 65, seed=1)})


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((37, 45), (45, 29)),
        ((2, 3, 37, 45), (3, 45, 29)),
        ((4, 1, 5, 8), (3, 8, 6)),
        ((45,), (2, 45, 7)),
        ((3, 7, 45), (45,)),
        ((2, 9, 130), (130, 70)),
        ((130, 70), (70, 140)),
    ],
)
def test_matmul(dev, sa, sb):
    run_case(dev, [N("MatMul", ["a", "b"])], {"a": rnd(*sa), "b": rnd(*sb, seed=1)})


@pytest.mark.parametrize(
    "bshape,first", [((29,), True), ((1, 29), False), ((1,), True), ((5, 29), True)]
)
def test_matmul_add_bias_fused(dev, bshape, first):
    nodes = [
        N("MatMul", ["a", "w"], ["m"]),
        N("Add", ["m", "b"] if first else ["b", "m"], ["s"]),
        N("Relu", ["s"], ["y"]),
    ]
    _, (unit, _), _ = run_case(
        dev, nodes, {"a": rnd(2, 5, 13)}, {"w": rnd(13, 29, seed=1), "b": rnd(*bshape, seed=2)}
    )
    assert len(unit.handle.launches) == (2 if bshape == (5, 29) else 1)


def test_two_matmuls_add_fused(dev):
    """x@W + h@R (an LSTM gate): the later MatMul adds the earlier one's output."""
    nodes = [
        N("MatMul", ["x", "w"], ["p"]),
        N("MatMul", ["h", "r"], ["q"]),
        N("Add", ["p", "q"], ["s"]),
        N("Sigmoid", ["s"], ["y"]),
    ]
    _, (unit, _), _ = run_case(
        dev,
        nodes,
        {"x": rnd(2, 3, 9), "h": rnd(2, 3, 4, seed=3)},
        {"w": rnd(9, 16, seed=1), "r": rnd(4, 16, seed=2)},
    )
    assert len(unit.handle.launches) == 3 and unit.handle.fused == {"n2": "n1"}
    nodes = [
        N("MatMul", ["x", "w"], ["p"]),
        N("MatMul", ["x", "r"], ["q"]),
        N("Add", ["q", "p"], ["y"]),
    ]
    run_case(
        dev, nodes, {"x": rnd(2, 2, 3, 9)}, {"w": rnd(2, 1, 9, 16, seed=1), "r": rnd(9, 16, seed=2)}
    )


def test_gemm_add_bias_fused(dev):
    nodes = [N("Gemm", ["a", "w"], ["m"], transB=1), N("Add", ["m", "b"], ["y"])]
    _, (unit, _), _ = run_case(
        dev, nodes, {"a": rnd(3, 13)}, {"w": rnd(7, 13, seed=1), "b": rnd(7, seed=2)}
    )
    assert len(unit.handle.launches) == 1


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_skinny_gemv(dev, m):
    nodes = [N("MatMul", ["a", "w"], ["p"]), N("Add", ["p", "b"], ["y"])]
    _, (unit, _), _ = run_case(
        dev, nodes, {"a": rnd(m, 150)}, {"w": rnd(150, 37, seed=1), "b": rnd(37, seed=2)}
    )
    assert len(unit.handle.launches) == 1
    run_case(
        dev,
        [N("Gemm", ["a", "w", "c"], alpha=0.5, beta=2.0)],
        {"a": rnd(m, 40)},
        {"w": rnd(40, 19, seed=1), "c": rnd(m, 19, seed=2)},
    )
    run_case(dev, [N("MatMul", ["a", "w"])], {"a": rnd(3, m, 21)}, {"w": rnd(3, 21, 5, seed=1)})


def test_matmul_split_k(dev):
    dev.gemm_splits = 4
    try:
        run_case(dev, [N("MatMul", ["a", "b"])], {"a": rnd(3, 600)}, {"b": rnd(600, 5, seed=1)})
    finally:
        dev.gemm_splits = None


# --- elementwise -------------------------------------------------------------------------
UNARY = [
    ("Relu", {}),
    ("LeakyRelu", {"alpha": 0.3}),
    ("Sigmoid", {}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("HardSwish", {}),
    ("Tanh", {}),
    ("Exp", {}),
    ("Erf", {}),
    ("Neg", {}),
    ("Abs", {}),
    ("Softplus", {}),
    ("Elu", {"alpha": 0.7}),
    ("Gelu", {}),
    ("Gelu", {"approximate": "tanh"}),
]


@pytest.mark.parametrize("op,kw", UNARY, ids=[u[0] + str(u[1]) for u in UNARY])
def test_unary(dev, op, kw):
    run_case(
        dev,
        [N(op, ["x"], **kw)],
        {"x": rnd(2, 3, 7, 5, lo=-4, hi=4)},
        opset=20 if op == "Gelu" else 17,
    )


def test_prelu_layernorm(dev):
    run_case(dev, [N("PRelu", ["x", "s"])], {"x": rnd(2, 3, 4, 5)}, {"s": rnd(3, 1, 1, seed=1)})
    run_case(
        dev,
        [N("LayerNormalization", ["x", "g", "b"], axis=-1, epsilon=1e-3)],
        {"x": rnd(2, 5, 70)},
        {"g": rnd(70, seed=1), "b": rnd(70, seed=2)},
    )
    run_case(
        dev,
        [N("LayerNormalization", ["x", "g"], axis=1)],
        {"x": rnd(3, 4, 6)},
        {"g": rnd(4, 6, seed=1)},
    )


def test_sqrt_log_reciprocal(dev):
    x = rnd(3, 77, lo=0.1, hi=5)
    for op in ("Sqrt", "Log", "Reciprocal"):
        run_case(dev, [N(op, ["x"])], {"x": x})


def test_clip_const_bounds_and_attrs(dev):
    run_case(
        dev,
        [N("Clip", ["x", "lo", "hi"])],
        {"x": rnd(4, 9, lo=-3, hi=3)},
        {"lo": np.float32(-0.5), "hi": np.float32(0.7)},
    )
    run_case(
        dev, [N("Clip", ["x", "", "hi"])], {"x": rnd(4, 9, lo=-3, hi=3)}, {"hi": np.float32(0.7)}
    )
    run_case(dev, [N("Clip", ["x"], min=-0.2, max=0.4)], {"x": rnd(4, 9, lo=-3, hi=3)}, opset=6)


BCAST = [
    ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (5,)),
    ((2, 3, 4, 5), (3, 1, 1)),
    ((1, 3, 1, 5), (2, 1, 4, 1)),
    ((7,), (3, 1)),
    ((2, 3, 4, 5), ()),
    ((1, 1), (6, 7)),
    ((3, 40), (40,)),  # rows of 40: a CPU device's 16-element blocks inside and across rows
]


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
@pytest.mark.parametrize("sa,sb", BCAST)
def test_binary_broadcast(dev, op, sa, sb):
    b = rnd(*sb, seed=1, lo=0.5, hi=2) if sb else np.array(1.7, dtype=np.float32)
    run_case(dev, [N(op, ["a", "b"])], {"a": rnd(*sa), "b": b})


def test_binary_const_operand_and_fused_relu(dev):
    nodes = [N("Add", ["a", "c"], ["s"]), N("Relu", ["s"], ["y"])]
    _, (unit, _), _ = run_case(dev, nodes, {"a": rnd(2, 4, 3, 3)}, {"c": rnd(4, 1, 1, seed=1)})
    assert len(unit.handle.launches) == 1


@pytest.mark.parametrize("e", [2.0, 3.0])
@pytest.mark.parametrize("given", ["const", "input"])
def test_pow_by_two_or_three_is_onnxruntimes_product_bit_for_bit(dev, e, given):
    """onnxruntime's Pow by a one-element 2 or 3 is ``x * x`` or ``x * x * x``; ``pow`` is an
    ulp away on some of these values (x**3 rounded once against twice), which is enough to
    flip a later DynamicQuantizeLinear tie."""
    a = {"a": rnd(64, 64, lo=-200, hi=200)}
    ex = np.array(e, np.float32)
    ins, inits = ({**a, "e": ex}, {}) if given == "input" else (a, {"e": ex})
    run_case(dev, [N("Pow", ["a", "e"])], ins, inits, exact=True)


def test_pow_and_sum(dev):
    run_case(dev, [N("Pow", ["a", "e"])], {"a": rnd(3, 4, lo=0.1, hi=3)}, {"e": np.float32(2.5)})
    run_case(dev, [N("Pow", ["a", "e"])], {"a": rnd(3, 4)}, {"e": np.array(3, dtype=np.int64)})
    run_case(dev, [N("Pow", ["a", "e"])], {"a": rnd(3, 4, lo=0.1, hi=2), "e": rnd(4, seed=2)})
    run_case(
        dev,
        [N("Sum", ["a", "b", "c"])],
        {"a": rnd(3, 4), "b": rnd(4, seed=1), "c": rnd(3, 1, seed=2)},
    )


# --- layout ------------------------------------------------------------------------------
def test_concat_split(dev):
    run_case(
        dev,
        [N("Concat", ["a", "b", "c"], axis=1)],
        {"a": rnd(2, 3, 4), "b": rnd(2, 5, 4, seed=1)},
        {"c": rnd(2, 1, 4, seed=2)},
    )
    run_case(
        dev, [N("Concat", ["a", "b"], axis=-1)], {"a": rnd(2, 3, 4), "b": rnd(2, 3, 1, seed=1)}
    )
    x = rnd(2, 9, 5)
    run_case(
        dev,
        [N("Split", ["x", "s"], ["p", "q", "r"], axis=1)],
        {"x": x},
        {"s": np.array([2, 3, 4])},
        outputs=["p", "q", "r"],
    )
    run_case(
        dev,
        [N("Split", ["x"], ["p", "q"], axis=-1)],
        {"x": rnd(3, 6)},
        outputs=["p", "q"],
        opset=13,
    )


@pytest.mark.parametrize(
    "starts,ends,axes,steps",
    [
        ([1, 0], [3, 5], [0, 2], [1, 2]),
        ([-1], [-100], [1], [-2]),
        ([2], [1000], [-1], [1]),
        ([0, 5], [2, 0], [0, 1], [1, -1]),
    ],
)
def test_slice(dev, starts, ends, axes, steps):
    arr = lambda v: np.array(v, dtype=np.int64)
    run_case(
        dev,
        [N("Slice", ["x", "s", "e", "a", "st"])],
        {"x": rnd(4, 6, 7)},
        {"s": arr(starts), "e": arr(ends), "a": arr(axes), "st": arr(steps)},
    )


def test_transpose_expand_views(dev):
    run_case(dev, [N("Transpose", ["x"], perm=[0, 2, 3, 1])], {"x": rnd(2, 3, 4, 5)})
    run_case(dev, [N("Transpose", ["x"])], {"x": rnd(3, 4, 5)})
    run_case(
        dev, [N("Expand", ["x", "s"])], {"x": rnd(3, 1)}, {"s": np.array([2, 3, 4], dtype=np.int64)}
    )
    nodes = [
        N("Reshape", ["x", "s"], ["r"]),
        N("Flatten", ["r"], ["f"], axis=1),
        N("Unsqueeze", ["f", "ax"], ["u"]),
        N("Squeeze", ["u", "ax"], ["q"]),
        N("Identity", ["q"], ["i"]),
        N("Dropout", ["i"], ["d"]),
        N("Relu", ["d"], ["y"]),
    ]
    _, (unit, _), _ = run_case(
        dev,
        nodes,
        {"x": rnd(2, 12)},
        {"s": np.array([2, 3, 4], dtype=np.int64), "ax": np.array([0], dtype=np.int64)},
        outputs=["y", "r"],
    )
    assert len(unit.handle.launches) == 1 and unit.inputs == ["x"]


@pytest.mark.parametrize(
    "xs,idx,axis",
    [
        ((3, 4, 5), np.array(1), 0),
        ((2, 1, 128), np.array(0), 0),
        ((3, 6, 5), np.array([4, -1, 0, 4]), 1),
        ((4, 7), np.array([[2, 6], [0, 1]]), -1),
    ],
)
def test_gather_const_indices_and_float_cast(dev, xs, idx, axis):
    nodes = [N("Gather", ["x", "i"], ["g"], axis=axis), N("Cast", ["g"], ["y"], to=1)]
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*xs)}, {"i": idx.astype(np.int64)})
    assert len(unit.handle.launches) == idx.size  # one copy per index; the Cast is a view


def test_gather_runtime_indices_and_float16_cast_taken(dev):
    """Indices read at run time are taken (test_opencl_int_ops), and so is a float16 Cast
    (test_opencl_half)."""
    from tests.devices.opencl_case import make_model, to_graph

    x, i = rnd(3, 4), np.array([0, 2], np.int64)
    g = to_graph(
        make_model([N("Gather", ["x", "i"], ["y"])], {"x": x, "i": i}, {}, ["y"]),
        {"x": x, "i": i},
        17,
    )
    assert dev.why_not(g.nodes[0], g) is None
    g = to_graph(make_model([N("Cast", ["x"], ["y"], to=10)], {"x": x}, {}, ["y"]), {"x": x}, 17)
    assert dev.why_not(g.nodes[0], g) is None


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad(dev, mode):
    run_case(
        dev,
        [N("Pad", ["x", "p", "v"], mode=mode)],
        {"x": rnd(1, 2, 4, 5)},
        {"p": np.array([0, 1, 2, 3, 0, 0, 1, 2], dtype=np.int64), "v": np.float32(0.25)},
    )


def test_pad_negative_crop(dev):
    run_case(
        dev,
        [N("Pad", ["x", "p"])],
        {"x": rnd(2, 6, 5)},
        {"p": np.array([0, -1, 2, 0, -2, 1], dtype=np.int64)},
    )


# --- pooling, normalisation, reductions ------------------------------------------------
POOLS = [
    {"kernel_shape": [3, 3], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
]


@pytest.mark.parametrize("kw", POOLS, ids=range(len(POOLS)))
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "AveragePoolInc"])
def test_pool(dev, op, kw):
    kw = dict(kw)
    if op == "AveragePoolInc":
        op, kw["count_include_pad"] = "AveragePool", 1
    run_case(dev, [N(op, ["x"], **kw)], {"x": rnd(1, 3, 10, 9)})


def test_maxpool_dilation_and_1d(dev):
    run_case(
        dev, [N("MaxPool", ["x"], kernel_shape=[2, 2], dilations=[2, 2])], {"x": rnd(1, 2, 7, 7)}
    )
    run_case(dev, [N("AveragePool", ["x"], kernel_shape=[3], strides=[2])], {"x": rnd(2, 3, 11)})


def test_global_pools_lrn(dev):
    run_case(dev, [N("GlobalAveragePool", ["x"])], {"x": rnd(2, 5, 9, 11)})
    run_case(dev, [N("GlobalMaxPool", ["x"])], {"x": rnd(2, 5, 9, 11)})
    run_case(
        dev, [N("LRN", ["x"], size=5, alpha=1e-3, beta=0.75, bias=2.0)], {"x": rnd(1, 7, 4, 5)}
    )
    run_case(dev, [N("LRN", ["x"], size=3)], {"x": rnd(1, 2, 3, 3)})


def test_batchnorm_affine(dev):
    c = 5
    p = {
        "s": rnd(c, seed=3),
        "o": rnd(c, seed=4),
        "m": rnd(c, seed=5),
        "v": rnd(c, seed=6, lo=0.5, hi=2),
    }
    run_case(dev, [N("BatchNormalization", ["x", "s", "o", "m", "v"])], {"x": rnd(2, c, 3, 4)}, p)
    run_case(dev, [N("BatchNormalization", ["x", "s", "o", "m", "v"])], {"x": rnd(3, c)}, p)


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_softmax(dev, axis):
    run_case(dev, [N("Softmax", ["x"], axis=axis)], {"x": rnd(3, 70, 4, lo=-5, hi=5)})
    run_case(dev, [N("LogSoftmax", ["x"], axis=axis)], {"x": rnd(3, 70, 4, lo=-5, hi=5)})


def test_softmax_opset11_flattens(dev):
    run_case(dev, [N("Softmax", ["x"], axis=1)], {"x": rnd(2, 3, 5)}, opset=11)


@pytest.mark.parametrize("axes,keep", [([1], 1), ([0, 2], 0), ([-1], 1), (None, 0), ([1, 2, 3], 1)])
def test_reduce(dev, axes, keep):
    x = rnd(2, 3, 4, 5)
    for op in ("ReduceMean", "ReduceSum"):
        ins = ["x", "a"] if axes is not None else ["x"]
        inits = {"a": np.array(axes, dtype=np.int64)} if axes is not None else {}
        run_case(dev, [N(op, ins, keepdims=keep)], {"x": x}, inits, opset=18)
    run_case(dev, [N("ReduceMean", ["x"], axes=[1, 3], keepdims=1)], {"x": x}, opset=13)


# --- Resize -------------------------------------------------------------------------------
RESIZE = [
    ("nearest", "asymmetric", "floor", [1, 1, 2, 2]),
    ("nearest", "half_pixel", "round_prefer_floor", [1, 1, 1.5, 2.5]),
    ("linear", "half_pixel", None, [1, 1, 2, 3]),
    ("linear", "align_corners", None, [1, 1, 0.6, 1.7]),
    ("linear", "pytorch_half_pixel", None, [1, 1, 0.5, 2]),
    ("linear", "asymmetric", None, [1, 1, 2, 2]),
    ("nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", [1, 1, 3, 2]),
]


@pytest.mark.parametrize("mode,ctm,nm,scales", RESIZE)
def test_resize_scales(dev, mode, ctm, nm, scales):
    kw = {"mode": mode, "coordinate_transformation_mode": ctm}
    if nm:
        kw["nearest_mode"] = nm
    run_case(
        dev,
        [N("Resize", ["x", "", "s"], **kw)],
        {"x": rnd(1, 2, 5, 4)},
        {"s": np.array(scales, dtype=np.float32)},
    )


def test_resize_sizes_and_upsample(dev):
    run_case(
        dev,
        [N("Resize", ["x", "", "", "z"], mode="linear")],
        {"x": rnd(1, 2, 5, 4)},
        {"z": np.array([1, 2, 7, 9], dtype=np.int64)},
    )
    run_case(
        dev,
        [N("Upsample", ["x", "s"], mode="nearest")],
        {"x": rnd(1, 2, 3, 4)},
        {"s": np.array([1, 1, 2, 3], dtype=np.float32)},
        opset=9,
    )


# --- LSTM ---------------------------------------------------------------------------------
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm(dev, direction):
    T, B, I, H = 5, 2, 7, 6
    D = 2 if direction == "bidirectional" else 1
    inits = {
        "W": rnd(D, 4 * H, I, seed=1),
        "R": rnd(D, 4 * H, H, seed=2),
        "B": rnd(D, 8 * H, seed=3),
    }
    inputs = {"X": rnd(T, B, I), "h0": rnd(D, B, H, seed=4), "c0": rnd(D, B, H, seed=5)}
    run_case(
        dev,
        [
            N(
                "LSTM",
                ["X", "W", "R", "B", "", "h0", "c0"],
                ["Y", "Yh", "Yc"],
                hidden_size=H,
                direction=direction,
            )
        ],
        inputs,
        inits,
        outputs=["Y", "Yh", "Yc"],
    )


def test_lstm_no_bias_no_state(dev):
    inits = {"W": rnd(1, 16, 3, seed=1), "R": rnd(1, 16, 4, seed=2)}
    run_case(dev, [N("LSTM", ["X", "W", "R"], ["Y"], hidden_size=4)], {"X": rnd(3, 1, 3)}, inits)


def test_lstm_runtime_weights(dev):
    ins = {"X": rnd(4, 2, 3), "W": rnd(1, 16, 3, seed=1), "R": rnd(1, 16, 4, seed=2)}
    run_case(
        dev, [N("LSTM", ["X", "W", "R"], ["Y", "Yh"], hidden_size=4)], ins, outputs=["Y", "Yh"]
    )
