"""Depthwise convolutions against onnxruntime over kernel sizes 3/5/7, strides, dilations,
pads, maps 1 to 112 wide, channel multipliers 1 and 2, with and without bias, activation
and a Relu before; on a CPU device both of its kernels (``depthwise_rows`` where its plane
fits, ``depthwise8`` else), under the plain and the bounds-checked build."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from hetlab.devices.kernels.ops import depthwise
from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")

# (channels, H, W, kernel, Conv attributes)
CASES = [
    (16, 112, 112, 3, {"pads": [1, 1, 1, 1]}),
    (8, 56, 56, 3, {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    (12, 14, 14, 5, {"pads": [2, 2, 2, 2]}),
    (8, 7, 7, 5, {"pads": [2, 2, 2, 2]}),
    (6, 28, 28, 5, {"pads": [2, 2, 2, 2], "strides": [2, 2]}),
    (5, 15, 13, 7, {"pads": [3, 3, 3, 3]}),
    (4, 23, 23, 7, {"pads": [3, 3, 3, 3], "strides": [2, 2]}),
    (4, 19, 17, 3, {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),
    (3, 20, 21, 5, {"pads": [4, 2, 4, 2], "dilations": [2, 1], "strides": [1, 2]}),
    (4, 9, 10, 3, {}),
    (4, 10, 9, 3, {"pads": [0, 1, 2, 0]}),
    (3, 12, 12, 3, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    (3, 11, 11, 5, {"auto_pad": "SAME_LOWER", "strides": [3, 3]}),
    (6, 1, 1, 3, {"pads": [1, 1, 1, 1]}),
    (5, 3, 2, 3, {"pads": [1, 1, 1, 1]}),
    (4, 1, 40, 1, {}),
    (4, 2, 113, 3, {"pads": [1, 4, 1, 4], "strides": [1, 3]}),
    (3, 1, 300, 1, {"strides": [1, 2]}),
]


def _case_id(c):
    return f"{c[0]}x{c[1]}x{c[2]}-k{c[3]}-{c[4]}"


# each geometry is a program of its own (build options), so each case takes one of the six
# (multiplier, epilogue) pairs in turn: every pair meets three geometries, every geometry
# one pair
PAIRS = [(m, e) for e in ("none", "bias-relu", "pre-relu-clip") for m in (1, 2)]
ROTATED = [(case, *PAIRS[i % len(PAIRS)]) for i, case in enumerate(CASES)]


@pytest.mark.parametrize(
    "case,mult,epi", ROTATED, ids=[f"{_case_id(c)}-m{m}-{e}" for c, m, e in ROTATED]
)
def test_depthwise(dev, case, mult, epi):
    c, h, w, k, kw = case
    ins = ["r" if "pre" in epi else "x", "w"] + (["b"] if "bias" in epi else [])
    nodes = [helper.make_node("Conv", ins, ["c"], group=c, **kw)]
    if "pre" in epi:
        nodes.insert(0, helper.make_node("Relu", ["x"], ["r"]))
    if "clip" in epi:
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
    elif "relu" in epi:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    inits = {"w": rnd(c * mult, 1, k, k, seed=1), "b": rnd(c * mult, seed=2)}
    if "clip" in epi:
        inits |= {"lo": np.float32(-0.5), "hi": np.float32(0.6)}
    run_case(dev, nodes, {"x": rnd(1, c, h, w)}, inits, outputs=[nodes[-1].output[0]])


@pytest.mark.parametrize("case", CASES[:6], ids=_case_id)
def test_depthwise_batch_and_the_row_kernel(dev, case, monkeypatch):
    """Batch 2; and with no private plane allowed, the same Conv on ``depthwise8``."""
    c, h, w, k, kw = case
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=c, **kw)
    inits = {"w": rnd(c, 1, k, k, seed=1), "b": rnd(c, seed=2)}
    run_case(dev, [node], {"x": rnd(2, c, h, w)}, inits)
    monkeypatch.setattr(depthwise, "PLANE_MOST", 0)
    run_case(dev, [node], {"x": rnd(1, c, h, w)}, inits)


def test_the_plane_kernel_is_the_one_launched(dev):
    if not getattr(dev, "cpu_kernels", False):
        pytest.skip("the CPU device's kernel")
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=8, pads=[2, 2, 2, 2])
    _, (unit, _), _ = run_case(dev, [node], {"x": rnd(1, 8, 14, 14)}, {"w": rnd(8, 1, 5, 5)})
    (launch,) = unit.handle.launches
    assert launch.kernel.function_name == "depthwise_rows"
