"""Nodes that read only constants, computed once when a CPU device builds its unit
(kernels/precompute.py): the values equal onnxruntime's bit for bit, the nodes launch
nothing, and a precomputed tensor read outside the unit (here: a model output) is there."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def _int8_weights() -> dict[str, np.ndarray]:
    q = np.random.default_rng(3).integers(-128, 128, (24, 40)).astype(np.int8)
    return {"q": q, "s": rnd(24, 1, seed=4, lo=0.01, hi=0.1), "zp": np.int8(3)}


def test_cast_mul_matmul(dev):
    """int8 weights scaled at run time (Cast, then Mul by a per-row scale), then a product."""
    nodes = [
        helper.make_node("Cast", ["q"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["f", "s"], ["w"]),
        helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    errs, (unit, _), _ = run_case(
        dev, nodes, {"x": rnd(5, 24)}, _int8_weights(), outputs=["y", "wt"], exact=False
    )
    launched = {L.node for L in unit.handle.launches}
    if dev.cpu_kernels:
        assert launched == {"n3"}, launched  # Cast, Mul and Transpose launch nothing
    assert max(errs) <= 1e-6


def test_dequantize_add(dev):
    nodes = [
        helper.make_node("DequantizeLinear", ["q", "sc", "zp"], ["d"]),
        helper.make_node("Add", ["d", "x"], ["y"]),
    ]
    w = _int8_weights()
    inits = {"q": w["q"], "sc": np.float32(0.05), "zp": w["zp"]}
    run_case(dev, nodes, {"x": rnd(24, 40)}, inits, exact=True)
