"""Long 1-D and long-row convolutions against onnxruntime: the vector, strided and edge
paths of the CPU device's kernels (gemm_cpu.cl, conv_cpu.cl, col2im) and the GPU kernels
alike, with rows long enough that every path is taken; and products whose constant operands
a CPU device packs (gemm_pack.py)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from hetlab.devices.kernels.ops import gemm_pack
from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")

CASES = [
    {"x": (1, 1, 1000), "w": (16, 1, 10), "kw": {"strides": [5], "pads": [3, 2]}},
    {"x": (1, 6, 700), "w": (8, 6, 3), "kw": {"dilations": [2], "pads": [2, 2]}},
    {"x": (2, 5, 301), "w": (7, 5, 4), "kw": {"strides": [2], "pads": [1, 1]}},
    {"x": (1, 8, 500), "w": (8, 1, 5), "kw": {"group": 8, "pads": [2, 2]}},
    {"x": (1, 4, 333), "w": (8, 1, 3), "kw": {"group": 4, "strides": [2], "pads": [1, 1]}},
    {"x": (1, 3, 9, 100), "w": (5, 3, 3, 3), "kw": {"strides": [2, 3], "pads": [1, 1, 1, 1]}},
    {"x": (1, 6, 5, 90), "w": (6, 1, 3, 5), "kw": {"group": 6, "pads": [1, 2, 1, 2]}},
    # short output rows: blocks of 8 (7 x 7) or 16 with a partial last block, edges masked
    {"x": (1, 8, 7, 7), "w": (16, 8, 3, 3), "kw": {"pads": [1, 1, 1, 1]}},
    {"x": (2, 6, 6, 19), "w": (10, 3, 3, 3), "kw": {"group": 2, "pads": [1, 0, 2, 1]}},
    {"x": (3, 4, 1, 21), "w": (9, 4, 1, 8), "kw": {}},
    {"x": (1, 3, 23, 23), "w": (8, 3, 7, 7), "kw": {"strides": [2, 2], "pads": [3, 3, 3, 3]}},
    {"x": (1, 4, 12, 40), "w": (5, 4, 3, 3), "kw": {"dilations": [2, 1], "pads": [1, 1, 1, 1]}},
    # columns of width 1: the same convolution along the row
    {"x": (1, 5, 40, 1), "w": (7, 5, 5, 1), "kw": {"strides": [2, 1], "pads": [2, 0, 1, 0]}},
    {
        "x": (1, 4, 30, 1),
        "w": (4, 1, 3, 1),
        "kw": {"group": 4, "dilations": [2, 1], "pads": [2, 0, 2, 0]},
    },
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['x']}-{c['w']}-{c['kw']}")
@pytest.mark.parametrize("pre_relu", [False, True])
@pytest.mark.parametrize("packed", [False, True])
def test_long_conv(dev, case, pre_relu, packed, monkeypatch):
    if packed:  # every product's B packed by its own launch on a CPU device (gemm_pack.py)
        monkeypatch.setattr(gemm_pack, "PACK_LEAST", 0)
    conv = helper.make_node("Conv", ["r" if pre_relu else "x", "w", "b"], ["y"], **case["kw"])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), conv] if pre_relu else [conv]
    inits = {"w": rnd(*case["w"], seed=1), "b": rnd(case["w"][0], seed=2)}
    run_case(dev, nodes, {"x": rnd(*case["x"])}, inits)


@pytest.mark.parametrize(
    "shapes",
    [
        ((1, 8, 400), (8, 4, 4), {"strides": [2], "pads": [1, 1]}),
        ((2, 6, 150), (6, 2, 5), {"strides": [3], "group": 2, "output_padding": [1]}),
        ((1, 4, 200), (4, 3, 3), {"dilations": [2]}),
    ],
)
def test_long_conv_transpose(dev, shapes):
    xs, ws, kw = shapes
    cout = ws[1] * kw.get("group", 1)
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **kw)
    run_case(dev, [node], {"x": rnd(*xs)}, {"w": rnd(*ws, seed=1), "b": rnd(cout, seed=2)})


@pytest.mark.parametrize(
    "sa,sb,const",
    [
        ((37, 45), (45, 29), "b"),
        ((2, 3, 37, 45), (3, 45, 29), "b"),
        ((4, 1, 5, 8), (3, 8, 6), "ab"),
        ((45,), (2, 45, 7), "a"),
        ((3, 7, 45), (45,), "b"),
        ((2, 9, 130), (130, 70), "ab"),
        ((13, 70), (70, 140), "a"),
    ],
)
@pytest.mark.parametrize("packed", [False, True])
def test_matmul_packed_constants(dev, sa, sb, const, packed, monkeypatch):
    """Constant operands of a product (packed on a CPU device), batched and broadcast; a B
    that is not constant packed by a launch (``packed``)."""
    if packed:
        monkeypatch.setattr(gemm_pack, "PACK_LEAST", 0)
    ops = {"a": rnd(*sa), "b": rnd(*sb, seed=1)}
    inits = {k: v for k, v in ops.items() if k in const}
    feeds = {k: v for k, v in ops.items() if k not in const}
    if not feeds:  # a model needs an input: the product feeds an Add
        feeds = {"z": rnd(1)}
        nodes = [
            helper.make_node("MatMul", ["a", "b"], ["p"]),
            helper.make_node("Add", ["p", "z"], ["y"]),
        ]
    else:
        nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
    run_case(dev, nodes, feeds, inits)


@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 1)])
def test_gemm_packed_constants(dev, ta, tb):
    a, b = rnd(*((33, 19) if ta else (19, 33))), rnd(*((29, 33) if tb else (33, 29)), seed=1)
    node = helper.make_node("Gemm", ["x", "b", "c"], ["y"], transA=ta, transB=tb, alpha=0.7)
    run_case(dev, [node], {"x": a}, {"b": b, "c": rnd(29, seed=2)})


@pytest.mark.parametrize(
    "xs,ws,kw",
    [
        ((1, 6, 9, 37), (10, 6, 3, 3), {"pads": [1, 1, 1, 1]}),
        ((2, 4, 8, 20), (6, 2, 3, 3), {"group": 2, "strides": [2, 1], "pads": [1, 0, 1, 2]}),
        ((1, 3, 1, 50), (5, 3, 1, 4), {"dilations": [1, 2]}),
    ],
)
@pytest.mark.parametrize("packed", [False, True])
def test_conv_integer_packed(dev, xs, ws, kw, packed, monkeypatch):
    """ConvInteger with constant weights (packed) and its input packed by pack_x or read in
    place; uint8 operands with zero points, exact."""
    if packed:
        monkeypatch.setattr(gemm_pack, "PACK_LEAST", 0)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, xs).astype(np.uint8)
    inits = {"w": rng.integers(0, 256, ws).astype(np.uint8), "zx": np.uint8(7), "zw": np.uint8(130)}
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **kw)
    run_case(dev, [node], {"x": x}, inits, exact=True)
