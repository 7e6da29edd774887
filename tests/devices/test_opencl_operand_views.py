"""A Transpose or Slice read only by MatMuls is read through strides by them, no launch of its
own (``ops/operand_strides.py``), against onnxruntime, with the CPU's kernels (gemm_cpu) and
the GPU's (gemv, the tiled gemm) on the same device."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


@pytest.fixture(params=["cpu_kernels", "gpu_kernels"])
def kdev(dev, request):
    """``dev`` building the CPU's or the GPU's kernels."""
    if request.param == "cpu_kernels" and dev.kind == "cuda":
        pytest.skip("the CPU-shaped kernels are OpenCL's")
    before = dev.cpu_kernels
    dev.cpu_kernels = request.param == "cpu_kernels"
    yield dev
    dev.cpu_kernels = before


def ops(unit):
    return sorted(L.node for L in unit.handle.launches)


@pytest.mark.parametrize("made", [True, False])
def test_attention_scores_read_both_operands_through_strides(kdev, made):
    """q [b, s, h, d] -> [b, h, s, d] as A, k [b, s, h, d] -> [b, h, d, s] as B: one launch
    (with a Neg before each where the operands are made in the unit)."""
    q, k = rnd(2, 5, 3, 8, seed=1), rnd(2, 5, 3, 8, seed=2)
    src = ["nq", "nk"] if made else ["q", "k"]
    nodes = [N("Neg", ["q"], ["nq"]), N("Neg", ["k"], ["nk"])] if made else []
    nodes += [
        N("Transpose", [src[0]], ["tq"], perm=[0, 2, 1, 3]),
        N("Transpose", [src[1]], ["tk"], perm=[0, 2, 3, 1]),
        N("MatMul", ["tq", "tk"]),
    ]
    _, (unit, _), _ = run_case(kdev, nodes, {"q": q, "k": k}, tol=1e-5)
    assert ops(unit) == (["n0", "n1", "n4"] if made else ["n2"])


def test_one_transpose_read_by_three_matmuls_with_bias(kdev):
    """[4, 8, 16] -> [8, 4, 16] read by three MatMuls of constant weights, a bias Add folded
    into each: three launches."""
    w = {f"w{i}": rnd(16, 12, seed=i) for i in range(3)}
    b = {f"b{i}": rnd(12, seed=10 + i) for i in range(3)}
    nodes = [N("Neg", ["x"], ["n"]), N("Transpose", ["n"], ["t"], perm=[1, 0, 2])]
    for i in range(3):
        nodes += [N("MatMul", ["t", f"w{i}"], [f"m{i}"]), N("Add", [f"m{i}", f"b{i}"], [f"y{i}"])]
    outs = ["y0", "y1", "y2"]
    _, (unit, _), _ = run_case(kdev, nodes, {"x": rnd(4, 8, 16)}, {**w, **b}, outs, tol=1e-5)
    assert ops(unit) == ["n0", "n2", "n4", "n6"]


@pytest.mark.parametrize("starts,steps", [([0], [1]), ([-5], [2]), ([1, 2], [1, 3])])
def test_slice_read_by_a_matmul(kdev, starts, steps):
    """A Slice (of the last axis, or of the last two) as A: no launch of its own."""
    x = rnd(2, 3, 9, 10)
    axes = [3] if len(starts) == 1 else [2, 3]
    ends = [10**6] * len(starts)
    ys = np.asarray(x)[:, :, :, starts[0] :: steps[0]]
    if len(starts) == 2:
        ys = np.asarray(x)[:, :, starts[0] :: steps[0], starts[1] :: steps[1]]
    inits = {
        "st": np.array(starts, np.int64),
        "en": np.array(ends, np.int64),
        "ax": np.array(axes, np.int64),
        "sp": np.array(steps, np.int64),
        "w": rnd(ys.shape[-1], 6, seed=3),
    }
    nodes = [
        N("Neg", ["x"], ["n"]),
        N("Slice", ["n", "st", "en", "ax", "sp"], ["s"]),
        N("MatMul", ["s", "w"]),
    ]
    _, (unit, _), _ = run_case(kdev, nodes, {"x": x}, inits, tol=1e-5)
    assert ops(unit) == ["n0", "n2"]


def test_transpose_read_elsewhere_or_a_unit_output_keeps_its_launch(kdev):
    """Read by a Relu too, or an output of the unit: the Transpose copies."""
    w = {"w": rnd(8, 4, seed=1)}
    x = {"x": rnd(3, 5, 8)}
    nodes = [
        N("Neg", ["x"], ["n"]),
        N("Transpose", ["n"], ["t"], perm=[1, 0, 2]),
        N("MatMul", ["t", "w"], ["m"]),
        N("Relu", ["t"], ["r"]),
    ]
    _, (unit, _), _ = run_case(kdev, nodes, x, w, ["m", "r"], tol=1e-5)
    assert ops(unit) == ["n0", "n1", "n2", "n3"]
    _, (unit, _), _ = run_case(kdev, nodes[:3], x, w, ["m", "t"], tol=1e-5)
    assert ops(unit) == ["n0", "n1", "n2"]


def test_large_product_on_a_cpu_keeps_a_transpose_that_spreads_b(dev):
    """On a CPU device, a B whose columns the Transpose would spread apart, in a product
    large enough to pack B: the copy stays (the pack launch reads adjacent columns)."""
    if dev.kind == "cuda":
        pytest.skip("the CPU-shaped kernels are OpenCL's")
    before, dev.cpu_kernels = dev.cpu_kernels, True
    try:
        nodes = [
            N("Neg", ["b"], ["n"]),
            N("Transpose", ["n"], ["t"], perm=[1, 0]),
            N("MatMul", ["a", "t"]),
        ]
        inputs = {"a": rnd(64, 128, seed=1), "b": rnd(256, 128, seed=2)}
        _, (unit, _), _ = run_case(dev, nodes, inputs, tol=1e-5)
        assert "n1" in ops(unit)
    finally:
        dev.cpu_kernels = before


def test_scatter_does_not_overwrite_what_a_strided_matmul_reads(kdev):
    """A ScatterND of the Transpose's input, after the Transpose (through one MatMul) and
    before another MatMul of the Transpose (which reads the scatter's result too): it must
    not write in place."""
    idx = {"i": np.array([[0], [2]], np.int64), "w": rnd(6, 6, seed=4)}
    nodes = [
        N("Neg", ["x"], ["n"]),
        N("Transpose", ["n"], ["t"], perm=[1, 0]),
        N("MatMul", ["t", "w"], ["m1"]),
        N("Slice", ["m1", "s0", "s1"], ["u"]),
        N("ScatterND", ["n", "i", "u"], ["sc"]),
        N("Neg", ["sc"], ["w2"]),
        N("MatMul", ["t", "w2"], ["m2"]),
    ]
    idx |= {"s0": np.array([0], np.int64), "s1": np.array([2], np.int64)}
    _, _, _ = run_case(kdev, nodes, {"x": rnd(6, 6)}, idx, ["sc", "m2"], tol=1e-5)


@pytest.mark.parametrize("bias", ["", "row", "full"])
def test_matmul_writes_the_transpose_that_alone_reads_it(kdev, bias):
    """[b, h, s, d] -> [b, s, h, d] after the attention's second product (a bias Add folded
    in: a row, or a same-shape tensor made earlier): the MatMul writes the Transpose's
    output, one launch for both; then Reshape and Relu."""
    x = {"p": rnd(2, 3, 5, 4, seed=1), "v": rnd(2, 3, 4, 8, seed=2)}
    inits = {"shape": np.array([2, 5, 24], np.int64)}
    nodes = [N("MatMul", ["p", "v"], ["m"])]
    if bias == "row":
        inits["b"] = rnd(8, seed=3)
    if bias == "full":
        x["f"] = rnd(2, 3, 5, 8, seed=4)
        nodes.insert(0, N("Neg", ["f"], ["b"]))
    if bias:
        nodes.append(N("Add", ["m", "b"], ["mb"]))
    nodes += [
        N("Transpose", ["mb" if bias else "m"], ["t"], perm=[0, 2, 1, 3]),
        N("Reshape", ["t", "shape"], ["r"]),
        N("Relu", ["r"]),
    ]
    _, (unit, _), _ = run_case(kdev, nodes, x, inits, tol=1e-5)
    mm = 1 if bias == "full" else 0
    assert ops(unit) == sorted({"n0", f"n{mm}", f"n{len(nodes) - 1}"})  # no Transpose


@pytest.mark.parametrize("perm,folded", [([1, 0, 2], True), ([0, 2, 1], False)])
def test_batched_product_of_folded_rows_writes_a_transpose(kdev, perm, folded):
    """[8, 4, 16] @ [16, 12] (A's batch folded into M where C's rows allow it); a Transpose
    that moves the last axis keeps its launch; so does one of a MatMul that is a unit output."""
    w = {"w": rnd(16, 12, seed=1)}
    nodes = [
        N("Neg", ["x"], ["n"]),
        N("MatMul", ["n", "w"], ["m"]),
        N("Transpose", ["m"], ["t"], perm=perm),
        N("Relu", ["t"]),
    ]
    _, (unit, _), _ = run_case(kdev, nodes, {"x": rnd(8, 4, 16)}, w, tol=1e-5)
    assert ("n2" in ops(unit)) != folded
    _, (unit, _), _ = run_case(kdev, nodes, {"x": rnd(8, 4, 16)}, w, ["y", "m"], tol=1e-5)
    assert "n2" in ops(unit)
