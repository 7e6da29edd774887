"""Trigonometric and hyperbolic unary ops, the remaining reductions (ReduceL1, ReduceL2,
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
}


@pytest.mark.parametrize("op", list(TRIG))
def test_trig(dev, op):
    lo, hi = TRIG[op]
    run_case(dev, [N(op, ["x"])], {"x": rnd(3, 5, 67, lo=lo, hi=hi)})


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
