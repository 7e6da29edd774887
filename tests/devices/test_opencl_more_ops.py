"""Trigonometric and hyperbolic unary ops and Sign, the remaining reductions (ReduceL1, ReduceL2,
ReduceSumSquare, ReduceLogSumExp, ReduceLogSum, ReduceMin, ReduceProd) and ArgMax/ArgMin
against onnxruntime: float results within 1e-4 relative, indices equal."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


# inputs inside each function's domain
TRIG = {
    "Sin": (-6.0, 6.0),
    "Cos": (-6.0, 6.0),
    "Tan": (-1.4, 1.4),
    "Asin": (-0.99, 0.99),
    "Acos": (-0.99, 0.99),
    "Atan": (-5.0, 5.0),
    "Sinh": (-4.0, 4.0),
    "Cosh": (-4.0, 4.0),
    "Asinh": (-5.0, 5.0),
    "Acosh": (1.01, 6.0),
    "Atanh": (-0.99, 0.99),
    "Sign": (-3.0, 3.0),
}


@pytest.mark.parametrize("op", list(TRIG))
def test_trig(dev, op):
    lo, hi = TRIG[op]
    run_case(dev, [N(op, ["x"])], {"x": rnd(3, 5, 67, lo=lo, hi=hi)})


def test_sign_of_zeros(dev):
    x = np.array([0.0, -0.0, 2.5, -1e-30, 1e-30, -7.0], np.float32)
    run_case(dev, [N("Sign", ["x"])], {"x": x})


def test_sin_cos_chain_fuses_nothing_wrong(dev):
    nodes = [N("Sin", ["x"], ["s"]), N("Cos", ["s"], ["c"]), N("Relu", ["c"], ["y"])]
    run_case(dev, nodes, {"x": rnd(4, 300, lo=-20, hi=20)})


REDUCE = ["ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum"]
REDUCE += ["ReduceMin", "ReduceProd"]
AXES = [[1], [0, 2], [-1], [1, 3], None]


def reduce_case(op, axes, keepdims, opset, noop=0):
    """The node, its inputs and initializers: axes as an attribute before opset 18, as a
    constant second input from it."""
    lo, hi = (0.2, 2.0) if op == "ReduceLogSum" else (0.6, 1.4) if op == "ReduceProd" else (-2, 2)
    x = rnd(2, 5, 3, 70, lo=lo, hi=hi)
    kw = {"keepdims": keepdims}
    if noop:
        kw["noop_with_empty_axes"] = 1
    inits = {}
    if opset >= 18:
        ins = ["x", "a"] if axes is not None else ["x"]
        if axes is not None:
            inits["a"] = np.asarray(axes, np.int64)
    else:
        ins = ["x"]
        if axes is not None:
            kw["axes"] = axes
    return N(op, ins, **kw), {"x": x}, inits


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("opset", [13, 18])
def test_reduce(dev, op, axes, keepdims, opset):
    node, ins, inits = reduce_case(op, axes, keepdims, opset)
    run_case(dev, [node], ins, inits, opset=opset)


@pytest.mark.parametrize("op", REDUCE)
def test_reduce_noop_with_empty_axes(dev, op):
    node, ins, inits = reduce_case(op, None, 1, 18, noop=1)
    if op == "ReduceLogSum":
        ins = {"x": np.abs(ins["x"]) + 0.1}
    run_case(dev, [node], ins, inits, opset=18)


def test_reduce_axes_at_run_time_are_refused(dev):
    from tests.devices.opencl_case import make_model, to_graph

    x, a = rnd(3, 4), np.asarray([1], np.int64)
    model = make_model([N("ReduceL2", ["x", "a"])], {"x": x, "a": a}, {}, ["y"], opset=18)
    graph = to_graph(model, {"x": x, "a": a}, 18)
    assert "axes must be constant" in dev.why_not(graph.nodes[0], graph)


def ties(*shape, seed=0, dtype=np.float32):
    """Values from a few levels, so that rows hold equal maxima and minima."""
    return np.random.default_rng(seed).integers(-3, 4, shape).astype(dtype)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_reduce(dev, op, axis, keepdims, last):
    node = N(op, ["x"], axis=axis, keepdims=keepdims, select_last_index=last)
    run_case(dev, [node], {"x": ties(3, 6, 9)}, opset=13, exact=True)
    run_case(dev, [node], {"x": rnd(3, 6, 9, seed=4)}, opset=13, exact=True)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_arg_reduce_integers(dev, dtype):
    node = N("ArgMax", ["x"], axis=1, keepdims=0, select_last_index=1)
    run_case(dev, [node], {"x": ties(4, 33, 2, dtype=dtype)}, opset=13, exact=True)
    run_case(dev, [N("ArgMin", ["x"])], {"x": ties(5, 7, dtype=dtype)}, opset=11, exact=True)


SCATTER_TYPES = ["float32", "int32", "int64", "bool"]


def values(dtype, *shape, seed=0):
    v = np.random.default_rng(seed + sum(shape)).integers(-50, 50, shape)
    if dtype == "float32":
        return rnd(*shape, seed=seed)
    return v > 0 if dtype == "bool" else v.astype(dtype)


@pytest.mark.parametrize("dtype", SCATTER_TYPES)
@pytest.mark.parametrize("itype", ["int32", "int64"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("const", [False, True], ids=["run-time", "constant"])
def test_scatter_elements_repeated_indices(dev, dtype, itype, axis, const):
    """Indices with repeats and negatives, read at run time or constant: the last update
    aimed at an element stays, bit for bit as in onnxruntime."""
    xs, ish = (4, 5, 6), [3, 4, 5]
    dim = xs[axis]
    idx = np.random.default_rng(axis + 3).integers(-dim, dim, ish).astype(itype)
    node = N("ScatterElements", ["x", "i", "u"], axis=axis)
    ins = {"x": values(dtype, *xs), "u": values(dtype, *ish, seed=2)}
    inits = {"i": idx} if const else {}
    if not const:
        ins["i"] = idx
    run_case(dev, [node], ins, inits, opset=18, exact=True)


@pytest.mark.parametrize("dtype", SCATTER_TYPES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_scatter_nd_run_time_indices(dev, dtype, k):
    xs = (5, 4, 3)
    rng = np.random.default_rng(k)
    idx = np.stack([rng.integers(-d, d, (2, 6)) for d in xs[:k]], axis=-1)  # repeats likely
    upd = values(dtype, 2, 6, *xs[k:], seed=5)
    ins = {"x": values(dtype, *xs), "i": idx.astype(np.int64), "u": upd}
    run_case(dev, [N("ScatterND", ["x", "i", "u"])], ins, opset=18, exact=True)


def test_scatter_owners_reset_between_runs(dev):
    """One unit run with two index tensors: the second run's result is its own, not
    shaped by the owners the first run claimed."""
    from tests.devices.opencl_case import make_model, reference, to_graph

    node = N("ScatterElements", ["x", "i", "u"], axis=1)
    first = {"x": rnd(2, 4), "i": np.array([[3, 3, 3], [1, 1, 2]], np.int64), "u": rnd(2, 3)}
    second = {**first, "i": np.array([[3, 0, 1], [2, 1, 0]], np.int64)}
    model = make_model([node], first, {}, ["y"], 18)
    graph = to_graph(model, first, 18)
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    for ins in (first, second):
        out = dev.copy_out(dev.run(unit, dict(ins)).outputs["y"])
        assert np.array_equal(out, reference(model, ins, ["y"])[0])
