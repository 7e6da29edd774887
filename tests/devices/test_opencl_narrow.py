"""Products with one to four columns of C and a constant A (on a CPU device gemm_cpu.cl's
``gemv_cpu``, vectors along M) against onnxruntime: 1x1 convolutions on 1x1 to 2x2 maps,
batched, with bias, activation, a Relu before and a fused residual; MatMul of a matrix by a
vector or a few; Gemm with a constant A and each broadcast of its C; under the plain and the
bounds-checked build."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


@pytest.mark.parametrize("cout", [5, 8, 40, 100])
@pytest.mark.parametrize("hw", [(1, 1), (2, 1), (1, 3), (2, 2), (1, 5)])
@pytest.mark.parametrize("epi", ["bias-relu", "none", "pre-relu"])
def test_pointwise_conv_on_a_small_map(dev, cout, hw, epi):
    conv_in = "r" if "pre" in epi else "x"
    nodes = [N("Conv", [conv_in, "w"] + (["b"] if "bias" in epi else []), ["c"])]
    if "pre" in epi:
        nodes.insert(0, N("Relu", ["x"], ["r"]))
    nodes.append(N("Relu", ["c"], ["y"]) if "relu" in epi.split("-")[-1:] else N("Neg", ["c"]))
    inits = {"w": rnd(cout, 37, 1, 1, seed=1), "b": rnd(cout, seed=2)}
    run_case(dev, nodes, {"x": rnd(2 if cout == 40 else 1, 37, *hw)}, inits)


@pytest.mark.parametrize("cout", [7, 64])
def test_pointwise_conv_with_a_fused_residual(dev, cout):
    nodes = [
        N("Conv", ["x", "w1"], ["r"]),
        N("Conv", ["x", "w", "b"], ["c"]),
        N("Add", ["c", "r"], ["s"]),
        N("Relu", ["s"], ["y"]),
    ]
    inits = {"w": rnd(cout, 30, 1, 1, seed=1), "w1": rnd(cout, 30, 1, 1), "b": rnd(cout, seed=2)}
    run_case(dev, nodes, {"x": rnd(1, 30, 1, 1)}, inits, outputs=["y"])


@pytest.mark.parametrize("m", [3, 8, 29, 100])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_matrix_times_a_few_columns(dev, m, n):
    run_case(dev, [N("MatMul", ["w", "x"])], {"x": rnd(45, n)}, {"w": rnd(m, 45, seed=1)})


def test_batched_matrix_times_a_vector(dev):
    x, w = rnd(3, 45, 1), rnd(3, 20, 45, seed=1)
    run_case(dev, [N("MatMul", ["w", "x"])], {"x": x}, {"w": w})
    run_case(dev, [N("MatMul", ["w", "x"])], {"x": rnd(45)}, {"w": w})


@pytest.mark.parametrize("cshape", [(19, 1), (2,), (19, 2), ()])
@pytest.mark.parametrize("ta", [0, 1])
def test_gemm_with_a_constant_a(dev, cshape, ta):
    a = rnd(*((40, 19) if ta else (19, 40)), seed=1)
    c = np.asarray(rnd(*cshape, seed=2) if cshape else np.float32(0.3))
    node = N("Gemm", ["a", "x", "c"], transA=ta, alpha=0.7, beta=1.3)
    run_case(dev, [node], {"x": rnd(40, 2)}, {"a": a, "c": c})


def test_gemv_cpu_is_the_kernel_of_a_matrix_by_a_vector(dev):
    if not getattr(dev, "cpu_kernels", False):
        pytest.skip("the CPU device's kernel")
    _, (unit, _), _ = run_case(
        dev, [N("MatMul", ["w", "x"])], {"x": rnd(64, 1)}, {"w": rnd(50, 64)}
    )
    assert [launch.kernel.function_name for launch in unit.handle.launches] == ["gemv_cpu"]
