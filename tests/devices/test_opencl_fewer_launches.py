"""Nodes that move data with fewer launches, against onnxruntime: a Transpose that moves only
axes of extent 1 is a view (no launch)."""

from __future__ import annotations

import pytest
from onnx import helper

from tests.devices.opencl_case import rnd, run_case

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


@pytest.mark.parametrize(
    "shape,perm,view",
    [
        ((1, 8, 1), [2, 0, 1], True),
        ((33, 2, 1, 4), [0, 2, 1, 3], True),
        ((1, 8, 1, 1, 3, 33), [0, 1, 2, 4, 3, 5], True),
        ((1, 1, 1), [2, 1, 0], True),
        ((1, 2, 8, 1, 33), [0, 2, 1, 3, 4], False),
        ((2, 1, 3), [2, 1, 0], False),
    ],
)
def test_transpose_of_unit_axes_is_a_view(dev, shape, perm, view):
    """Read after a launch (Neg) and as a unit output of the unit's input."""
    nodes = [N("Neg", ["x"], ["n"]), N("Transpose", ["n"], ["t"], perm=perm), N("Relu", ["t"])]
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*shape)}, outputs=["y", "t"])
    assert len(unit.handle.launches) == (2 if view else 3)
    nodes = [N("Transpose", ["x"], perm=perm)]
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*shape)}, exact=True)
    assert len(unit.handle.launches) == (0 if view else 1)
