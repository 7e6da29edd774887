"""Float16 twins reused inside a unit (``kernels/widen.py``): a float16 tensor made by a
rewritten node and read by others of the unit is read from the maker's rounded twin, with no
conversion of its own, and written as float16 only where something else reads it; on a CPU
device, chains of float16 element-wise nodes as one launch that rounds each term. Counted
launches, and values those of each op rounded to float16 (numpy computes a float16 op in
float32 and rounds); the vector conversions of a CPU device, bit for bit."""

from __future__ import annotations

import collections

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

from tests.devices import opencl_case

pytest.importorskip("pyopencl")
N = helper.make_node
ROUNDINGS = ("to_half", "to_half_round", "round_half")


@pytest.fixture(autouse=True)
def half_inputs(monkeypatch):
    """Lets the case models declare float16 inputs."""
    monkeypatch.setitem(opencl_case.NP2ONNX, np.dtype("float16"), onnx.TensorProto.FLOAT16)


def h(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float16)


def build(dev, nodes, inputs, inits, outputs):
    model = opencl_case.make_model(nodes, inputs, inits, outputs)
    graph = opencl_case.to_graph(model, inputs, 17)
    return dev.prepare(graph, [n.id for n in graph.nodes])


def kernels(unit, node=None) -> collections.Counter:
    """The unit's launches by kernel (a CPU device's ``_cpu`` forms counted as half.cl's)."""
    names = collections.Counter()
    for L in unit.handle.launches:
        if node is None or L.node == node:
            name = getattr(L.kernel, "function_name", None) or L.kernel.name
            names[name.removesuffix("_cpu")] += 1
    return names


def run(dev, unit, inputs, outputs):
    res = dev.run(unit, dict(inputs))
    return [dev.copy_out(res.outputs[t]) for t in outputs]


def test_chain_reads_rounded_twins(dev):
    """Add -> Relu -> Reshape -> Mul: before, every float16 input of a node had its
    from_half and every output its to_half (10 conversions, 13 launches); now only the
    unit's inputs are converted and the intermediate results rounded in place (8 launches),
    on a CPU device Add -> Relu one launch that rounds each, Mul another (4)."""
    x, y, c = h(4, 40), h(160, seed=1), h(40, seed=2)
    nodes = [
        N("Add", ["x", "c"], ["a"]),
        N("Relu", ["a"], ["r"]),
        N("Reshape", ["r", "s"], ["v"]),
        N("Mul", ["v", "y"], ["z"]),
    ]
    inits = {"c": c, "s": np.array([-1], np.int64)}
    unit = build(dev, nodes, {"x": x, "y": y}, inits, ["z"])
    k = kernels(unit)
    if dev.cpu_kernels:  # Add -> Relu, then Mul writing the float16 output
        assert k == {"from_half": 2, "fused": 2}
    else:
        assert (k["from_half"], k["round_half"], k["to_half"]) == (2, 2, 1)
        assert sum(k.values()) == 8
    (z,) = run(dev, unit, {"x": x, "y": y}, ["z"])
    want = np.maximum(x + c, np.float16(0)).reshape(-1) * y
    assert z.dtype == np.float16 and np.array_equal(z, want)  # a Relu's zero may be -0


def test_half_chain_is_one_launch_on_a_cpu(dev):
    """Add -> Relu -> Mul -> Sigmoid on float16 tensors on a CPU device: the unit's inputs
    converted, then one launch that rounds each result (13 launches before); a result also
    read as float16 (by a Transpose) ends the chain, and the next one (Neg -> Abs) writes
    its float16 output itself."""
    if not dev.cpu_kernels:
        pytest.skip("element-wise chains are a CPU device's")
    x, y = h(3, 50), h(3, 50, seed=1)
    nodes = [
        N("Add", ["x", "y"], ["a"]),
        N("Relu", ["a"], ["r"]),
        N("Mul", ["r", "y"], ["z"]),
        N("Sigmoid", ["z"], ["g"]),
        N("Transpose", ["g"], ["t"]),
        N("Neg", ["g"], ["n"]),
        N("Abs", ["n"], ["b"]),
    ]
    unit = build(dev, nodes, {"x": x, "y": y}, {}, ["t", "b"])
    assert kernels(unit, "n3") == {"fused": 1, "to_half_round": 1}
    assert kernels(unit, "n6") == {"fused": 1}
    # from_half: x, and y once for each of its two readers; the chains; the Transpose
    assert sum(kernels(unit).values()) == 3 + 2 + 1 + 1
    t, b = run(dev, unit, {"x": x, "y": y}, ["t", "b"])
    g = np.maximum(x + y, np.float16(0)) * y
    g = (1 / (1 + np.exp(-g.astype(np.float64)))).astype(np.float16)
    assert np.array_equal(t, g.T) or np.abs(t.astype(np.float32) - g.T).max() <= 2e-3
    assert np.array_equal(b, np.abs(-t.T))


def test_tensor_read_as_float16_and_from_its_twin(dev):
    """A result that is a unit output and read by a rewritten node: one launch writes the
    float16 output and rounds the twin; a Transpose (not rewritten) reads the float16."""
    x = h(8, 24)
    nodes = [
        N("Sigmoid", ["x"], ["a"]),
        N("Neg", ["a"], ["b"]),
        N("Transpose", ["a"], ["t"]),
        N("Tanh", ["t"], ["u"]),
    ]
    unit = build(dev, nodes, {"x": x}, {}, ["a", "b", "u"])
    assert kernels(unit, "n0")["to_half_round"] == 1
    assert kernels(unit, "n1")["from_half"] == 0
    assert kernels(unit, "n3")["from_half"] == 1  # the Transpose's output
    a, b, u = run(dev, unit, {"x": x}, ["a", "b", "u"])
    ref = opencl_case.reference(
        opencl_case.make_model(nodes, {"x": x}, {}, ["a", "b", "u"]), {"x": x}, ["a", "b", "u"]
    )
    assert a.tobytes() == ref[0].tobytes() and b.tobytes() == (-a).tobytes()
    assert np.allclose(u.astype(np.float32), ref[2].astype(np.float32), atol=2e-3)


def test_result_read_directly_and_through_a_view(dev):
    """A float16 result read from its twin by one node and through a Reshape by another:
    no chain keeps it in registers (the second reader reads the twin in memory)."""
    x = h(4, 40)
    nodes = [
        N("Sigmoid", ["x"], ["r"]),
        N("Neg", ["r"], ["a"]),
        N("Reshape", ["r", "s"], ["v"]),
        N("Abs", ["v"], ["b"]),
    ]
    inits = {"s": np.array([-1], np.int64)}
    unit = build(dev, nodes, {"x": x}, inits, ["a", "b"])
    assert sum(kernels(unit, "n0")[r] for r in ROUNDINGS) == 1
    a, b = run(dev, unit, {"x": x}, ["a", "b"])
    assert np.array_equal(b, np.abs(a).reshape(-1))


def test_no_fusion_crosses_the_rounding(dev):
    """MatMul -> Reshape -> Add(row) -> Relu on float16: a float32 unit folds the Add and the
    Relu into the MatMul's epilogue; here each result is rounded to float16 before the next
    reads it (on a CPU device the product as the Add -> Relu chain loads it). Integer
    operands: the float32 products are exact, their float16 roundings numpy's."""
    rng = np.random.default_rng(4)
    a, w = (rng.integers(-40, 41, s).astype(np.float16) for s in ((5, 16), (16, 8)))
    b = h(40, seed=2)
    nodes = [
        N("MatMul", ["a", "w"], ["m"]),
        N("Reshape", ["m", "s"], ["v"]),
        N("Add", ["v", "b"], ["t"]),
        N("Relu", ["t"], ["y"]),
    ]
    inits = {"w": w, "b": b, "s": np.array([-1], np.int64)}
    unit = build(dev, nodes, {"a": a}, inits, ["y"])
    if dev.cpu_kernels:
        assert kernels(unit, "n2") == {} and kernels(unit, "n3") == {"fused": 1}
        assert sum(kernels(unit, "n0")[r] for r in ROUNDINGS) == 0
    else:
        for node in ("n0", "n2", "n3"):
            assert sum(kernels(unit, node)[r] for r in ROUNDINGS) == 1, node
    (y,) = run(dev, unit, {"a": a}, ["y"])
    m = (a.astype(np.float32) @ w.astype(np.float32)).astype(np.float16)
    assert np.abs(m).max() > 2048  # some products round
    assert np.array_equal(y, np.maximum(m.reshape(-1) + b, np.float16(0)))


def test_vector_conversions_exact(dev):
    """Every float16 code to float32 and back, and float32 values of every rounding case
    (random bit patterns, halfway cases, subnormals, overflow) to float16, against numpy."""
    codes = np.arange(0x10000, dtype=np.uint32).astype(np.uint16).view(np.float16)
    bits = np.random.default_rng(3).integers(0, 2**32, 20000, dtype=np.uint64)
    f = bits.astype(np.uint32).view(np.float32)
    g = codes[np.isfinite(codes)].astype(np.float32)
    ties = (g[:-1] / 2 + g[1:] / 2).astype(np.float32)
    f = np.concatenate([f, ties, g * np.float32(2.0**-10), g * np.float32(1.0001)])
    f = f[~np.isnan(f)]  # a NaN's payload is kept differently; test_opencl_half checks NaN
    nodes = [
        N("Cast", ["h"], ["hf"], to=TP.FLOAT),
        N("Cast", ["hf"], ["hh"], to=TP.FLOAT16),
        N("Cast", ["f"], ["fh"], to=TP.FLOAT16),
    ]
    inputs = {"h": codes, "f": f}
    hf, hh, fh = run(
        dev, build(dev, nodes, inputs, {}, ["hf", "hh", "fh"]), inputs, ["hf", "hh", "fh"]
    )
    ok = ~np.isnan(codes)
    assert hf[ok].tobytes() == codes[ok].astype(np.float32).tobytes()
    assert np.isnan(hf[~ok]).all() and hh[ok].tobytes() == codes[ok].tobytes()
    with np.errstate(over="ignore"):  # to infinity, as the device
        assert fh.tobytes() == f.astype(np.float16).tobytes()
