"""Small ONNX models built with onnx.helper (and the fixture that writes one), so graph tests need no files."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def save(model: onnx.ModelProto, path) -> str:
    model.ir_version = min(model.ir_version, 9)  # onnxruntime may lag onnx's newest IR version
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture
def diamond(tmp_path) -> str:
    """x -> Conv(c) -> Relu(r) -> {Sigmoid(a), Tanh(b)} -> Add(s) -> Mul with a Constant."""
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["a"]),  # unnamed -> Sigmoid_2
        helper.make_node("Tanh", ["r"], ["b"], name="dup"),
        helper.make_node(
            "Constant", [], ["k"], value=numpy_helper.from_array(np.array(2.0, np.float32))
        ),
        helper.make_node("Add", ["a", "b"], ["s"], name="dup"),  # duplicate name -> Add_5
        helper.make_node("Mul", ["s", "k"], ["y"], name="mul"),
    ]
    g = helper.make_graph(
        nodes,
        "diamond",
        [helper.make_tensor_value_info("x", F, ["batch", 3, 8, 8])],
        [helper.make_tensor_value_info("y", F, None)],
        [w],
    )
    return save(
        helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "d.onnx"
    )
