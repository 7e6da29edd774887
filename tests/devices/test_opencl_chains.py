"""Chains of element-wise nodes as one launch on a CPU device (``chains.plan_chains``,
``ops/fused.py``), each against onnxruntime; elsewhere the same nodes run one launch each."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def launches(dev, nodes, inputs, inits=None, outputs=None, tol=1e-6):
    """Run ``nodes`` as one unit within ``tol`` of onnxruntime (its first run, on fresh
    buffers); the nodes of its launches and its fused map."""
    _, (unit, _), _ = run_case(dev, nodes, inputs, inits or {}, outputs, tol=tol)
    return [L.node for L in unit.handle.launches], unit.handle.fused


def test_gelu_is_one_launch(dev):
    """x * (erf(x / sqrt 2) + 1) * 0.5, as exported models write GELU: five nodes."""
    nodes = [
        N("Div", ["x", "r2"], ["d"]),
        N("Erf", ["d"], ["e"]),
        N("Add", ["e", "one"], ["a"]),
        N("Mul", ["x", "a"], ["m"]),
        N("Mul", ["m", "half"], ["y"]),
    ]
    inits = {"r2": np.float32(np.sqrt(2)), "one": np.float32(1), "half": np.float32(0.5)}
    got, fused = launches(dev, nodes, {"x": rnd(4, 37, lo=-4, hi=4)}, inits)
    if dev.cpu_kernels:
        assert got == ["n4"] and fused == {f"n{i}": "n4" for i in range(4)}
    else:
        assert got == [f"n{i}" for i in range(5)]


def test_broadcast_inputs_and_the_activation_epilogue(dev):
    """Four inputs at their broadcast strides (a tensor, constants of other shapes), and the
    Relu fused into the last node as the kernel's epilogue."""
    nodes = [
        N("Mul", ["x", "s"], ["m"]),
        N("Add", ["m", "b"], ["a"]),
        N("Pow", ["a", "two"], ["p"]),
        N("Sub", ["p", "z"], ["u"]),
        N("Relu", ["u"], ["y"]),
    ]
    inits = {"s": rnd(3, 1, seed=1), "b": rnd(5, seed=2), "two": np.float32(2)}
    inputs = {"x": rnd(2, 3, 5), "z": rnd(1, 3, 5, seed=3)}
    got, _ = launches(dev, nodes, inputs, inits)
    assert got == (["n3"] if dev.cpu_kernels else ["n0", "n1", "n2", "n3"])


def test_hard_swish_with_its_clip_is_one_launch(dev):
    """x * clip(x + 3, 0, 6) / 6: the Clip fused into the Add is a term of the chain."""
    nodes = [
        N("Add", ["x", "three"], ["a"]),
        N("Clip", ["a", "zero", "six"], ["c"]),
        N("Mul", ["x", "c"], ["m"]),
        N("Div", ["m", "six"], ["y"]),
    ]
    inits = {"three": np.float32(3), "zero": np.float32(0), "six": np.float32(6)}
    got, fused = launches(dev, nodes, {"x": rnd(2, 8, 5, 7, lo=-5, hi=5)}, inits)
    if dev.cpu_kernels:
        assert got == ["n3"] and fused == {"n0": "n3", "n1": "n3", "n2": "n3"}
    else:
        assert got == ["n0", "n2", "n3"]


def test_a_fifth_input_ends_the_chain(dev):
    nodes = [
        N("Add", ["x", "a"], ["t1"]),
        N("Mul", ["t1", "b"], ["t2"]),
        N("Sub", ["t2", "c"], ["t3"]),
        N("Add", ["t3", "d"], ["y"]),
    ]
    inputs = {k: rnd(3, 8, seed=i) for i, k in enumerate("xabcd")}
    got, _ = launches(dev, nodes, inputs)
    assert got == (["n2", "n3"] if dev.cpu_kernels else ["n0", "n1", "n2", "n3"])


def test_an_input_made_after_the_chain_starts(dev):
    """The chain's launch waits for every input it reads: here one made by a node between
    its first and its last (a copy; an element-wise node there joins the chain instead)."""
    nodes = [
        N("Sigmoid", ["x"], ["s"]),
        N("Transpose", ["z"], ["w"], perm=[1, 0]),
        N("Mul", ["s", "w"], ["y"]),
    ]
    got, _ = launches(dev, nodes, {"x": rnd(6, 10), "z": rnd(10, 6, seed=1)})
    assert got == (["n1", "n2"] if dev.cpu_kernels else ["n0", "n1", "n2"])
    nodes[1] = N("Exp", ["z"], ["w"])
    got, _ = launches(dev, nodes, {"x": rnd(6, 10), "z": rnd(6, 10, seed=1)})
    assert got == (["n2"] if dev.cpu_kernels else ["n0", "n1", "n2"])


@pytest.mark.parametrize("case", ["graph-output", "two-readers", "other-shape", "int"])
def test_chain_ends_where_a_value_is_needed_elsewhere(dev, case):
    """A tensor another node or the caller reads, or a node of another shape or type,
    ends the chain: those nodes still compute right."""
    x = rnd(4, 6)
    outputs = None
    if case == "graph-output":
        nodes = [N("Tanh", ["x"], ["t"]), N("Neg", ["t"], ["y"])]
        outputs, want = ["t", "y"], 2
    elif case == "two-readers":
        nodes = [N("Exp", ["x"], ["t"]), N("Abs", ["t"], ["u"]), N("Mul", ["t", "u"], ["y"])]
        want = 2 if dev.cpu_kernels else 3  # Abs -> Mul fuse; Exp's output has two readers
    elif case == "other-shape":
        nodes = [N("Sqrt", ["x"], ["t"]), N("Add", ["t", "c"], ["y"])]
        x, want = rnd(4, 1, lo=0.1), 2
    else:
        nodes = [N("Cast", ["x"], ["i"], to=6), N("Neg", ["i"], ["y"])]
        want = 2
    inits = {"c": rnd(1, 6, seed=4)} if case == "other-shape" else {}
    got, _ = launches(dev, nodes, {"x": x}, inits, outputs)
    assert len(got) == want
