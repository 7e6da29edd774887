"""Slice, Split and Gather outputs that are contiguous ranges of a tensor the unit computes
become views of its buffer (``kernels/views.py``), with no launch, where the device makes
views at that offset (``view_align``); every case against onnxruntime. The expected launch
counts follow the device's alignment, so the same tests hold on PoCL, a GPU and CUDA."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import make_model, reference, rnd, run_case, to_graph

pytest.importorskip("pyopencl")


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def I64(*v):
    return np.array(v, dtype=np.int64)


def copies(unit, node: str) -> int:
    """The launches of node ``node`` in the unit."""
    return sum(L.node == node for L in unit.handle.launches)


def aligned(dev, offset: int, itemsize: int = 4) -> bool:
    """Whether ``dev`` makes a view that starts ``offset`` elements into its root."""
    return dev.view_align is not None and offset * itemsize % dev.view_align == 0


def named(nodes):
    for i, n in enumerate(nodes):
        n.name = n.name or f"n{i}"
    return nodes


def parts_after_relu(dev, x, split_node, outs, inits=None, opset=17):
    """Relu(x) split by ``split_node``, each part then doubled (so no part is a unit output);
    the split node's launches."""
    nodes = named(
        [N("Relu", ["x"], ["r"]), split_node]
        + [N("Add", [o, o], [f"y{k}"]) for k, o in enumerate(outs)]
    )
    _, (unit, _), _ = run_case(
        dev, nodes, {"x": x}, inits or {}, outputs=[f"y{k}" for k in range(len(outs))], opset=opset
    )
    return copies(unit, nodes[1].name)


@pytest.mark.parametrize("h", [32, 100, 3])
def test_split_into_equal_parts_views_the_aligned_ones(dev, h):
    """The gates of an LSTM cell: [1, 4h] into four [1, h] parts; a part starting at a
    multiple of the alignment is a view, the others are views of one buffer that one
    launch fills."""
    outs = ["p0", "p1", "p2", "p3"]
    n = parts_after_relu(dev, rnd(1, 4 * h), N("Split", ["r"], outs, axis=1), outs)
    if dev.view_align is None:
        assert n == 4
    else:
        assert n == (0 if all(aligned(dev, k * h) for k in range(4)) else 1)


def test_gather_of_a_packed_part_and_a_split_of_a_unit_input(dev):
    """A Gather views a packed Split part; a Split of a unit input packs every part."""
    nodes = named(
        [
            N("Split", ["x"], ["a", "b", "c"], axis=0),
            N("Gather", ["b", "i"], ["g"], axis=0),
            N("Mul", ["a", "c"], ["m"]),
            N("Add", ["g", "m"], ["y"]),
        ]
    )
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(3, 1, 100)}, {"i": I64(0)})
    assert copies(unit, "n0") == (3 if dev.view_align is None else 1)
    assert copies(unit, "n1") == (dev.view_align is None)


@pytest.mark.parametrize("w", [8, 3])
def test_split_with_sizes_and_negative_axis(dev, w):
    """Parts of three sizes: the aligned ones are views, the others copied one by one."""
    outs = ["p", "q", "r2"]
    split = N("Split", ["r", "s"], outs, axis=-2)
    n = parts_after_relu(dev, rnd(1, 80, w), split, outs, {"s": I64(8, 40, 32)})
    assert n == sum(not aligned(dev, o * w) for o in (0, 8, 48))


def test_split_of_an_inner_axis_copies(dev):
    """Parts of axis 1 of a [3, 64] tensor are strided: no view."""
    outs = ["p", "q"]
    n = parts_after_relu(dev, rnd(3, 64), N("Split", ["r"], outs, axis=1), outs)
    assert n == 2


@pytest.mark.parametrize(
    "xs,starts,ends,axes,steps,view",
    [
        ((1, 16, 33), [0], [8], [1], [1], True),  # a range of the outer axis: a view
        ((1, 16, 32), [8], [16], [-2], [1], True),  # negative axis, offset 8 rows
        ((1, 16, 33), [8], [9], [1], [1], True),  # offset 264 floats
        ((1, 16, 32), [0], [8], [1], [2], False),  # a step: strided, copied
        ((4, 6, 32), [1, 0], [2, 6], [0, 1], [1, 1], True),  # one outer row, whole inner axes
        ((2, 6, 32), [0], [3], [1], [1], False),  # a range of an inner axis under two rows
        ((1, 1, 64), [-1], [-100], [2], [-1], False),  # reversed
        ((3, 8, 8), [2, 5], [1, 6], [0, 1], [-1, 1], True),  # a step where the extent is 1
    ],
)
def test_slice(dev, xs, starts, ends, axes, steps, view):
    nodes = named(
        [
            N("Relu", ["x"], ["r"]),
            N("Slice", ["r", "s", "e", "a", "st"], ["v"]),
            N("Add", ["v", "v"], ["y"]),
        ]
    )
    inits = {"s": I64(*starts), "e": I64(*ends), "a": I64(*axes), "st": I64(*steps)}
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*xs)}, inits)
    offset = _slice_offset(xs, starts, axes)
    assert copies(unit, "n1") == (0 if view and aligned(dev, offset) else 1), offset


def _slice_offset(xs, starts, axes):
    off, st = 0, np.cumprod((1, *xs[::-1]))[:-1][::-1]
    for s, a in zip(starts, axes, strict=True):
        a %= len(xs)
        off += (s + xs[a] if s < 0 else s) * int(st[a])
    return off


@pytest.mark.parametrize(
    "xs,idx,axis,offset",
    [
        ((20, 1, 64), I64(3), 0, 192),  # a scalar index: one row
        ((20, 1, 64), I64(-1), 0, 19 * 64),  # negative, from the end
        ((6, 32), I64(2, 3), 0, 64),  # consecutive indices: a range of rows
        ((1, 5, 32), I64([[1], [2]]), 1, 32),  # consecutive, in a 2-D index tensor
        ((6, 32), I64(3, 2), 0, None),  # not in order: copies
        ((6, 32), I64(1), 1, None),  # an inner axis: copies
    ],
)
def test_gather_of_constant_indices(dev, xs, idx, axis, offset):
    nodes = named(
        [
            N("Relu", ["x"], ["r"]),
            N("Gather", ["r", "i"], ["g"], axis=axis),
            N("Add", ["g", "g"], ["y"]),
        ]
    )
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(*xs)}, {"i": idx})
    view = offset is not None and aligned(dev, offset)
    assert (copies(unit, "n1") == 0) == view


def test_a_view_read_by_two_consumers_and_its_root_read_after(dev):
    """The root is read again after its views, and by a node that is a unit output; two
    consumers read each view; a Gather views a Split part (a view of a view)."""
    nodes = named(
        [
            N("Relu", ["x"], ["r"]),
            N("Split", ["r"], ["a", "b"], axis=1),
            N("Mul", ["a", "b"], ["m"]),
            N("Add", ["a", "m"], ["s"]),
            N("Gather", ["b", "i"], ["g"], axis=0),
            N("Sigmoid", ["r"], ["t"]),
            N("Add", ["g", "s"], ["y"]),
        ]
    )
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(1, 128)}, {"i": I64(0)}, outputs=["y", "t"])
    assert copies(unit, "n1") == (0 if aligned(dev, 64) else 1) + (dev.view_align is None)
    assert copies(unit, "n4") == (dev.view_align is None)  # of b's root, at its start


def test_views_follow_their_root_across_runs_and_as_outputs(dev):
    """A unit run twice on new inputs: the views read the root's new values; a Reshape of a
    view is a unit output (its buffer is the view's)."""
    nodes = named(
        [
            N("Relu", ["x"], ["r"]),
            N("Split", ["r"], ["a", "b"], axis=0),
            N("Reshape", ["b", "shape"], ["y"]),
            N("Neg", ["a"], ["z"]),
        ]
    )
    inits = {"shape": I64(4, 16)}
    x1, x2 = rnd(2, 64), rnd(2, 64, seed=5)
    model = make_model(nodes, {"x": x1}, inits, ["y", "z"])
    graph = to_graph(model, {"x": x1}, 17)
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    for x in (x1, x2, x1):
        res = dev.run(unit, {"x": x})
        for name, ref in zip(["y", "z"], reference(model, {"x": x}, ["y", "z"]), strict=True):
            np.testing.assert_allclose(dev.copy_out(res.outputs[name]), ref, rtol=1e-6)
    assert copies(unit, "n1") == (0 if aligned(dev, 64) else 1) + (dev.view_align is None)


def test_no_views_of_unit_inputs_or_without_the_ability(dev, monkeypatch):
    """A unit input is rebound each run, and a view output is the unit's: both copied; a
    device without ``view_align`` copies everything."""
    nodes = named([N("Slice", ["x", "s", "e"], ["a"]), N("Neg", ["a"], ["y"])])
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(2, 64)}, {"s": I64(0), "e": I64(1)})
    assert copies(unit, "n0") == 1
    nodes = named([N("Relu", ["x"], ["r"]), N("Split", ["r"], ["a", "b"], axis=0)])
    _, (unit, _), _ = run_case(dev, nodes, {"x": rnd(2, 64)}, outputs=["a", "b"])
    assert copies(unit, "n1") == 2
    monkeypatch.setattr(dev, "view_align", None)
    outs = ["p0", "p1"]
    n = parts_after_relu(dev, rnd(1, 128), N("Split", ["r"], outs, axis=1), outs)
    assert n == 2


def test_a_cuda_view_is_a_slice_of_its_buffer():
    """CUDA's view: a slice of the buffer's flat array, the same memory at a pointer offset
    (a NumPy array stands for CuPy's here)."""
    from hetlab.devices.cuda.kernel import CudaBuffer

    root = CudaBuffer(np.arange(12, dtype=np.float32), (3, 4), "float32", "cuda0")
    part = root.part(4, (1, 4), "float32")
    assert part.shape == (1, 4) and part.device == "cuda0"
    part.buf[:] = -1
    assert root.buf[4:8].tolist() == [-1] * 4 and root.buf[8] == 8


def test_the_opencl_alignment_is_the_devices(dev):
    if dev.kind == "opencl":
        assert dev.view_align == dev.dev.mem_base_addr_align // 8
    assert dev.view_align is None or dev.view_align % 4 == 0
