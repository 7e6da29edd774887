"""The ``ai.onnx.ml`` ops with kernels (Scaler) against onnxruntime, bit for bit, and the
refusal of the others."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import make_model, reference, rnd, to_graph

pytest.importorskip("pyopencl")

ML = "ai.onnx.ml"


def ml_model(nodes, inputs):
    m = make_model(nodes, inputs, {}, ["y"], 17)
    m.opset_import.append(helper.make_opsetid(ML, 1))
    return m


def data(dtype, shape):
    if dtype == "float32":
        return rnd(*shape, lo=-20.0, hi=20.0)
    return np.random.default_rng(3).integers(-1000, 1000, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 4, 5)])
@pytest.mark.parametrize("per_feature", [True, False])
def test_scaler(dev, dtype, shape, per_feature):
    """Per feature (x's second extent, its only one at rank 1) or one value for all."""
    c = (shape[1] if len(shape) > 1 else shape[0]) if per_feature else 1
    rng = np.random.default_rng(c)
    off, sc = rng.uniform(-5, 5, c).tolist(), rng.uniform(-2, 2, c).tolist()
    node = helper.make_node("Scaler", ["x"], ["y"], domain=ML, offset=off, scale=sc)
    inputs = {"x": data(dtype, shape)}
    model = ml_model([node], inputs)
    ref = reference(model, inputs, ["y"])[0]
    graph = to_graph(model, inputs, 17)
    assert dev.why_not(graph.nodes[0], graph) is None
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    out = dev.copy_out(dev.run(unit, inputs).outputs["y"])
    assert out.dtype == ref.dtype == np.float32
    assert out.tobytes() == ref.tobytes()


def test_scaler_refusals_and_other_ml_ops(dev):
    """Lengths onnxruntime refuses, and ai.onnx.ml ops with no kernel, stay refused."""
    inputs = {"x": rnd(3, 4)}

    def why(node):
        graph = to_graph(ml_model([node], inputs), inputs, 17, values={"y": rnd(3, 4)})
        return dev.why_not(graph.nodes[0], graph)

    bad = helper.make_node("Scaler", ["x"], ["y"], domain=ML, offset=[1.0, 2.0], scale=[1.0, 2.0])
    assert "per feature" in why(bad)
    odd = helper.make_node("Scaler", ["x"], ["y"], domain=ML, offset=[1.0], scale=[1.0, 2.0])
    assert "length" in why(odd)
    norm = helper.make_node("Normalizer", ["x"], ["y"], domain=ML, norm="MAX")
    assert "outside the ONNX domain" in why(norm)
