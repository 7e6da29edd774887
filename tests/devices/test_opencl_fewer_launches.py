"""Nodes that move data with fewer launches, against onnxruntime: a Transpose that moves only
axes of extent 1 is a view (no launch); a Concat copies up to four inputs a launch; a
BatchNormalization after a ConvTranspose is folded into it; a Pow(x, 2) into the reduction
that alone reads it."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import kernel_name, rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def data(dtype, shape, seed):
    v = rnd(*shape, seed=seed)
    return v if dtype == "float32" else (v > 0) if dtype == "bool" else (v * 100).astype(dtype)


@pytest.mark.parametrize(
    "shape,perm,view",
    [
        ((1, 8, 1), [2, 0, 1], True),
        ((33, 2, 1, 4), [0, 2, 1, 3], True),
        ((1, 8, 1, 1, 3, 33), [0, 1, 2, 4, 3, 5], True),
        ((1, 1, 1), [2, 1, 0], True),
        ((1, 2, 8, 1, 33), [0, 2, 1, 3, 4], False),
        ((2, 1, 3), [2, 1, 0], False),
    ],
)
def test_transpose_of_unit_axes_is_a_view(dev, shape, perm, view):
    """Read after a launch (Neg) and as a unit output of the unit's input."""
    nodes = [N("Neg", ["x"], ["n"]), N("Transpose", ["n"], ["t"], perm=perm), N("Relu", ["t"])]
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*shape)}, outputs=["y", "t"])
    assert len(unit.handle.launches) == (2 if view else 3)
    nodes = [N("Transpose", ["x"], perm=perm)]
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*shape)}, exact=True)
    assert len(unit.handle.launches) == (0 if view else 1)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("count", [2, 3, 5, 9])
def test_concat_of_many_inputs_in_runs_of_four(dev, dtype, axis, count):
    """Inputs of different extents on the axis, one a constant: a launch per run of up to
    four inputs (a run of one is a strided copy)."""
    shapes = [[2, 3, 4] for _ in range(count)]
    for k, s in enumerate(shapes):
        s[axis] = 1 + k % 3
    inputs = {f"x{k}": data(dtype, s, k) for k, s in enumerate(shapes[1:], 1)}
    inits = {"x0": data(dtype, shapes[0], 0)}
    nodes = [N("Concat", [f"x{k}" for k in range(count)], axis=axis)]
    _, (unit, _), _ = run_case(dev, nodes, inputs, inits, opset=18, exact=True)
    assert len(unit.handle.launches) == -(-count // 4)


def test_concat_runs_split_where_a_producer_writes_in_place(dev):
    """Conv outputs written in place into the Concat split its runs; a nested Concat."""
    x = rnd(1, 3, 5, 5)
    nodes = [
        N("Sigmoid", ["x"], ["s0"]),
        N("Tanh", ["x"], ["s1"]),
        N("Conv", ["x", "w"], ["c"]),
        N("Neg", ["x"], ["s2"]),
        N("Abs", ["x"], ["s3"]),
        N("Concat", ["s2", "s3"], ["inner"], axis=1),
        N("Concat", ["s0", "s1", "c", "inner", "x"], axis=1),
    ]
    _, (unit, _), _ = run_case(dev, nodes, {"x": x}, {"w": rnd(2, 3, 1, 1, seed=1)})
    names = [(L.node, kernel_name(L)) for L in unit.handle.launches]
    names = [(v, "copy" if f.startswith("copy") else f) for v, f in names if v in ("n5", "n6")]
    # the inner Concat writes its slice of the outer one: s2 and s3 in one launch; the outer
    # one copies s0 and s1 in one launch, and x alone
    assert names == [("n5", "concat4"), ("n6", "concat4"), ("n6", "copy")], names


@pytest.mark.parametrize("group,bias,rank", [(1, True, 2), (2, False, 2), (4, True, 1)])
def test_conv_transpose_folds_the_batch_norm_after_it(dev, group, bias, rank):
    """BatchNormalization (then Relu) after a ConvTranspose of constant weights: folded into
    its weights and bias, as after a Conv; no launch of its own."""
    cin, cout = 8, 4
    k = [3] * rank
    x = rnd(1, cin, *[5] * rank)
    w = {"w": rnd(cin, cout // group, *k, seed=1)}
    ins = ["x", "w"] + (["b"] if bias else [])
    if bias:
        w["b"] = rnd(cout, seed=2)
    bn = {
        "g": rnd(cout, seed=3, lo=0.5, hi=1.5),
        "be": rnd(cout, seed=4),
        "m": rnd(cout, seed=5),
        "v": rnd(cout, seed=6, lo=0.5, hi=2.0),
    }
    nodes = [
        N("ConvTranspose", ins, ["c"], group=group, strides=[2] * rank, pads=[1] * 2 * rank),
        N("BatchNormalization", ["c", "g", "be", "m", "v"], ["n"]),
        N("Relu", ["n"]),
    ]
    _, (unit, _), _ = run_case(dev, nodes, {"x": x}, {**w, **bn})
    assert {L.node for L in unit.handle.launches} == {"n0"}


@pytest.mark.parametrize(
    "op,axes,keep", [("ReduceMean", [-1], 0), ("ReduceMean", [-2, -1], 1), ("ReduceSum", [1], 1)]
)
def test_pow_two_fused_into_the_reduction_that_reads_it(dev, op, axes, keep):
    """A mean (sum) of squares: one launch; a Pow read elsewhere too, or of exponent 3,
    keeps its launch."""
    x = rnd(2, 8, 5, 33)
    two, three = np.array(2.0, np.float32), np.array(3.0, np.float32)
    red = {"axes": axes, "keepdims": keep}
    nodes = [N("Pow", ["x", "two"], ["p"]), N(op, ["p"], **red)]
    _, (unit, _), _ = run_case(dev, nodes, {"x": x}, {"two": two}, opset=12, tol=1e-5)
    assert len(unit.handle.launches) == 1 and unit.handle.fused == {"n0": "n1"}
    nodes = [N("Pow", ["x", "two"], ["p"]), N(op, ["p"], ["r"], **red), N("Neg", ["p"], ["y"])]
    _, (unit, _), _ = run_case(dev, nodes, {"x": x}, {"two": two}, ["r", "y"], opset=12)
    assert len(unit.handle.launches) == 3
    nodes = [N("Pow", ["x", "three"], ["p"]), N(op, ["p"], **red)]
    _, (unit, _), _ = run_case(dev, nodes, {"x": x}, {"three": three}, opset=12)
    assert len(unit.handle.launches) == 2


def test_chain_takes_operands_made_for_it_alone(dev):
    """On a CPU device: ``sqrt(a^2 + b^2)`` is one launch; a side operand with a side
    operand of its own joins too; one that would make five inputs, or that a unit output
    keeps, keeps its launch."""
    if not dev.cpu_kernels:
        pytest.skip("chains are a CPU device's")
    x = {k: rnd(3, 4, 17, seed=i) for i, k in enumerate("abcde")}
    two = {"two": np.array(2.0, np.float32)}
    nodes = [
        N("Pow", ["a", "two"], ["pa"]),
        N("Pow", ["b", "two"], ["pb"]),
        N("Add", ["pa", "pb"], ["s"]),
        N("Sqrt", ["s"]),
    ]
    _, (unit, _), _ = run_case(dev, nodes, x, two, opset=12, tol=1e-6)
    assert len(unit.handle.launches) == 1
    nodes = [
        N("Exp", ["a"], ["ea"]),
        N("Neg", ["c"], ["nc"]),
        N("Mul", ["nc", "b"], ["m"]),  # a side operand of the Add, made from a side operand
        N("Add", ["ea", "m"], ["s"]),
        N("Abs", ["s"]),
    ]
    _, (unit, _), _ = run_case(dev, nodes, x, tol=1e-6)
    assert len(unit.handle.launches) == 1
    nodes[2] = N("Mul", ["nc", "d"], ["m0"])
    nodes.insert(3, N("Mul", ["m0", "e"], ["m"]))  # a, c, d, e and the Add's b: five inputs
    nodes[4] = N("Add", ["ea", "m"], ["s0"])
    nodes.insert(5, N("Add", ["s0", "b"], ["s"]))
    _, (unit, _), _ = run_case(dev, nodes, x, tol=1e-6)
    assert len(unit.handle.launches) == 2
    _, (unit, _), _ = run_case(dev, nodes, x, outputs=["y", "nc"], tol=1e-6)
    assert len(unit.handle.launches) == 3  # the Neg alone; a, nc, d, e; then the Add of b
