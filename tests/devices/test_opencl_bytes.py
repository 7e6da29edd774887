"""The 1-byte integers of quantized models (int8, uint8) through the ops that move, gather
and cast values, and IsNaN/IsInf, against onnxruntime bit for bit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx import helper

from hetlab.devices.kernels.ops import why_not
from tests.devices.opencl_case import make_model, run_case, to_graph

pytest.importorskip("pyopencl")

BYTES = ["int8", "uint8"]
CASTS = {"float32": 1, "uint8": 2, "int8": 3, "int32": 6, "int64": 7, "bool": 9}


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def exact(dev, nodes, inputs, inits=None, outputs=None, opset=17):
    return run_case(dev, nodes, inputs, inits, outputs, opset, exact=True)


def full_range(shape, dtype, seed=0):
    """Values over the whole range of ``dtype`` (both ends included)."""
    info = np.iinfo(dtype)
    v = np.random.default_rng(seed).integers(info.min, info.max, shape, endpoint=True)
    v.reshape(-1)[:2] = info.min, info.max
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", BYTES)
def test_views_and_copies_of_byte_tensors(dev, dtype):
    """Every data-movement op on int8/uint8: the bytes arrive unchanged (the sign included)."""
    x = full_range((2, 3, 4), dtype)
    i64 = lambda v: np.array(v, np.int64)
    nodes = [
        N("Reshape", ["x", "s"], ["r"]),
        N("Flatten", ["r"], ["f"], axis=1),
        N("Unsqueeze", ["f", "ax"], ["u"]),
        N("Squeeze", ["u", "ax"], ["q"]),
        N("Transpose", ["q"], ["t"], perm=[1, 0]),
        N("Concat", ["t", "c"], ["k"], axis=0),
        N("Slice", ["k", "st", "en", "ax1", "sp"], ["sl"]),
        N("Expand", ["sl", "es"], ["e"]),
        N("Tile", ["e", "rep"], ["y"]),
    ]
    inits = {
        "s": i64([4, 3, 2]),
        "ax": i64([0]),
        "c": full_range((1, 4), dtype, seed=1),
        "st": i64([5]),
        "en": i64([-100]),
        "ax1": i64([1]),
        "sp": i64([-2]),
        "es": i64([2, 1, 1]),
        "rep": i64([1, 2, 3]),
    }
    exact(dev, nodes, {"x": x}, inits, outputs=["y", "r", "k"])


@pytest.mark.parametrize("dtype", BYTES)
def test_split_and_pad_of_bytes(dev, dtype):
    x = full_range((3, 8), dtype)
    split = [N("Split", ["x", "s"], ["p", "q"], axis=1)]
    exact(dev, split, {"x": x}, {"s": np.array([3, 5])}, outputs=["p", "q"])
    pads, v = np.array([1, 0, 0, 2], np.int64), np.array(-7).astype(dtype)
    for mode in ("constant", "edge", "reflect"):
        inits = {"p": pads, "v": v} if mode == "constant" else {"p": pads}
        exact(dev, [N("Pad", ["x", *inits], mode=mode)], {"x": x}, inits)


@pytest.mark.parametrize("itype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", BYTES)
def test_gather_of_bytes(dev, itype, dtype):
    """A quantized embedding table: indices at run time (negative from the end), a few
    constant ones (strided copies), and many constant ones (the gather kernel)."""
    table = full_range((9, 4, 3), dtype)
    idx = np.array([[0, 8, -1], [3, -9, 4]], itype)
    exact(dev, [N("Gather", ["t", "i"], axis=0)], {"i": idx}, {"t": table})
    exact(dev, [N("Gather", ["t", "i"], axis=1)], {"t": table}, {"i": idx % 4})
    many = (np.arange(100) * 7 % 9).astype(itype)
    _, (unit, _), _ = exact(dev, [N("Gather", ["t", "i"])], {"t": table}, {"i": many})
    assert len(unit.handle.launches) == 1


def cast_source(src):
    """Inputs of type ``src`` that cover a cast's cases: both ends of the 1-byte ranges and
    past them (integers keep their low 8 bits), fractions of both signs (truncation)."""
    if src == "float32":
        return np.array([-300.7, -129.5, -128.9, -3.7, -0.5, 0.5, 3.7, 127.9, 200.5, 255.9, 256.5])
    if src == "bool":
        return np.array([True, False, True])
    wide = [-(2**31), -257, -129, -128, -1, 0, 1, 127, 128, 255, 256, 2**31 - 1]
    return np.array(wide) if src in ("int32", "int64") else full_range((40,), src)


# every pair with an int8 or uint8 side (test_opencl_int_ops covers the wider types)
PAIRS = [(s, d) for s in CASTS for d in CASTS if s in BYTES or d in BYTES]


@pytest.mark.parametrize("src,dst", PAIRS)
def test_cast_to_and_from_bytes(dev, src, dst):
    """Narrowing wraps (the low 8 bits, through int32 from a float, as onnxruntime's casts do),
    widening and int8/uint8 -> float are exact, to bool nonzero is true."""
    x = cast_source(src).astype(src)
    _, (unit, _), _ = exact(dev, [N("Cast", ["x"], to=CASTS[dst])], {"x": x})
    assert len(unit.handle.launches) == (src != dst)  # the same type: a view


SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -3e38, 3.4e38, 1e-45])


def test_isnan(dev):
    x = np.tile(SPECIAL, 3).reshape(5, 6).astype(np.float32)
    exact(dev, [N("IsNaN", ["x"])], {"x": x})


@pytest.mark.parametrize("neg,pos", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isinf_counts_the_signs_asked_for(dev, neg, pos):
    x = np.tile(SPECIAL, 3).reshape(5, 6).astype(np.float32)
    exact(dev, [N("IsInf", ["x"], detect_negative=neg, detect_positive=pos)], {"x": x})


def test_isnan_takes_only_float32():
    """IsNaN of another type stays on the CPU with a reason naming the dtype."""
    x = {"x": np.zeros(3, np.float32)}
    g = to_graph(make_model([N("IsNaN", ["x"])], x, {}, ["y"]), x, 17)
    assert why_not(g.nodes[0], g) is None
    g.tensors["x"] = dataclasses.replace(g.tensors["x"], dtype="int32")
    assert "int32" in why_not(g.nodes[0], g)
