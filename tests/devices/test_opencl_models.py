"""Whole zoo models as one OpenCL unit against onnxruntime (max_rel_err <= 1e-3, all nodes)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyopencl")
zoo = pytest.importorskip("hetlab.zoo", reason="hetlab.zoo (zoo models) is not available yet")
import onnxruntime as ort

from hetlab.graph import onnx_io


def _check(dev, name: str) -> None:
    g = onnx_io.load(zoo.path(name))
    assert all(dev.supports(n, g) for n in g.nodes), {
        n.op_type: dev.why_not(n, g) for n in g.nodes if not dev.supports(n, g)
    }
    rng = np.random.default_rng(0)
    feed = {k: rng.standard_normal(g.tensors[k].shape).astype(g.tensors[k].dtype) for k in g.inputs}
    unit = dev.prepare(g, [n.id for n in g.nodes])
    res = dev.run(unit, {k: feed[k] for k in unit.inputs})
    refs = ort.InferenceSession(g.model_path, providers=["CPUExecutionProvider"]).run(
        g.outputs, feed
    )
    for o, r in zip(g.outputs, refs, strict=False):
        out = dev.copy_out(res.outputs[o])
        assert np.linalg.norm(out - r) / max(np.linalg.norm(r), 1e-30) <= 1e-3, o


def test_squeezenet(dev):
    _check(dev, "squeezenet")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["googlenet", "inception_v3", "lstm"])
def test_zoo_model(dev, name):
    if name not in zoo.names():
        pytest.skip(f"{name} is not in the zoo")
    _check(dev, name)
