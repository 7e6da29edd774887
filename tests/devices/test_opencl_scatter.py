"""DepthToSpace/SpaceToDepth, GatherND/GatherElements and ScatterND/ScatterElements against
onnxruntime, bit for bit, over their attributes, data types (float32, int32, int64, bool) and
index types; ScatterElements' reductions over repeated indices, in onnxruntime's order; and
the refusals: ScatterND reductions whose indices repeat or are read at run time."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import kernel_name, make_model, reference, rnd, run_case, to_graph

pytest.importorskip("pyopencl")

DTYPES = ["float32", "int32", "int64", "bool"]
ITYPES = ["int32", "int64"]


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


def data(dtype, *shape, seed=0):
    v = np.random.default_rng(seed + sum(shape)).integers(-50, 50, shape)
    if dtype == "float32":
        return rnd(*shape, seed=seed)
    return v > 0 if dtype == "bool" else v.astype(dtype)


def exact(dev, nodes, inputs, inits=None, opset=18):
    return run_case(dev, nodes, inputs, inits, opset=opset, exact=True)


def why(dev, nodes, inputs, inits=None, opset=18):
    graph = to_graph(make_model(nodes, inputs, inits or {}, ["y"], opset), inputs, opset)
    return dev.why_not(graph.nodes[0], graph)


def moved(dev, nodes, shape, dtype):
    """Run data-movement ``nodes`` on ``dtype`` data, which onnxruntime's DepthToSpace and
    SpaceToDepth do not take: onnxruntime moves float32 positions 0..n-1 (exact), the device
    must move the ``dtype`` values the same way."""
    pos = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    exact(dev, nodes, {"x": pos})
    model = make_model(nodes, {"x": pos}, {}, ["y"], 18)
    graph = to_graph(model, {"x": pos}, 18)
    perm = reference(model, {"x": pos}, ["y"])[0].astype(np.int64)
    for name, t in graph.tensors.items():
        graph.tensors[name] = replace(t, dtype=dtype)
    x = data(dtype, *shape, seed=3)
    unit = dev.prepare(graph, [n.id for n in graph.nodes])
    out = dev.copy_out(dev.run(unit, {"x": x}).outputs["y"])
    assert out.dtype == x.dtype and np.array_equal(out, x.reshape(-1)[perm])
    return unit, perm


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("b,shape", [(2, (1, 8, 3, 5)), (3, (2, 18, 2, 4)), (6, (1, 36, 2, 2))])
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(dev, dtype, b, shape, mode):
    unit, _ = moved(dev, [N("DepthToSpace", ["x"], blocksize=b, mode=mode)], shape, dtype)
    assert len(unit.handle.launches) == 1  # one strided copy


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("b,shape", [(2, (1, 1, 8, 6)), (3, (2, 3, 9, 6)), (6, (1, 2, 12, 18))])
def test_space_to_depth_inverts_depth_to_space(dev, dtype, b, shape):
    moved(dev, [N("SpaceToDepth", ["x"], blocksize=b)], shape, dtype)
    nodes = [N("SpaceToDepth", ["x"], ["s"], blocksize=b), N("DepthToSpace", ["s"], blocksize=b)]
    unit, perm = moved(dev, nodes, shape, dtype)
    assert len(unit.handle.launches) == 2 and np.array_equal(perm.reshape(-1), np.arange(perm.size))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "b,xs,idx",
    [
        (0, (4, 3, 5), [[1, -1], [3, 0], [0, 2]]),  # tuples of 2: rows of 5
        (0, (4, 3, 5), [[[2]], [[-4]]]),  # one index: whole 3x5 slices
        (0, (4, 3), [[0, 0], [3, 2], [-1, -3]]),  # full tuples: scalars
        (1, (2, 4, 3), [[[1], [3]], [[0], [-2]]]),  # a batch dim
        (2, (2, 3, 4, 5), [[[1, 2], [0, 0], [2, 4]], [[-1, 0], [3, 1], [0, -5]]]),
    ],
)
def test_gather_nd(dev, dtype, b, xs, idx):
    """Indices read at run time, and constant (the same kernel)."""
    x, i = data(dtype, *xs), np.array(idx, np.int64)  # ONNX's GatherND takes int64 only
    exact(dev, [N("GatherND", ["x", "i"], batch_dims=b)], {"x": x, "i": i})
    exact(dev, [N("GatherND", ["x", "i"], batch_dims=b)], {"x": x}, {"i": i})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", ITYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements(dev, dtype, itype, axis):
    """Indices smaller than the data on every axis; negative ones count from the end."""
    x = data(dtype, 4, 5, 6)
    ish = [3, 2, 4]
    dim = x.shape[axis]
    i = np.random.default_rng(axis + 3).integers(-dim, dim, ish).astype(itype)
    exact(dev, [N("GatherElements", ["x", "i"], axis=axis)], {"x": x, "i": i})


def distinct(rng, dims, count):
    flat = rng.choice(int(np.prod(dims)), count, replace=False)
    return np.stack(np.unravel_index(flat, dims), axis=-1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("red", ["none", "add", "mul", "max", "min"])
def test_scatter_nd(dev, dtype, k, red):
    if dtype == "bool" and red != "none":
        pytest.skip("onnxruntime has no bool reductions")
    xs = (5, 4, 3)
    idx = distinct(np.random.default_rng(k), xs[:k], 3)
    idx[0] -= np.array(xs[:k])  # a negative tuple
    upd = data(dtype, 3, *xs[k:], seed=5)
    node = N("ScatterND", ["x", "i", "u"], reduction=red)
    exact(dev, [node], {"x": data(dtype, *xs), "u": upd}, {"i": idx.astype(np.int64)})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", ITYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("red", ["none", "add", "max"])
def test_scatter_elements(dev, dtype, itype, axis, red):
    if dtype == "bool" and red != "none":
        pytest.skip("onnxruntime has no bool reductions")
    xs, ish = (4, 5, 6), [2, 3, 4]
    rng = np.random.default_rng(axis + 7)
    dim = xs[axis]
    # distinct along the axis per line: a permutation's first entries, some made negative
    perm = np.argsort(rng.random([*ish[: axis % 3], dim, *ish[axis % 3 + 1 :]]), axis=axis)
    idx = np.take(perm, range(ish[axis]), axis=axis)
    idx = np.where(rng.random(idx.shape) < 0.3, idx - dim, idx).astype(itype)
    node = N("ScatterElements", ["x", "i", "u"], axis=axis, reduction=red)
    inputs = {"x": data(dtype, *xs), "u": data(dtype, *ish, seed=2)}
    exact(dev, [node], inputs, {"i": idx})


def test_scatter_refuses_nd_reductions_over_repeated_or_run_time_indices(dev):
    """onnxruntime reduces repeated indices in order; ScatterND's updates of one element can
    come from anywhere, so its reductions where indices repeat or are read at run time are
    refused (reduction none keeps the last update: test_opencl_more_ops.py)."""
    x, u = rnd(4, 3), rnd(2, 3, seed=1)
    same = np.array([[1], [-3]], np.int64)  # the same row twice
    node = N("ScatterND", ["x", "i", "u"], reduction="mul")
    assert "repeat" in why(dev, [node], {"x": x, "u": u}, {"i": same})
    rt = why(dev, [node], {"x": x, "u": u, "i": np.array([[0], [1]])})
    assert "run time" in rt


@pytest.mark.parametrize("red", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("run_time", [False, True])
def test_scatter_elements_reduces_repeated_indices_in_order(dev, red, axis, run_time):
    """ScatterElements' reductions over repeated indices, constant or read at run time,
    combine each output element's updates in onnxruntime's order: bit for bit."""
    xs, ish = (4, 5, 6), {0: [7, 3, 4], 1: [2, 9, 4], -1: [2, 3, 10]}[axis]
    rng = np.random.default_rng(3)
    idx = rng.integers(-xs[axis], xs[axis], ish).astype(np.int64)  # repeats along the axis
    node = N("ScatterElements", ["x", "i", "u"], axis=axis, reduction=red)
    inputs = {"x": rnd(*xs), "u": rnd(*ish, seed=2)}
    if run_time:
        exact(dev, [node], {**inputs, "i": idx})
    else:
        exact(dev, [node], inputs, {"i": idx})


def copies_of(unit, node_id):
    return sum(
        kernel_name(L) in ("copy_cpu", "copy_nd") for L in unit.handle.launches if L.node == node_id
    )


def scatter_case(dev, after, kind="ScatterND", red="none", run_time=False):
    """``d = x + 1``, updates made from a Slice of ``d``, then ``y`` = a scatter into ``d``
    (negative indices among them); ``after`` names what else reads ``d``: "" nothing,
    "later" a node after the scatter, "view" a Reshape of ``d`` read after it, "output" the
    caller. The unit and its scatter node's copies."""
    xs = (4, 3, 5)
    if kind == "ScatterND":  # rows of 5 at (1, -1), (3, 0), (-4, 2)
        idx, ends, ush = np.array([[1, -1], [3, 0], [-4, 2]], np.int64), [3, 1, 5], [3, 5]
    else:  # element (0, 0, k) to (idx[k], 0, k)
        idx, ends, ush = np.array([[[0, -1, 2, 1, 3]]], np.int64), [1, 1, 5], [1, 1, 5]
    nodes = [
        N("Add", ["x", "one"], ["d"]),
        N("Slice", ["d", "s0", "s1"], ["s"]),
        N("Reshape", ["s", "ush"], ["r"]),
        N("Mul", ["r", "two"], ["u"]),
        N(kind, ["d", "i", "u"], ["y"], name="sc", reduction=red),
    ]
    outputs = ["y"]
    if after == "later":
        nodes.append(N("Mul", ["d", "two"], ["z"]))
        outputs.append("z")
    elif after == "view":
        nodes += [N("Reshape", ["d", "flat"], ["v"]), N("Neg", ["v"], ["z"])]
        outputs.append("z")
    elif after == "output":
        outputs.append("d")
    inits = {
        "one": np.float32(1.0),
        "two": np.float32(2.0),
        "s0": np.array([0, 0, 0], np.int64),
        "s1": np.array(ends, np.int64),
        "ush": np.array(ush, np.int64),
        "flat": np.array([-1], np.int64),
    }
    inputs = {"x": rnd(*xs)}
    if run_time:
        inputs["i"] = idx
    else:
        inits["i"] = idx
    _, (unit, _), _ = run_case(dev, nodes, inputs, inits, outputs, opset=18, exact=True)
    return unit, copies_of(unit, "sc")


@pytest.mark.parametrize("kind", ["ScatterND", "ScatterElements"])
@pytest.mark.parametrize("red", ["none", "add", "mul"])
@pytest.mark.parametrize("run_time", [False, True])
def test_scatter_writes_in_place_where_nothing_reads_the_data_after(dev, kind, red, run_time):
    """The data's other reader (a Slice making the updates) runs before the scatter: the
    scatter writes into the data's buffer, no copy first."""
    if run_time and red != "none" and kind == "ScatterND":
        pytest.skip("refused: ScatterND reductions over indices read at run time")
    _, copies = scatter_case(dev, "", kind, red, run_time)
    assert copies == 0


@pytest.mark.parametrize("after", ["later", "view", "output"])
@pytest.mark.parametrize("kind", ["ScatterND", "ScatterElements"])
def test_scatter_copies_data_read_after_it(dev, after, kind):
    """A node after the scatter reads the data (itself or a view of it), or the caller does:
    the scatter copies the data first, and every reader sees the data unscattered."""
    _, copies = scatter_case(dev, after, kind)
    assert copies == 1


def test_scatter_copies_a_unit_input_and_chains_in_place(dev):
    """Data that is a unit input is copied (the caller's buffer); a second scatter into the
    first one's output, with nothing else reading it, writes in place too."""
    x, u = rnd(4, 3), rnd(1, 3, seed=1)
    i0, i1 = np.array([[1]], np.int64), np.array([[-1]], np.int64)
    nodes = [N("ScatterND", ["x", "i0", "u"], ["a"], name="s0"), N("Neg", ["a"], ["n"])]
    nodes.append(N("ScatterND", ["n", "i1", "u"], ["b"], name="s1"))
    nodes.append(N("ScatterND", ["b", "i0", "u"], ["y"], name="s2"))
    _, (unit, _), _ = run_case(dev, nodes, {"x": x, "u": u}, {"i0": i0, "i1": i1}, exact=True)
    assert [copies_of(unit, s) for s in ("s0", "s1", "s2")] == [1, 0, 0]
