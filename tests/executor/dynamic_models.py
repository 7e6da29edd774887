"""Small ONNX models whose shapes depend on input values, built with onnx.helper."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.executor.models import save


def counted_loop(path, width: int = 4) -> str:
    """A ``Loop`` that runs while its counter is below the input scalar ``n`` (at least once):
    its scan output ``steps`` is ``[trips, 1, width]`` (``x`` plus the counter at each step).
    Downstream: Relu -> Add -> ``z`` (data-dependent shape), and ReduceSum over the steps ->
    Mul -> ``y`` (``[1, width]`` whatever the trip count)."""
    n = helper.make_node
    body = helper.make_graph(
        [
            n("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.int64))),
            n("Add", ["c_in", "one"], ["c_out"]),
            n("Less", ["c_out", "n"], ["cond_out"]),
            n("Cast", ["c_in"], ["c_f"], to=TensorProto.FLOAT),
            n("Add", ["x", "c_f"], ["step"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("c_in", TensorProto.INT64, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("c_out", TensorProto.INT64, []),
            helper.make_tensor_value_info("step", TensorProto.FLOAT, [1, width]),
        ],
    )
    inits = [
        numpy_helper.from_array(np.array(True), "go"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.linspace(-2, 1, width, dtype=np.float32)[None], "bias"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
        numpy_helper.from_array(np.full((1, width), 0.5, np.float32), "half"),
    ]
    nodes = [
        n("Loop", ["", "go", "zero"], ["count", "steps"], name="loop", body=body),
        n("Relu", ["steps"], ["r"], name="relu"),
        n("Add", ["r", "bias"], ["z"], name="add"),
        n("ReduceSum", ["z", "axis0"], ["s"], name="sum", keepdims=0),
        n("Mul", ["s", "half"], ["y"], name="scale"),
    ]
    g = helper.make_graph(
        nodes,
        "counted_loop",
        [
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
        inits,
    )
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def nonzero_tail(path, rows: int = 3, cols: int = 6) -> str:
    """The columns of ``x[rows, cols]`` whose first row is positive: Greater -> NonZero ->
    Gather (the column indices) -> Gather (those columns) -> Transpose -> Relu -> ``z``
    ``[k, rows]``; ReduceSum over the k columns -> Add -> ``y`` ``[rows]``."""
    n = helper.make_node
    inits = [
        numpy_helper.from_array(np.zeros((1, cols), np.float32), "zeros"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
        numpy_helper.from_array(np.arange(rows, dtype=np.float32), "ramp"),
    ]
    nodes = [
        n("Slice", ["x", "axis0", "one_v", "axis0"], ["first"], name="first_row"),
        n("Greater", ["first", "zeros"], ["pos"], name="positive"),
        n("NonZero", ["pos"], ["nz"], name="nonzero"),
        n("Gather", ["nz", "one"], ["idx"], name="columns", axis=0),
        n("Gather", ["x", "idx"], ["picked"], name="pick", axis=1),
        n("Transpose", ["picked"], ["t"], name="transpose", perm=[1, 0]),
        n("Relu", ["t"], ["z"], name="relu"),
        n("ReduceSum", ["z", "axis0"], ["s"], name="sum", keepdims=0),
        n("Add", ["s", "ramp"], ["y"], name="add"),
    ]
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "one_v"))
    g = helper.make_graph(
        nodes,
        "nonzero_tail",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, cols])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
        inits,
    )
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def runtime_range(path, width: int = 5) -> str:
    """``Range(0, n, 1)`` with the input scalar ``n`` as its bound -> Cast -> Unsqueeze ->
    Mul by ``w[1, width]`` -> ``z`` ``[n, width]``; ReduceMax over the n rows -> Add -> ``y``."""
    n = helper.make_node
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "step"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
        numpy_helper.from_array(np.linspace(-1, 2, width, dtype=np.float32)[None], "w"),
    ]
    nodes = [
        n("Range", ["zero", "n", "step"], ["r"], name="range"),
        n("Cast", ["r"], ["rf"], name="cast", to=TensorProto.FLOAT),
        n("Unsqueeze", ["rf", "axis1"], ["col"], name="column"),
        n("Mul", ["col", "w"], ["z"], name="outer"),
        n("ReduceMax", ["z", "axis0"], ["m"], name="max", keepdims=0),
        n("Add", ["m", "w"], ["y"], name="add"),
    ]
    g = helper.make_graph(
        nodes,
        "runtime_range",
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
        inits,
    )
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)


def branchy(path, same: bool) -> str:
    """``If(flag)`` over ``x[2, 6]``: each branch flattens ``x`` by shape arithmetic (``[12]``,
    which shape inference leaves open inside a body); the else-branch then keeps the first 6
    (unless ``same``). Relu -> ``z``; ReduceSum of everything -> Mul -> ``y``."""
    n = helper.make_node

    def const(name: str, value) -> object:
        return n("Constant", [], [name], value=numpy_helper.from_array(np.array(value)))

    def branch(name: str, cut: bool) -> object:
        nodes = [  # [-1] by arithmetic: [-1] * (Size(x) / Size(x))
            const(f"{name}_m", [-1]),
            n("Size", ["x"], [f"{name}_k"]),
            n("Div", [f"{name}_k", f"{name}_k"], [f"{name}_one"]),
            n("Mul", [f"{name}_m", f"{name}_one"], [f"{name}_v"]),
            n("Reshape", ["x", f"{name}_v"], [f"{name}_flat"]),
        ]
        if cut:
            nodes += [const(f"{name}_a", [0]), const(f"{name}_b", [6])]
            nodes.append(n("Slice", [f"{name}_flat", f"{name}_a", f"{name}_b"], [f"{name}_out"]))
        else:
            nodes.append(n("Identity", [f"{name}_flat"], [f"{name}_out"]))
        out = helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [None])
        return helper.make_graph(nodes, name, [], [out])

    nodes = [
        n(
            "If",
            ["flag"],
            ["picked"],
            name="choose",
            then_branch=branch("then", False),
            else_branch=branch("else", not same),
        ),
        n("Relu", ["picked"], ["z"], name="relu"),
        n("ReduceSum", ["z"], ["s"], name="sum", keepdims=0),
        n("Mul", ["s", "half"], ["y"], name="scale"),
    ]
    g = helper.make_graph(
        nodes,
        "branchy",
        [
            helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half")],
    )
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
