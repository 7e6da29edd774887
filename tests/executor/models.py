"""Small ONNX models built with onnx.helper for device and executor tests."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model: onnx.ModelProto, path) -> str:
    model.ir_version = min(model.ir_version, 9)  # onnxruntime may lag onnx's newest IR version
    onnx.save(model, str(path))
    return str(path)


def two_branch(path, channels: int = 8, size: int = 16, seed: int = 0) -> str:
    """x[1,C,S,S] -> stem Conv/Relu -> two branches (Conv-Relu-Conv | Conv-Sigmoid-Conv)
    -> Concat -> GlobalAveragePool -> Flatten -> Gemm -> y; the stem also feeds output ``z``."""
    rng = np.random.default_rng(seed)
    C = channels
    inits = []

    def w(name, *shape):
        inits.append(
            numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)
        )
        return name

    n = helper.make_node
    nodes = [
        n("Conv", ["x", w("w0", C, C, 3, 3), w("b0", C)], ["s0"], name="stem", pads=[1, 1, 1, 1]),
        n("Relu", ["s0"], ["s1"], name="stem_relu"),
        n("Conv", ["s1", w("wa1", C, C, 3, 3)], ["a1"], name="a_conv1", pads=[1, 1, 1, 1]),
        n("Relu", ["a1"], ["a2"], name="a_relu"),
        n("Conv", ["a2", w("wa2", C, C, 1, 1)], ["a3"], name="a_conv2"),
        n("Conv", ["s1", w("wb1", C, C, 3, 3)], ["b1"], name="b_conv1", pads=[1, 1, 1, 1]),
        n("Sigmoid", ["b1"], ["b2"], name="b_sig"),
        n("Conv", ["b2", w("wb2", C, C, 1, 1)], ["b3"], name="b_conv2"),
        n("Concat", ["a3", "b3"], ["c"], name="concat", axis=1),
        n("GlobalAveragePool", ["c"], ["g"], name="gap"),
        n("Flatten", ["g"], ["f"], name="flatten"),
        n("Gemm", ["f", w("wf", 10, 2 * C), w("bf", 10)], ["y"], name="fc", transB=1),
        n("ReduceMean", ["s1"], ["z"], name="side", axes=[2, 3], keepdims=0),
    ]
    g = helper.make_graph(
        nodes,
        "two_branch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, size, size])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, C]),
        ],
        inits,
    )
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def scalar_edge(path) -> str:
    """x[2,3] -> ReduceSum to a 0-d scalar ``s`` -> Unsqueeze(s) and Mul(x, s): a scalar
    tensor that crosses devices when ``sum`` and its readers are placed apart."""
    n = helper.make_node
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    nodes = [
        n("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        n("Unsqueeze", ["s", "axes"], ["u"], name="unsq"),
        n("Mul", ["x", "s"], ["y"], name="mul"),
    ]
    g = helper.make_graph(
        nodes,
        "scalar_edge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("u", TensorProto.FLOAT, [1]),
        ],
        [axes],
    )
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
