"""Fixtures of the profiler tests: a temporary cache and tiny models."""

from __future__ import annotations

import numpy as np
import pytest
from cost_helpers import init, save_model, vi
from onnx import helper


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HETLAB_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def chain_model(tmp_path) -> str:
    """x[1,4,8,8] -> Relu -> Relu -> Relu -> Reshape(to [1,256], a constant) -> Sigmoid."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="r1"),
        helper.make_node("Relu", ["a"], ["b"], name="r2"),
        helper.make_node("Relu", ["b"], ["c"], name="r3"),
        helper.make_node("Reshape", ["c", "shape"], ["d"], name="reshape"),
        helper.make_node("Sigmoid", ["d"], ["y"], name="sig"),
    ]
    return save_model(
        tmp_path / "chain.onnx",
        nodes,
        [vi("x", ["batch", 4, 8, 8])],
        [vi("y", None)],
        [init("shape", np.array([-1, 256], dtype=np.int64))],
    )


@pytest.fixture
def group_model(tmp_path) -> str:
    """Conv->Relu, Conv->BN->Relu, MatMul->Add, and a Conv whose output is read twice."""
    rng = np.random.default_rng(0)
    w = lambda *s: rng.standard_normal(s).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "s", "b", "m", "v"], ["n2"], name="bn2"),
        helper.make_node("Relu", ["n2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("Add", ["r3", "c3"], ["s3"], name="add3"),
        helper.make_node("Flatten", ["s3"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "wm"], ["mm"], name="mm"),
        helper.make_node("Add", ["mm", "bias"], ["y"], name="bias_add"),
    ]
    inits = [
        init("w1", w(4, 3, 3, 3)),
        init("w2", w(4, 4, 3, 3)),
        init("w3", w(4, 4, 3, 3)),
        init("s", w(4)),
        init("b", w(4)),
        init("m", w(4)),
        init("v", np.abs(w(4)) + 1),
        init("wm", w(4 * 8 * 8, 10)),
        init("bias", w(10)),
    ]
    return save_model(
        tmp_path / "groups.onnx", nodes, [vi("x", [1, 3, 8, 8])], [vi("y", [1, 10])], inits
    )
