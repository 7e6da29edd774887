"""Fusions that remove launches, each against onnxruntime: a residual Add into the GEMM
epilogue of the Conv before it, and the rules that keep it out where it would be wrong."""

from __future__ import annotations

import pytest
from onnx import helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def _bn(c: int) -> dict:
    return {
        "s": rnd(c, seed=3, lo=0.5, hi=1.5),
        "o": rnd(c, seed=4),
        "m": rnd(c, seed=5),
        "v": rnd(c, seed=6, lo=0.5, hi=2.0),
    }


RESIDUAL_CONVS = {
    "3x3": ((1, 6, 9, 9), (6, 6, 3, 3), {"pads": [1, 1, 1, 1]}),
    "grouped": ((1, 6, 9, 9), (6, 3, 3, 3), {"pads": [1, 1, 1, 1], "group": 2}),
    "pointwise-gemv": ((1, 6, 9, 9), (3, 6, 1, 1), {}),
    "batch2-strided": ((2, 4, 11, 11), (5, 4, 3, 3), {"strides": [2, 2]}),
}


@pytest.mark.parametrize("name", list(RESIDUAL_CONVS))
@pytest.mark.parametrize("splits", [None, 3])
def test_conv_bn_add_relu_in_one_launch(dev, name, splits):
    """Conv -> BN -> Add(earlier tensor) -> Relu: one launch (two with split-K's sum)."""
    xs, ws, kw = RESIDUAL_CONVS[name]
    c = ws[0]
    nodes = [
        N("Conv", ["x", "w1"], ["r"], **kw),  # the residual, computed first
        N("Conv", ["x", "w", "b"], ["c"], **kw),
        N("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"], epsilon=1e-3),
        N("Add", ["n", "r"], ["a"]),
        N("Relu", ["a"], ["y"]),
    ]
    inits = {"w": rnd(*ws, seed=1), "w1": rnd(*ws, seed=7), "b": rnd(c, seed=2), **_bn(c)}
    dev.gemm_splits = splits
    try:
        _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*xs)}, inits)
    finally:
        dev.gemm_splits = None
    plan = unit.handle
    assert plan.fused == {"n2": "n1", "n3": "n1", "n4": "n1"}
    assert {L.node for L in plan.launches} == {"n0", "n1"}


def test_residual_conv_writes_its_concat_slice(dev):
    """The fused Conv writes into the Concat output at an offset, reading the residual at 0."""
    nodes = [
        N("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        N("Add", ["p", "c"], ["a"]),
        N("Conv", ["x", "w2"], ["d"]),
        N("Concat", ["d", "a"], ["y"], axis=1),
    ]
    inits = {"w": rnd(4, 4, 3, 3, seed=1), "w2": rnd(3, 4, 1, 1, seed=2)}
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(1, 4, 7, 7)}, inits)
    plan = unit.handle
    assert plan.fused == {"n2": "n1"}
    assert [L.node for L in plan.launches] == ["n0", "n1", "n3"]  # no copy for the Concat


@pytest.mark.parametrize(
    "case",
    ["other-made-later", "broadcast-other", "add-reads-it-twice", "depthwise", "conv-read-twice"],
)
def test_residual_not_fused(dev, case):
    """Where the epilogue cannot add the other operand, the Add runs on its own, correctly."""
    feed, inits = {"x": rnd(1, 4, 6, 6)}, {"w": rnd(4, 4, 1, 1, seed=1)}
    conv, pool = N("Conv", ["x", "w"], ["c"]), N("MaxPool", ["x"], ["p"], kernel_shape=[1, 1])
    outs = None
    if case == "other-made-later":  # topological order runs the Conv before the MaxPool
        nodes = [conv, pool, N("Add", ["c", "p"], ["y"])]
    elif case == "broadcast-other":
        nodes, feed["k"] = [conv, N("Add", ["c", "k"], ["y"])], rnd(1, 4, 1, 1, seed=2)
    elif case == "add-reads-it-twice":
        nodes = [conv, N("Add", ["c", "c"], ["y"])]
    elif case == "depthwise":
        inits["w"] = rnd(4, 1, 3, 3, seed=1)
        nodes = [pool, N("Conv", ["x", "w"], ["c"], group=4, pads=[1, 1, 1, 1])]
        nodes.append(N("Add", ["p", "c"], ["y"]))
    else:
        nodes, outs = [pool, conv, N("Add", ["p", "c"], ["y"])], ["y", "c"]
    _, (unit, _), _ = run_case(dev, nodes, feed, inits, outputs=outs)
    add = f"n{len(nodes) - 1}"
    assert add not in unit.handle.fused
    assert any(L.node == add for L in unit.handle.launches)


@pytest.mark.parametrize("splits", [None, 3])
def test_relu_applied_by_every_conv_reading_it(dev, splits):
    """A Relu read by depthwise, 3x3 and pointwise (GEMV) Convs: none reads its output,
    each applies it as it loads."""
    nodes = [
        N("Add", ["x", "x"], ["a"]),  # the Relu's input has another reader: not an epilogue
        N("Relu", ["a"], ["r"]),
        N("Conv", ["r", "wd"], ["d"], group=6, pads=[1, 1, 1, 1]),
        N("Conv", ["r", "w3"], ["c"], pads=[1, 1, 1, 1]),
        N("Conv", ["r", "w1"], ["p"]),
        N("Concat", ["d", "c", "p", "a"], ["y"], axis=1),
    ]
    inits = {"wd": rnd(6, 1, 3, 3, seed=1), "w3": rnd(5, 6, 3, 3, seed=2)}
    inits["w1"] = rnd(3, 6, 1, 1, seed=3)
    dev.gemm_splits = splits
    try:
        _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(1, 6, 8, 8)}, inits)
    finally:
        dev.gemm_splits = None
    assert unit.handle.fused.get("n1") == "n2"
    assert not any(L.node == "n1" for L in unit.handle.launches)


@pytest.mark.parametrize("case", ["pool-reads-it", "graph-output"])
def test_relu_kept_where_another_reader_needs_it(dev, case):
    nodes = [
        N("Add", ["x", "x"], ["a"]),
        N("Relu", ["a"], ["r"]),
        N("Conv", ["r", "w"], ["c"]),
        N("MaxPool", ["r"], ["m"], kernel_shape=[1, 1]),
        N("Concat", ["a", "c", "m"], ["y"], axis=1),
    ]
    outs = ["y"]
    if case == "graph-output":
        nodes, outs = nodes[:3], ["c", "r", "a"]
    feed, inits = {"x": rnd(1, 4, 5, 5)}, {"w": rnd(3, 4, 1, 1, seed=1)}
    _, (unit, _), _ = run_case(dev, nodes, feed, inits, outputs=outs)
    assert "n1" not in unit.handle.fused
