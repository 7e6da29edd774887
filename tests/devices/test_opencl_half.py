"""Cast to and from float16 on the kernel devices against onnxruntime, bit for bit: rounding
to nearest even, subnormals, overflow, infinities, signed zeros, NaN; float16 model inputs,
outputs and constant weights cast to float32 to compute."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

from tests.devices import opencl_case
from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")

ONNX_TYPE = {
    "float32": TP.FLOAT,
    "float16": TP.FLOAT16,
    "int32": TP.INT32,
    "int64": TP.INT64,
    "bool": TP.BOOL,
    "int8": TP.INT8,
    "uint8": TP.UINT8,
}


@pytest.fixture(autouse=True)
def half_inputs(monkeypatch):
    """Lets the case models declare float16 inputs."""
    monkeypatch.setitem(opencl_case.NP2ONNX, np.dtype("float16"), onnx.TensorProto.FLOAT16)


def cast(src, dst, to):
    return helper.make_node("Cast", [src], [dst], to=ONNX_TYPE[to])


def awkward(seed=0):
    """float32 values that test every branch of the float -> half rounding."""
    rng = np.random.default_rng(seed)
    wide = rng.uniform(1, 2, 400) * 2.0 ** rng.integers(-30, 16, 400)
    wide *= rng.choice([-1, 1], 400)
    h = np.arange(0, 0x7C00, 97, dtype=np.uint16).view(np.float16).astype(np.float32)
    nxt = np.nextafter(h, np.float32(np.inf))
    ties = (h[:-1] + (h[1:] - h[:-1]) / 2).astype(np.float32)  # halfway (some exactly)
    special = [0.0, -0.0, 65504, 65519.99, 2.0**-24, 2.0**-25]
    special += [2.0**-25 * 1.0001, 3 * 2.0**-26, 5.96e-8, 6.1e-5, -6.1e-5, 1e-40, 1.5e-45]
    return np.concatenate([wide, h, nxt, ties, special]).astype(np.float32)


def test_float_to_half_and_back(dev):
    x = awkward()
    nodes = [cast("x", "h", "float16"), cast("h", "y", "float32")]
    run_case(dev, nodes, {"x": x}, outputs=["h", "y"], exact=True)


def on_device(dev, nodes, inputs, outputs):
    """The device's and onnxruntime's outputs (where inf or NaN rule out run_case's norm)."""
    model = opencl_case.make_model(nodes, inputs, {}, outputs)
    refs = opencl_case.reference(model, inputs, outputs)
    graph = opencl_case.to_graph(model, inputs, 17)
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    res = dev.run(unit, dict(inputs))
    return [dev.copy_out(res.outputs[t]) for t in outputs], refs


def test_overflow_infinity_and_nan(dev):
    x = np.array([np.inf, -np.inf, 65520, -65520, 7e4, 3e38, np.nan, -np.nan, 1], np.float32)
    nodes = [cast("x", "h", "float16"), cast("h", "y", "float32")]
    (h, y), (rh, ry) = on_device(dev, nodes, {"x": x}, ["h", "y"])
    assert h.dtype == np.float16 and y.dtype == np.float32
    assert h[:6].tobytes() == rh[:6].tobytes() and y[:6].tobytes() == ry[:6].tobytes()
    assert np.isnan(h[6:8]).all() and np.isnan(y[6:8]).all() and y[8] == 1.0


@pytest.mark.parametrize("dst", ["float32", "int32", "int64", "bool", "int8", "uint8"])
def test_half_input_to(dev, dst):
    """A float16 model input cast to each type (integers from in-range values)."""
    x = np.concatenate([rnd(50, lo=-100, hi=100), [0.0, -0.0, 0.5, -1.5, 2.5]])
    if dst == "float32":
        x = awkward()[:1000]
    x = x.astype(np.float16)
    if dst == "uint8":
        x = np.abs(x)
    run_case(dev, [cast("x", "y", dst)], {"x": x}, exact=True)


@pytest.mark.parametrize("src", ["int32", "int64", "bool", "int8", "uint8"])
def test_to_half_from(dev, src):
    v = np.random.default_rng(1).integers(-3000, 3000, 300)
    x = (v > 0) if src == "bool" else (np.abs(v) % 256 if src == "uint8" else v)
    x = np.asarray(x % 128 if src == "int8" else x).astype(src)
    run_case(dev, [cast("x", "y", "float16")], {"x": x}, exact=True)


def test_half_weights_cast_to_compute(dev):
    """A model stored in float16: weights and input cast to float32, a MatMul, a reshape of
    the float16 result: every node on the kernel device."""
    w = rnd(16, 8, seed=2).astype(np.float16)
    nodes = [
        cast("x", "xf", "float32"),
        cast("w", "wf", "float32"),
        helper.make_node("MatMul", ["xf", "wf"], ["m"]),
        cast("m", "mh", "float16"),
        helper.make_node("Reshape", ["mh", "s"], ["y"]),
    ]
    inits = {"w": w, "s": np.array([-1], np.int64)}
    x = rnd(3, 16).astype(np.float16)
    run_case(dev, nodes, {"x": x}, inits, exact=False, tol=1e-3)
