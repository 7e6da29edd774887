"""Convolutions and matrix products on the library path (``kernels/ops/library.py``), each
against onnxruntime in float32.

On an OpenCL device (PoCL here) ``force_library`` runs the path around the device's own
float32 GEMM: im2col, packing, batch offsets, the Concat slice and the epilogue are checked
at float32's tolerance. With ``HETLAB_TEST_CUDA=1`` the same cases run on cuBLAS, forced at
fp32 (layouts alone) and at each precision the GPU declares, within ``tolerance(p)``: a product whose operands are rounded to
unit roundoff u and summed in float32 is off by about 2u in norm for data of random signs,
whatever K (each output's error grows with sqrt(K) as the output does); 8u leaves a factor 4.
"""

from __future__ import annotations

import copy
import os

import numpy as np
import pytest
from onnx import helper

from hetlab.devices.kernels.ops.library import _even_runs, bf16_bits
from hetlab.devices.precision import UNIT_ROUNDOFF
from tests.devices.opencl_case import rnd, run_case

CUDA = bool(os.environ.get("HETLAB_TEST_CUDA"))
PRECISIONS = ["fp32", "tf32", "fp16", "bf16"] if CUDA else ["fp32"]


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def tolerance(p: str) -> float:
    return 1e-5 if p == "fp32" else 8 * UNIT_ROUNDOFF[p]


@pytest.fixture(params=PRECISIONS)
def lib(request, dev):
    """``dev`` on the library path: forced at fp32 on OpenCL, at a precision on CUDA."""
    p = request.param
    if p not in dev.capabilities().precisions and p != "fp32":
        pytest.skip(f"{dev.name} does not declare {p}")
    at = dev.with_precision(p) if hasattr(dev, "with_precision") else copy.copy(dev)
    if not hasattr(dev, "with_precision"):
        at.precision = p
    if p == "fp32":
        at = copy.copy(at)
        at.force_library = True
    return at


def _run(lib, nodes, inputs, inits=None):
    tol = tolerance(lib.precision)
    _, (unit, _), _ = run_case(lib, nodes, inputs, inits or {}, tol=tol)
    return unit.handle


CONVS = {
    "1x1": ((1, 8, 6, 6), (5, 8, 1, 1), {}),
    "1x1-stride2": ((1, 8, 7, 7), (5, 8, 1, 1), {"strides": [2, 2]}),
    "3x3-pad1": ((1, 6, 9, 9), (7, 6, 3, 3), {"pads": [1, 1, 1, 1]}),
    "5x5-stride2": ((1, 4, 13, 11), (6, 4, 5, 5), {"pads": [2, 2, 2, 2], "strides": [2, 2]}),
    "7x7-stem": ((1, 3, 20, 20), (8, 3, 7, 7), {"pads": [3, 3, 3, 3], "strides": [2, 2]}),
    "1x7": ((1, 4, 9, 9), (6, 4, 1, 7), {"pads": [0, 3, 0, 3]}),
    "dilated": ((1, 4, 12, 12), (6, 4, 3, 3), {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),
    "grouped": ((1, 8, 7, 7), (6, 4, 3, 3), {"pads": [1, 1, 1, 1], "group": 2}),
    "grouped-batch2": ((2, 8, 7, 7), (8, 2, 3, 3), {"group": 4}),
    "batch2-1x1": ((2, 6, 5, 5), (4, 6, 1, 1), {}),
    "1d": ((1, 4, 30), (5, 4, 3), {"pads": [1, 1]}),
}


@pytest.mark.parametrize("name", list(CONVS))
def test_conv_shapes(lib, name):
    xs, ws, kw = CONVS[name]
    inits = {"w": rnd(*ws, seed=1), "b": rnd(ws[0], seed=2)}
    _run(lib, [N("Conv", ["x", "w", "b"], **kw)], {"x": rnd(*xs)}, inits)


def _bn(c: int) -> dict:
    return {
        "s": rnd(c, seed=3, lo=0.5, hi=1.5),
        "o": rnd(c, seed=4),
        "m": rnd(c, seed=5),
        "v": rnd(c, seed=6, lo=0.5, hi=2.0),
    }


@pytest.mark.parametrize("kernel", [1, 3])
def test_conv_bn_add_relu_epilogue(lib, kernel):
    """Conv -> BN -> Add(earlier Conv) -> Relu: folded weights, residual and activation."""
    pads = [kernel // 2] * 4
    nodes = [
        N("Conv", ["x", "w1"], ["r"], pads=pads),
        N("Conv", ["x", "w"], ["c"], pads=pads),
        N("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"], epsilon=1e-3),
        N("Add", ["n", "r"], ["a"]),
        N("Relu", ["a"], ["y"]),
    ]
    ws = (6, 6, kernel, kernel)
    inits = {"w": rnd(*ws, seed=1), "w1": rnd(*ws, seed=7), **_bn(6)}
    plan = _run(lib, nodes, {"x": rnd(1, 6, 8, 8)}, inits)
    assert plan.fused == {"n2": "n1", "n3": "n1", "n4": "n1"}


def test_relu_before_conv(lib):
    """A Relu read only by Convs is applied as their operand is gathered."""
    nodes = [N("Relu", ["x"], ["r"]), N("Conv", ["r", "w"], pads=[1, 1, 1, 1])]
    plan = _run(lib, nodes, {"x": rnd(1, 4, 6, 6)}, {"w": rnd(5, 4, 3, 3, seed=1)})
    assert "n0" in plan.fused


def test_relu_before_pointwise_conv(lib):
    nodes = [N("Relu", ["x"], ["r"]), N("Conv", ["r", "w", "b"])]
    inits = {"w": rnd(5, 4, 1, 1, seed=1), "b": rnd(5, seed=2)}
    _run(lib, nodes, {"x": rnd(1, 4, 6, 6)}, inits)


def test_convs_write_their_concat_slices(lib):
    """Convs elided into a Concat write at their offsets, with and without an epilogue."""
    nodes = [
        N("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        N("Conv", ["x", "w2", "b2"], ["d"]),
        N("Relu", ["d"], ["e"]),
        N("Conv", ["x", "w3"], ["f"]),
        N("Concat", ["c", "e", "f"], ["y"], axis=1),
    ]
    inits = {
        "w": rnd(4, 4, 3, 3, seed=1),
        "w2": rnd(3, 4, 1, 1, seed=2),
        "b2": rnd(3, seed=3),
        "w3": rnd(2, 4, 1, 1, seed=4),
    }
    plan = _run(lib, nodes, {"x": rnd(1, 4, 7, 7)}, inits)
    assert "n4" not in {L.node for L in plan.launches}  # no copy for the Concat


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
def test_gemm_transposes_alpha_beta(lib, ta, tb):
    a = rnd(9, 6) if ta else rnd(6, 9)
    b = rnd(5, 9, seed=1) if tb else rnd(9, 5, seed=1)
    node = N("Gemm", ["a", "b", "c"], transA=ta, transB=tb, alpha=0.5, beta=2.0)
    _run(lib, [node], {"a": a}, {"b": b, "c": rnd(5, seed=2)})


def test_gemm_of_two_inputs_and_a_skinny_one(lib):
    _run(lib, [N("Gemm", ["a", "b"], transB=1)], {"a": rnd(7, 12), "b": rnd(4, 12, seed=1)})
    _run(lib, [N("Gemm", ["a", "b", "c"])], {"a": rnd(1, 40)}, {"b": rnd(40, 10), "c": rnd(10)})


MATMULS = {
    "batched": ((2, 3, 5, 7), (3, 7, 4)),
    "broadcast-both": ((2, 1, 5, 7), (1, 3, 7, 4)),
    "folded": ((2, 3, 5, 7), (7, 4)),
    "vector": ((7,), (2, 7, 4)),
}


@pytest.mark.parametrize("name", list(MATMULS))
def test_matmul_batches(lib, name):
    a, b = MATMULS[name]
    _run(lib, [N("MatMul", ["a", "b"])], {"a": rnd(*a), "b": rnd(*b, seed=1)})


def test_matmul_with_constant_weights_and_bias(lib):
    nodes = [N("MatMul", ["a", "w"], ["m"]), N("Add", ["m", "b"])]
    _run(lib, nodes, {"a": rnd(3, 6, 8)}, {"w": rnd(8, 5, seed=1), "b": rnd(5, seed=2)})


def test_even_runs_split_where_a_stride_changes():
    assert _even_runs([0, 4, 8], [0, 0, 0], [0, 2, 4]) == [(3, (0, 4, 0, 0, 0, 2))]
    runs = _even_runs([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [0, 1, 2, 3, 4, 5])
    assert sum(n for n, _ in runs) == 6 and len(runs) == 2
    assert _even_runs([5], [6], [7]) == [(1, (5, 0, 6, 0, 7, 0))]


def test_bf16_bits_round_to_nearest_even():
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -2.5, np.inf, np.nan, 3.4e38], np.float32)
    bits = bf16_bits(x)
    back = (bits.astype(np.uint32) << 16).view(np.float32)
    assert back[0] == 1.0 and back[1] == 1.0  # a tie rounds to the even mantissa
    assert back[2] == 1.0 + 4 * 2**-8 and back[3] == -2.5
    assert np.isinf(back[4]) and np.isnan(back[5]) and np.isinf(back[6])


def test_the_path_is_operands_gemm_epilogue(lib):
    """A 3x3 Conv with a bias: im2col, the GEMM, the epilogue (in the GEMM's own call where
    the library takes it). A 1x1 Conv without one: the GEMM alone, straight into the output
    (its input packed first where it is 16-bit)."""
    inits = {"w": rnd(5, 6, 3, 3, seed=1), "b": rnd(5, seed=2)}
    plan = _run(lib, [N("Conv", ["x", "w", "b"], pads=[1, 1, 1, 1])], {"x": rnd(1, 6, 9, 9)}, inits)
    assert len(plan.launches) == (2 if lib.library_epilogue else 3)
    plan = _run(lib, [N("Conv", ["x", "w"])], {"x": rnd(1, 6, 9, 9)}, {"w": rnd(5, 6, 1, 1)})
    assert len(plan.launches) == (1 if lib.precision in ("fp32", "tf32") else 2)


def _launch(dev, kernel, gsize, lsize, args):
    for i, a in enumerate(args):
        kernel.set_arg(i, a)
    if hasattr(kernel, "launch"):  # CUDA
        with dev.cp.cuda.Device(dev.index), dev.stream:
            kernel.launch(gsize, lsize)
        dev.stream.synchronize()
        return
    import pyopencl as cl

    cl.enqueue_nd_range_kernel(dev.plain_queue, kernel, gsize, lsize).wait()


@pytest.mark.parametrize("option", ["-DOUT_F16", "-DOUT_BF16"])
def test_operands_round_to_nearest_even_on_the_device(dev, bounds, option):
    """``tensor.cl``'s rounding is numpy's float16 cast and ``bf16_bits``, bit for bit:
    ties, subnormals, overflow and infinities."""
    if bounds:
        pytest.skip("launched by hand: the checked build's extra arguments are the plan's")
    x = np.concatenate(
        [
            rnd(300, seed=9, lo=-70000.0, hi=70000.0),
            rnd(300, seed=8, lo=-1e-6, hi=1e-6),
            np.array([1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 65520.0, -np.inf], np.float32),
        ]
    )
    n = x.size
    src, dst, off = dev.copy_in(x), dev.alloc((n,), "uint16"), dev.copy_in(np.zeros(1, np.int32))
    k = dev.kernel("tensor.cl", "pack", option)
    args = [src.buf, dst.buf, off.buf, *np.int32([1, n, 0, 1, n])]
    _launch(dev, k, (-(-n // 64) * 64, 1, 1), (64, 1, 1), args)
    got = dev.copy_out(dst)
    with np.errstate(over="ignore"):
        half = x.astype(np.float16).view(np.uint16)
    want = half if option == "-DOUT_F16" else bf16_bits(x)
    assert np.array_equal(got, want), np.flatnonzero(got != want)[:5]
