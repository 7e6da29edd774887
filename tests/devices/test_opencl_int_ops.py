"""The typed kernels (int32, int64, bool, and float32 where an op is new) against
onnxruntime, bit for bit: arithmetic with ONNX's integer division and Mod, comparisons,
logic, Where, Cast, and data movement of integer tensors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import make_model, rnd, run_case, to_graph

pytest.importorskip("pyopencl")

INTS = ["int32", "int64"]
BCAST = [((3, 4, 5), (3, 4, 5)), ((2, 3, 4), (4,)), ((1, 3, 1), (2, 1, 5)), ((6,), ())]


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def ints(shape, dtype, lo=-50, hi=50, seed=0, nonzero=False):
    v = np.random.default_rng(seed + sum(shape) + 11 * len(shape)).integers(lo, hi, shape)
    if nonzero:
        v = np.where(v == 0, 7, v)
    return np.asarray(v, dtype=dtype)


def exact(dev, nodes, inputs, inits=None, outputs=None, opset=17):
    return run_case(dev, nodes, inputs, inits, outputs, opset, exact=True)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("sa,sb", BCAST)
@pytest.mark.parametrize(
    "op,kw", [("Add", {}), ("Sub", {}), ("Mul", {}), ("Max", {}), ("Min", {}), ("Div", {})]
)
def test_integer_arithmetic(dev, dtype, sa, sb, op, kw):
    """Division truncates toward zero (operands of both signs)."""
    a, b = ints(sa, dtype), ints(sb, dtype, -9, 9, seed=1, nonzero=True)
    exact(dev, [N(op, ["a", "b"], **kw)], {"a": a, "b": b})


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("fmod", [0, 1])
def test_integer_mod_takes_the_sign_of_divisor_or_dividend(dev, dtype, fmod):
    a, b = ints((4, 6), dtype, -40, 40), ints((6,), dtype, -7, 7, seed=1, nonzero=True)
    exact(dev, [N("Mod", ["a", "b"], fmod=fmod)], {"a": a, "b": b})


def test_int64_keeps_64_bits(dev):
    """Values and results past 2**31 survive: the kernels compute in long."""
    a = ints((3, 5), "int64", -(2**40), 2**40)
    b = ints((5,), "int64", -(2**20), 2**20, seed=1, nonzero=True)
    for op in ("Add", "Sub", "Mul", "Div", "Max"):
        exact(dev, [N(op, ["a", "b"])], {"a": a, "b": b})
    exact(dev, [N("Neg", ["a"])], {"a": a})


def test_variadic_max_min_and_constant_operand(dev):
    a, b, c = ints((3, 4), "int64"), ints((4,), "int64", seed=1), ints((3, 1), "int64", seed=2)
    exact(dev, [N("Max", ["a", "b", "c"])], {"a": a, "b": b, "c": c})
    exact(dev, [N("Min", ["a", "b", "c"])], {"a": a, "b": b}, {"c": c})
    exact(dev, [N("Max", ["a"])], {"a": a})


@pytest.mark.parametrize("dtype", ["float32", *INTS])
@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
def test_comparisons_write_bools(dev, dtype, op):
    a = ints((3, 4, 5), dtype, -3, 3)
    b = ints((4, 1), dtype, -3, 3, seed=1)
    exact(dev, [N(op, ["a", "b"])], {"a": a, "b": b})


def test_logic_on_bools(dev):
    a, b = ints((3, 4), "int32", 0, 2) > 0, ints((4,), "int32", 0, 2, seed=1) > 0
    for op in ("And", "Or", "Xor", "Equal"):
        exact(dev, [N(op, ["a", "b"])], {"a": a, "b": b})
    exact(dev, [N("Not", ["a"])], {"a": a})


@pytest.mark.parametrize("dtype", ["float32", *INTS])  # onnxruntime has no bool Where
def test_where_broadcasts_all_three(dev, dtype):
    c = ints((1, 4, 5), "int32", 0, 2) > 0
    a, b = ints((3, 1, 5), "int64", seed=1), ints((4, 1), "int64", seed=2)
    a, b = a.astype(dtype), b.astype(dtype)
    exact(dev, [N("Where", ["c", "a", "b"])], {"c": c, "a": a, "b": b})
    exact(dev, [N("Where", ["c", "a", "b"])], {"c": c, "a": a}, {"b": b})


CASTS = {"float32": 1, "int32": 6, "int64": 7, "bool": 9}


@pytest.mark.parametrize("src", list(CASTS))
@pytest.mark.parametrize("dst", list(CASTS))
def test_cast_between_float_int_and_bool(dev, src, dst):
    """float -> integer truncates toward zero; int64 -> float32 rounds to nearest; to bool,
    nonzero (a fraction included) is true."""
    x = np.array([-2.7, -1.0, -0.5, 0.0, 0.25, 1.5, 3.99, 1e6 + 0.5], np.float32)
    if src == "bool":
        x = x > 0
    elif src == "int64":
        x = np.array([-(2**40) - 1, -3, 0, 1, 2**24 + 1, 2**40 + 3], np.int64)
    elif src == "int32":
        x = np.array([-(2**31), -3, 0, 1, 2**24 + 1, 2**31 - 1], np.int32)
    _, (unit, _), _ = exact(dev, [N("Cast", ["x"], to=CASTS[dst])], {"x": x})
    assert len(unit.handle.launches) == (src != dst)  # the same type: a view


@pytest.mark.parametrize("dtype", INTS)
def test_neg_abs(dev, dtype):
    x = ints((4, 7), dtype)
    exact(dev, [N("Neg", ["x"])], {"x": x})
    exact(dev, [N("Abs", ["x"])], {"x": x})


def test_float_mod_floor_ceil_round(dev):
    a, b = rnd(4, 6, lo=-9, hi=9), rnd(6, seed=1, lo=0.5, hi=3) * np.sign(rnd(6, seed=2))
    exact(dev, [N("Mod", ["a", "b"], fmod=1)], {"a": a, "b": b.astype(np.float32)})
    x = np.concatenate([rnd(20, lo=-4, hi=4), np.array([-2.5, -0.5, 0.5, 1.5, 2.5], np.float32)])
    for op in ("Floor", "Ceil", "Round"):
        exact(dev, [N(op, ["x"])], {"x": x})


@pytest.mark.parametrize("dtype", [*INTS, "bool"])
def test_views_and_copies_of_integer_tensors(dev, dtype):
    x = ints((2, 3, 4), "int64", -(2**33), 2**33)
    x = x > 0 if dtype == "bool" else x.astype(dtype)
    i64 = lambda v: np.array(v, np.int64)
    nodes = [
        N("Reshape", ["x", "s"], ["r"]),
        N("Flatten", ["r"], ["f"], axis=1),
        N("Unsqueeze", ["f", "ax"], ["u"]),
        N("Squeeze", ["u", "ax"], ["q"]),
        N("Identity", ["q"], ["i"]),
        N("Transpose", ["i"], ["t"], perm=[1, 0]),
        N("Concat", ["t", "c"], ["k"], axis=0),
        N("Slice", ["k", "st", "en", "ax1", "sp"], ["sl"]),
        N("Expand", ["sl", "es"], ["e"]),
        N("Tile", ["e", "rep"], ["y"]),
    ]
    inits = {
        "s": i64([4, 3, 2]),
        "ax": i64([0]),
        "c": x.reshape(2, 12)[:1, :2].copy(),
        "st": i64([5]),
        "en": i64([-100]),
        "ax1": i64([1]),
        "sp": i64([-2]),
        "es": i64([2, 1, 1]),
        "rep": i64([1, 2, 3]),
    }
    inits["c"] = np.ascontiguousarray(np.broadcast_to(inits["c"][:, :1], (1, 4)))
    exact(dev, nodes, {"x": x}, inits, outputs=["y", "r", "k"])


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_split_pad_of_integers(dev, dtype):
    x = ints((3, 8), "int64").astype(dtype)
    exact(
        dev,
        [N("Split", ["x", "s"], ["p", "q"], axis=1)],
        {"x": x},
        {"s": np.array([3, 5])},
        outputs=["p", "q"],
    )
    pads, v = np.array([1, 0, 0, 2], np.int64), np.array(-7).astype(dtype)
    exact(dev, [N("Pad", ["x", "p", "v"])], {"x": x}, {"p": pads, "v": v})


@pytest.mark.parametrize("itype", INTS)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_gather_indices_read_at_run_time(dev, itype, dtype):
    """An embedding lookup: a constant table, indices fed at run time (negative ones count
    from the end); and a many-index constant Gather, which runs the same kernel."""
    table = ints((9, 4, 3), "int64")
    table = table > 0 if dtype == "bool" else table.astype(dtype)
    idx = np.array([[0, 8, -1], [3, -9, 4]], itype)
    exact(dev, [N("Gather", ["t", "i"], axis=0)], {"i": idx}, {"t": table})
    exact(dev, [N("Gather", ["t", "i"], axis=1)], {"t": table, "i": idx % 4})
    many = (np.arange(100) * 7 % 9).astype(itype)
    _, (unit, _), _ = exact(dev, [N("Gather", ["t", "i"])], {"t": table}, {"i": many})
    assert len(unit.handle.launches) == 1


def test_shape_size_constant_of_shape_range(dev):
    x = rnd(2, 5, 3)
    exact(dev, [N("Shape", ["x"])], {"x": x})
    exact(dev, [N("Shape", ["x"], start=1)], {"x": x}, opset=15)
    exact(dev, [N("Size", ["x"])], {"x": x})
    shape = np.array([2, 3], np.int64)
    value = helper.make_tensor("v", 7, [1], [-(2**35)])
    exact(dev, [N("ConstantOfShape", ["s"], value=value)], {"s": shape})
    exact(dev, [N("ConstantOfShape", ["s"])], {"s": shape})
    for dtype in INTS:
        s, lim, d = (np.array(v, dtype) for v in (-4, 17, 3))
        exact(dev, [N("Range", ["s", "l", "d"])], {"s": s, "l": lim, "d": d})


def _graph(nodes, inputs):
    return to_graph(make_model(nodes, inputs, {}, ["y"]), inputs, 17)


def test_refused_where_onnxruntime_differs_or_types_are_missing(dev):
    f = {k: np.array(v, np.float32) for k, v in {"s": 0.5, "l": 3.0, "d": 0.1}.items()}
    g = _graph([N("Range", ["s", "l", "d"])], f)
    assert "float32" in dev.why_not(g.nodes[0], g)  # ORT accumulates delta step by step
    a = {"a": rnd(3), "b": rnd(3, seed=1)}
    g = _graph([N("Mod", ["a", "b"], fmod=1)], a)
    g.nodes[0].attrs["fmod"] = 0  # floor-mod of floats: onnxruntime before opset 28 refuses it
    assert "fmod=1" in dev.why_not(g.nodes[0], g)
    g = _graph([N("Pow", ["a", "b"])], {"a": ints((3,), "int64"), "b": ints((3,), "int64")})
    assert "int64" in dev.why_not(g.nodes[0], g)
