"""A PRelu after a Conv or Gemm in the GEMM epilogue on a CPU device (``fusion.prelu_slopes``,
gemm_cpu.cl's PRELU) against onnxruntime: slopes per channel, row, column or one for all,
after a BatchNormalization or a residual Add, on gemm_cpu and gemv_cpu; one launch where
fused, the PRelu's own launch where its slopes vary otherwise. Plain and bounds-checked."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def _kernels(unit) -> list[str]:
    return [launch.kernel.function_name for launch in unit.handle.launches]


CONV = [  # (input, weight, Conv attributes, slope shape)
    ((1, 6, 9, 11), (10, 6, 3, 3), {"pads": [1, 1, 1, 1]}, (10, 1, 1)),
    ((2, 4, 8, 8), (6, 2, 3, 3), {"group": 2, "strides": [2, 2]}, (1, 6, 1, 1)),
    ((1, 30, 1, 1), (20, 30, 1, 1), {}, (20, 1, 1)),
    ((1, 5, 7, 7), (8, 5, 1, 1), {}, (1,)),
    ((1, 3, 12), (7, 3, 3), {"pads": [1, 1]}, (7, 1)),
]


@pytest.mark.parametrize("case", CONV, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}")
@pytest.mark.parametrize("before", ["bias", "bn", "residual"])
def test_conv_prelu(dev, case, before):
    xs, ws, kw, ss = case
    cout = ws[0]
    nodes = [N("Conv", ["x", "w", "b"], ["c"], **kw)]
    inits = {"w": rnd(*ws, seed=1), "b": rnd(cout, seed=2), "s": rnd(*ss, seed=3)}
    last = "c"
    if before == "bn":
        nodes.append(N("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"]))
        inits |= {k: rnd(cout, seed=i + 4) for i, k in enumerate(("g", "be", "mu"))}
        inits["var"] = rnd(cout, seed=8, lo=0.5, hi=1.5)
        last = "n"
    elif before == "residual":
        nodes.insert(0, N("Conv", ["x", "w2"], ["r"], **kw))
        nodes.append(N("Add", ["c", "r"], ["n"]))
        inits["w2"] = rnd(*ws, seed=9)
        last = "n"
    nodes.append(N("PRelu", [last, "s"]))
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*xs)}, inits)
    if getattr(dev, "cpu_kernels", False):
        assert not {"binary_cpu", "fused_cpu"} & set(_kernels(unit)), _kernels(unit)


@pytest.mark.parametrize("ss", [(16,), (1, 16), (5, 1), (1,), ()])
def test_gemm_prelu(dev, ss):
    node = N("Gemm", ["x", "w", "b"], ["g"], transB=1)
    s = rnd(*ss, seed=3) if ss else np.float32(0.2)
    inits = {"w": rnd(16, 24, seed=1), "b": rnd(16, seed=2), "s": s}
    _, (unit, _), _ = run_case(dev, [node, N("PRelu", ["g", "s"])], {"x": rnd(5, 24)}, inits)
    if getattr(dev, "cpu_kernels", False):
        assert _kernels(unit) == ["gemm_cpu"]


def test_a_prelu_whose_slopes_vary_along_a_map_stays_a_launch_of_its_own(dev):
    nodes = [N("Conv", ["x", "w"], ["c"]), N("PRelu", ["c", "s"])]
    inits = {"w": rnd(4, 3, 1, 1, seed=1), "s": rnd(4, 1, 5, seed=3)}
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(1, 3, 6, 5)}, inits)
    assert len(_kernels(unit)) == 2


@pytest.mark.parametrize("xs", [(1, 24), (3, 5, 24)])
def test_matmul_bias_prelu(dev, xs):
    """MatMul, Add of a row, PRelu per column (mtcnn's dense layers): one launch where the
    product is 2-D, the PRelu a launch of its own after a batched one."""
    nodes = [N("MatMul", ["x", "w"], ["m"]), N("Add", ["m", "b"], ["a"]), N("PRelu", ["a", "s"])]
    inits = {"w": rnd(24, 16, seed=1), "b": rnd(16, seed=2), "s": rnd(16, seed=3)}
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*xs)}, inits)
    if getattr(dev, "cpu_kernels", False):
        assert len(_kernels(unit)) == (1 if len(xs) == 2 else 2), _kernels(unit)
