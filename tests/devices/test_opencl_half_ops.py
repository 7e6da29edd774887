"""Ops on float16 tensors on the kernel devices against onnxruntime: arithmetic computed in
float32 between conversions (``kernels/widen.py``), within the fp16 tolerance; data movement
bit for bit; every float16 tensor rounded to float16, whatever reads it next."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

from hetlab.devices.precision import UNIT_ROUNDOFF
from tests.devices import opencl_case
from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")

# a few float16 roundings of the output against onnxruntime's, which computes some float16
# ops in float16 and others in float32 between Casts of its own
TOL16 = 4 * UNIT_ROUNDOFF["fp16"]
N = helper.make_node


@pytest.fixture(autouse=True)
def half_inputs(monkeypatch):
    """Lets the case models declare float16 inputs."""
    monkeypatch.setitem(opencl_case.NP2ONNX, np.dtype("float16"), onnx.TensorProto.FLOAT16)


def h(*shape, seed=0, lo=-1.0, hi=1.0):
    return rnd(*shape, seed=seed, lo=lo, hi=hi).astype(np.float16)


UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "Floor", "Sin", "Elu"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(dev, op):
    run_case(dev, [N(op, ["x"], ["y"])], {"x": h(2, 3, 17, lo=-3, hi=3)}, tol=TOL16)


def test_activations_with_attributes(dev):
    nodes = [
        N("LeakyRelu", ["x"], ["a"], alpha=0.1),
        N("HardSigmoid", ["a"], ["b"]),
        N("Sqrt", ["b"], ["y"]),
    ]
    run_case(dev, nodes, {"x": h(4, 33, lo=-4, hi=4)}, outputs=["a", "b", "y"], tol=TOL16)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Pow"])
def test_binary_broadcast_and_constant(dev, op):
    """A tensor with a broadcast tensor, then with a float16 constant, then with itself."""
    x, b = h(2, 3, 8, lo=0.5, hi=2), h(3, 1, seed=1, lo=0.5, hi=2)
    c = h(8, seed=2, lo=0.5, hi=2)
    square = "Mul" if op == "Pow" else op  # Pow(u, u) would overflow float16
    nodes = [N(op, ["x", "b"], ["t"]), N(op, ["t", "c"], ["u"]), N(square, ["u", "u"], ["y"])]
    run_case(dev, nodes, {"x": x, "b": b}, {"c": c}, outputs=["t", "y"], tol=TOL16)


def test_compare_and_where(dev):
    """Float16 operands of a comparison (a bool output) and of a Where."""
    x, y = h(3, 16), h(3, 16, seed=1)
    nodes = [N("Less", ["x", "y"], ["m"]), N("Where", ["m", "x", "y"], ["z"])]
    run_case(dev, nodes, {"x": x, "y": y}, outputs=["m", "z"], exact=True)


def test_data_movement_bit_for_bit(dev):
    """Transpose, Slice, Concat, Split, Expand, Tile, Pad, Gather, views: the 16 bits moved
    (and the Shape of a float16 tensor)."""
    x = h(2, 3, 4, 5)
    i = np.array([2, 0, 1], np.int64)
    inits = {
        "s0": np.array([1], np.int64),
        "e0": np.array([4], np.int64),
        "ax": np.array([2], np.int64),
        "shp": np.array([2, 2, 4, 5], np.int64),
        "rep": np.array([1, 2, 1, 1], np.int64),
        "pads": np.array([0, 0, 1, 0, 0, 0, 0, 2], np.int64),
        "pv": np.array(1.5, np.float16),
        "flat": np.array([6, 20], np.int64),
        "one": np.array([1], np.int64),
    }
    nodes = [
        N("Transpose", ["x"], ["t"], perm=[0, 2, 1, 3]),
        N("Slice", ["t", "s0", "e0", "ax"], ["s"]),
        N("Concat", ["x", "x"], ["c"], axis=1),
        N("Split", ["c"], ["p0", "p1"], axis=1, num_outputs=2),
        N("ReduceMax", ["p1", "one"], ["r"], keepdims=1),
        N("Expand", ["r", "shp"], ["e"]),
        N("Tile", ["e", "rep"], ["tl"]),
        N("Pad", ["tl", "pads", "pv"], ["pd"]),
        N("Gather", ["x", "i"], ["g"], axis=1),
        N("Reshape", ["g", "flat"], ["rs"]),
        N("DepthToSpace", ["tl"], ["d"], blocksize=2),
        N("Cast", ["d"], ["same"], to=TP.FLOAT16),
        N("Shape", ["d"], ["shape"]),
    ]
    outs = ["t", "s", "c", "p0", "e", "tl", "pd", "g", "rs", "d", "same", "shape"]
    run_case(dev, nodes, {"x": x, "i": i}, inits, outputs=outs, opset=18, exact=True)


@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax(dev, axis):
    run_case(dev, [N("Softmax", ["x"], ["y"], axis=axis)], {"x": h(2, 5, 19, hi=4)}, tol=TOL16)


@pytest.mark.parametrize("group", [1, 4])
def test_conv_with_bias_and_relu(dev, group):
    """Convolution with float16 weights and bias (grouped: depthwise at 4), then Relu and
    BatchNormalization: the nodes a float32 unit would fuse, each rounded to float16."""
    x = h(1, 4, 9, 11)
    w = h(8, 4 // group, 3, 3, seed=1)
    b = h(8, seed=2)
    bn = {k: h(8, seed=3 + i, lo=0.5, hi=1.5) for i, k in enumerate("sbmv")}
    nodes = [
        N("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], group=group),
        N("Relu", ["c"], ["r"]),
        N("BatchNormalization", ["r", "s", "b2", "m", "v"], ["y"]),
    ]
    inits = {"w": w, "b": b, "s": bn["s"], "b2": bn["b"], "m": bn["m"], "v": bn["v"]}
    run_case(dev, nodes, {"x": x}, inits, outputs=["c", "y"], tol=TOL16)


def test_conv_1d_same_upper(dev):
    """The 1-D convolution of a model stored in float16 (tf2onnx): SAME_UPPER, width 5."""
    nodes = [N("Conv", ["x", "w"], ["y"], kernel_shape=[1, 5], auto_pad="SAME_UPPER")]
    run_case(dev, nodes, {"x": h(1, 16, 1, 24)}, {"w": h(32, 16, 1, 5, seed=1)}, tol=TOL16)


def test_matmul_and_gemm(dev):
    a, bt = h(2, 5, 24), h(24, 7, seed=1)
    nodes = [
        N("MatMul", ["a", "b"], ["m"]),
        N("Reshape", ["m", "s"], ["m2"]),
        N("Gemm", ["m2", "w", "c"], ["y"], transB=1),
    ]
    inits = {"s": np.array([10, 7], np.int64), "w": h(6, 7, seed=2), "c": h(6, seed=3)}
    run_case(dev, nodes, {"a": a, "b": bt}, inits, outputs=["m", "y"], tol=TOL16)


def test_pooling_and_reductions(dev):
    x = h(1, 3, 8, 8, hi=3)
    nodes = [
        N("MaxPool", ["x"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        N("AveragePool", ["x"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("GlobalAveragePool", ["ap"], ["g"]),
        N("ReduceSum", ["mp", "ax"], ["rs"], keepdims=0),
    ]
    inits = {"ax": np.array([2, 3], np.int64)}
    run_case(dev, nodes, {"x": x}, inits, outputs=["mp", "ap", "g", "rs"], tol=TOL16)


def test_each_half_tensor_holds_its_rounding(dev):
    """Two float16 ops in one unit: the first's result is rounded to float16 before the
    second reads it, as when a plan cuts between them (numpy rounds the same way)."""
    x, y, z = h(64), h(64, seed=1), h(64, seed=2)
    nodes = [N("Mul", ["x", "y"], ["a"]), N("Add", ["a", "z"], ["b"])]
    model = opencl_case.make_model(nodes, {"x": x, "y": y, "z": z}, {}, ["b"])
    graph = opencl_case.to_graph(model, {"x": x, "y": y, "z": z}, 17)
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    res = dev.run(unit, {"x": x, "y": y, "z": z})
    got = dev.copy_out(res.outputs["b"])
    want = (x * y) + z  # numpy: each op in float32, rounded to float16
    assert got.dtype == np.float16 and got.tobytes() == want.tobytes()
