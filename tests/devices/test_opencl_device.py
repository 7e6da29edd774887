"""OpenCLDevice behaviour: discovery/info, supports() refusals, buffers, input binding, timing."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import make_model, rnd, run_case, to_graph

pytest.importorskip("pyopencl")
from hetlab.devices.kernels.ops import REGISTRY, op_for
from hetlab.devices.kernels.ops.gemm_shape import SPLIT_GRAPH, choose_tiling
from hetlab.devices.opencl import CLBuffer, discover
from hetlab.errors import HetlabError


def test_discover_names_and_info(dev):
    devs = discover()
    assert [d.name for d in devs] == [f"cl{i}" for i in range(len(devs))]
    info = dev.info()
    for key in (
        "platform",
        "device",
        "driver_version",
        "compute_units",
        "global_mem_bytes",
        "host_unified_memory",
    ):
        assert key in info
    assert info["kind"] == "opencl" and info["compute_units"] >= 1
    assert dev.fingerprint() == dev.fingerprint() and "driver_version=" in dev.fingerprint()


def test_buffer_roundtrip(dev):
    for a in (rnd(3, 5, 7), np.arange(10, dtype=np.int64), np.zeros((0, 3), np.float32)):
        b = dev.copy_in(a)
        assert isinstance(b, CLBuffer) and b.shape == a.shape
        np.testing.assert_array_equal(dev.copy_out(b), a)
        dev.free(b)


@pytest.mark.parametrize("map_io", [False, True], ids=["copied", "mapped"])
def test_batched_copies_roundtrip(dev, monkeypatch, map_io):
    """write_all and copy_out_all, by copies and by maps (forced here: PoCL copies), with
    an empty array and a host array among them."""
    if not hasattr(dev, "map_io"):
        pytest.skip("the batched copies under test are OpenCL's")
    monkeypatch.setattr(dev, "map_io", map_io)
    arrays = [rnd(4, 6), np.arange(9, dtype=np.int64), np.zeros((0, 2), np.float32)]
    bufs = [dev.alloc(a.shape, str(a.dtype)) for a in arrays]
    dev.write_all(list(zip(bufs, arrays, strict=True)))
    outs = dev.copy_out_all([*bufs, arrays[0]])
    for out, a in zip(outs, [*arrays, arrays[0]], strict=True):
        np.testing.assert_array_equal(out, a)
    for b in bufs:
        dev.free(b)


def test_program_cache_compiles_once(dev):
    p1 = dev.program("eltwise.cl")
    assert dev.program("eltwise.cl") is p1
    assert dev.program("eltwise.cl", "-DX=1") is not p1


def _graph(nodes, inputs, inits=None, opset=17):
    m = make_model(nodes, inputs, inits or {}, [nodes[-1].output[0]], opset)
    return to_graph(m, inputs, opset)


def test_shape_arithmetic_runs_and_other_dtypes_are_refused(dev):
    x = rnd(2, 3)
    g = _graph(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["y"], to=1)],
        {"x": x},
    )
    assert dev.supports(g.nodes[0], g) and dev.supports(g.nodes[1], g)
    ints = {"x": np.arange(4, dtype=np.int64).reshape(2, 2)}
    g2 = _graph([helper.make_node("ReduceSum", ["x"], ["y"], keepdims=1)], ints)
    assert "int64" in dev.why_not(g2.nodes[0], g2)
    with pytest.raises(HetlabError, match="cannot run node"):
        dev.prepare(g2, [g2.nodes[0].id])


def test_unknown_op_lists_registered():
    with pytest.raises(HetlabError, match="registered: .*Conv"):
        op_for("NoSuchOp")
    required = [
        "Conv",
        "ConvTranspose",
        "Relu",
        "LeakyRelu",
        "Clip",
        "Sigmoid",
        "HardSigmoid",
        "HardSwish",
        "Tanh",
        "Exp",
        "Sqrt",
        "Pow",
        "Erf",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Concat",
        "Split",
        "Slice",
        "Transpose",
        "Reshape",
        "Flatten",
        "Squeeze",
        "Unsqueeze",
        "Pad",
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "GlobalMaxPool",
        "LRN",
        "Gemm",
        "MatMul",
        "BatchNormalization",
        "Softmax",
        "ReduceMean",
        "ReduceSum",
        "Resize",
        "Dropout",
        "Identity",
        "LSTM",
    ]
    assert not [op for op in required if op not in REGISTRY]


def test_attribute_refusals(dev):
    x = {"x": rnd(1, 2, 4, 4)}
    g = _graph([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])], x)
    assert "Indices" in dev.why_not(g.nodes[0], g)
    g = _graph(
        [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic")],
        x,
        {"s": np.array([1, 1, 2, 2], np.float32)},
    )
    assert "cubic" in dev.why_not(g.nodes[0], g)
    g = _graph(
        [helper.make_node("Clip", ["x", "lo"], ["y"])], {**x, "lo": np.array(0.0, np.float32)}
    )
    assert "constant" in dev.why_not(g.nodes[0], g)


def test_inputs_rebound_across_runs(dev):
    """Device buffers and host arrays as inputs; a second run with new data gives new results."""
    w = rnd(4, 3, 1, 1, seed=1)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"]),
        helper.make_node("Reshape", ["c", "s"], ["y"]),
    ]
    inputs = {"x": rnd(1, 3, 5, 5)}
    _, (unit, _), _ = run_case(dev, nodes, inputs, {"w": w, "s": np.array([4, 25], np.int64)})
    for seed in (5, 6):
        x = rnd(1, 3, 5, 5, seed=seed)
        ref = np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x).reshape(4, 25)
        for feed in (x, dev.copy_in(x)):
            out = dev.copy_out(dev.run(unit, {"x": feed}).outputs["y"])
            assert out.shape == (4, 25) and np.allclose(out, ref, atol=1e-5)


def test_view_of_input_is_output(dev):
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"])]
    x = rnd(2, 6)
    _, (unit, _), _ = run_case(dev, nodes, {"x": x}, {"s": np.array([3, 4], np.int64)})
    assert unit.inputs == ["x"] and unit.handle.launches == []


def test_node_times_ordered(dev):
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c"], ["s"]),
        helper.make_node("MaxPool", ["s"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    _, (unit, res), _ = run_case(dev, nodes, {"x": rnd(1, 3, 8, 8)}, {"w": rnd(4, 3, 3, 3, seed=1)})
    ts = res.node_times
    assert [t.name for t in ts] == unit.nodes and {t.device for t in ts} == {dev.name}
    assert all(res.start <= t.start <= t.finish <= res.finish for t in ts)
    assert (
        ts[0].finish <= ts[1].start + 1e-6 and ts[1].finish <= ts[2].start + 1e-6
    )  # in-order queue


def test_tiling_choice():
    assert choose_tiling(2048, 2048, 2048, 1, 132)[:2] == (64, 1)
    ts, splits, klen = choose_tiling(384, 64, 2048, 1, 132)
    assert ts == 32 and splits > 1 and klen * splits >= 2048 and klen % 16 == 0
    # a batch-1 convolution at 17x17 (192 outputs, a 7x1 kernel over 192 channels): 60 tiles
    # on 132 compute units; split where launches replay from a graph, not from the host
    host = choose_tiling(192, 289, 1344, 1, 132)[1]
    ts, splits, klen = choose_tiling(192, 289, 1344, 1, 132, rule=SPLIT_GRAPH)
    assert splits > host
    assert ts == 32 and splits > 1 and klen >= SPLIT_GRAPH.min_k and klen * splits >= 1344
    assert (klen - 16) * splits < 1344  # no empty slice


def test_two_units_chain_device_buffers(dev):
    """Unit outputs (device buffers) feed the next unit directly, as the executor chains them."""
    import onnxruntime  # noqa: F401  (reference below)

    from tests.devices.opencl_case import reference

    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["p", "p"], ["y"]),
    ]
    inits = {"w": rnd(4, 3, 3, 3, seed=1)}
    inputs = {"x": rnd(1, 3, 6, 6)}
    m = make_model(nodes, inputs, inits, ["y"])
    g = to_graph(m, inputs, 17)
    u1 = dev.prepare(g, ["n0", "n1"])
    u2 = dev.prepare(g, ["n2", "n3"])
    assert u1.inputs == ["x"] and u1.outputs == ["r"] and u2.inputs == ["r"] and u2.outputs == ["y"]
    r1 = dev.run(u1, inputs)
    assert isinstance(r1.outputs["r"], CLBuffer)
    r2 = dev.run(u2, r1.outputs)
    (ref,) = reference(m, inputs, ["y"])
    np.testing.assert_allclose(dev.copy_out(r2.outputs["y"]), ref, rtol=1e-5, atol=1e-5)
    assert r1.finish <= r2.start


def test_division_is_correctly_rounded_where_the_device_offers_it(dev):
    """A float division rounds as onnxruntime's does (one ulp before a quantisation step can
    move a value by a whole step), by the build option where the device offers it."""
    from types import SimpleNamespace

    from hetlab.devices.opencl import pocl
    from hetlab.devices.opencl.runtime import exact_divide_option

    flag = int(dev.cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT)
    assert exact_divide_option(dev.cl, SimpleNamespace(single_fp_config=flag)) == [
        "-cl-fp32-correctly-rounded-divide-sqrt"
    ]
    assert exact_divide_option(dev.cl, SimpleNamespace(single_fp_config=0)) == []
    # and PoCL's own option where it builds under continuation-based barriers (pocl.py)
    assert dev.build_options == exact_divide_option(dev.cl, dev.dev) + pocl.build_options(dev.dev)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(4096).astype(np.float32)
    b = (rng.random(4096) + 1e-3).astype(np.float32)
    run_case(dev, [helper.make_node("Div", ["a", "b"], ["y"])], {"a": a, "b": b}, tol=0.0)
