from __future__ import annotations

import os
import threading

import numpy as np
import onnxruntime as ort
import pytest

from hetlab.devices.binding import bind
from hetlab.devices.ort_cpu import OrtCpuDevice, affinity_string
from hetlab.graph.ir import Node
from hetlab.graph.onnx_io import load
from hetlab.schedulers.plan import Plan
from tests.executor.models import two_branch


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = two_branch(tmp_path_factory.mktemp("m") / "tb.onnx")
    return path, load(path)


def plain(path, x):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return dict(zip(["y", "z"], s.run(["y", "z"], {"x": x}), strict=False))


def test_units_chained_equal_a_plain_session(model):
    path, g = model
    x = np.random.default_rng(1).standard_normal((1, 8, 16, 16)).astype(np.float32)
    dev = OrtCpuDevice("cpu0", [min(os.sched_getaffinity(0))])
    stem = dev.prepare(g, ["stem", "stem_relu"])
    assert stem.inputs == ["x"] and stem.outputs == ["s1"]
    rest = dev.prepare(g, [n.id for n in g.nodes if n.id not in ("stem", "stem_relu")])
    assert rest.inputs == ["s1"] and sorted(rest.outputs) == ["y", "z"]
    r1 = dev.run(stem, {"x": x})
    r2 = dev.run(rest, {"s1": r1.outputs["s1"]})
    assert r1.start <= r1.finish <= r2.start <= r2.finish
    ref = plain(path, x)
    for k in ("y", "z"):
        np.testing.assert_allclose(r2.outputs[k], ref[k], rtol=1e-5, atol=1e-6)


def test_sessions_are_cached_by_node_set(model):
    _, g = model
    dev = OrtCpuDevice("cpu0", [0])
    a = dev.prepare(g, ["b_conv1", "b_sig"])
    b = dev.prepare(g, ["b_sig", "b_conv1"])
    assert a.handle is b.handle
    whole = dev.prepare(g, [n.id for n in g.nodes])
    assert whole.handle is not a.handle and whole.inputs == ["x"]


def test_supports_default_domain_and_control_flow(model):
    _, g = model
    dev = OrtCpuDevice("cpu0", [0])
    assert all(dev.supports(n, g) for n in g.nodes)
    for op in ("If", "Loop", "Scan", "LSTM", "NonMaxSuppression"):
        assert dev.supports(Node(op, op, [], []), g)
    odd = Node("x", "NoSuchOp", [], [], domain="com.example")
    assert not dev.supports(odd, g) and "NoSuchOp" in dev.why_not(odd, g)


def test_affinity_string_is_one_based_one_entry_per_pool_thread():
    assert affinity_string([0], 1) == ""
    assert affinity_string([0, 1], 2) == "2"
    assert affinity_string([4, 5, 6, 7], 4) == "6;7;8"
    assert affinity_string([2, 3], 4) == "4;3;4"  # more threads than cores: cycle


def test_info_and_bind_thread_pins_the_calling_thread():
    before = os.sched_getaffinity(0)
    core = max(before)
    dev = OrtCpuDevice("g", [core])
    info = dev.info()
    assert info["kind"] == "onnxruntime-cpu" and info["threads"] == 1 and info["cores"] == [core]
    seen = {}

    def work():
        dev.bind_thread()
        seen["aff"] = os.sched_getaffinity(0)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["aff"] == {core}
    assert os.sched_getaffinity(0) == before  # only the worker thread was pinned


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_an_unpinned_pool_starts_on_the_device_cores_whatever_the_caller(model):
    """The calling thread is bound to one core; the session's pool threads, which
    onnxruntime starts from it, still get the device's cores."""
    from hetlab.devices.opencl.threads import native_threads

    _, g = model
    cores = sorted(os.sched_getaffinity(0))[:2]
    dev = OrtCpuDevice("cpu", cores, threads=2, pin_pool=False)
    seen = {}

    def work():
        os.sched_setaffinity(0, cores[:1])
        before = native_threads()
        dev.prepare(g, [n.id for n in g.nodes])
        seen["pool"] = [os.sched_getaffinity(t) for t in native_threads() - before]
        seen["caller"] = os.sched_getaffinity(0)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["pool"] and all(a == set(cores) for a in seen["pool"])
    assert seen["caller"] == set(cores[:1])  # the caller's own binding is given back
    assert dev.info()["pool_pinned"] is False


def test_small_units_can_run_on_one_thread(model):
    _, g = model
    dev = OrtCpuDevice("g", [0, 1], small_flops=10**12)
    assert dev.session_options().intra_op_num_threads == 2
    unit = dev.prepare(g, ["b_sig"])
    assert unit.handle.get_session_options().intra_op_num_threads == 1
    whole = dev.prepare(g, [n.id for n in g.nodes])  # the whole model keeps the group's threads
    assert whole.handle.get_session_options().intra_op_num_threads == 2


def test_forget_drops_cached_sessions_but_held_units_still_run(model):
    path, g = model
    x = np.ones((1, 8, 16, 16), np.float32)
    dev = OrtCpuDevice("cpu0", [min(os.sched_getaffinity(0))])
    stem = dev.prepare(g, ["stem", "stem_relu"])
    rest = dev.prepare(g, [n.id for n in g.nodes if n.id not in ("stem", "stem_relu")])
    assert len(dev._sessions) == 2
    dev.forget([stem])
    assert (
        len(dev._sessions) == 1 and dev.prepare(g, ["stem", "stem_relu"]).handle is not stem.handle
    )
    dev.forget()
    assert not dev._sessions
    out = dev.run(rest, {"s1": dev.run(stem, {"x": x}).outputs["s1"]}).outputs
    np.testing.assert_allclose(out["y"], plain(path, x)["y"], rtol=1e-5, atol=1e-6)


def test_profiling_and_closing_an_executor_leave_no_sessions_behind(model, tmp_path, monkeypatch):
    from hetlab.executor import Executor
    from hetlab.profiling.profiler import profile

    monkeypatch.setenv("HETLAB_CACHE", str(tmp_path))
    _, g = model
    cores = sorted(os.sched_getaffinity(0))
    a, b = OrtCpuDevice("a", cores[:1]), OrtCpuDevice("b", cores[-1:])
    profile(g, [a, b], repeat=3, warmup=1, seconds=0.01, rounds=1, context=0, comm=False)
    assert not a._sessions and not b._sessions
    ids = [n.id for n in g.nodes]
    plan = Plan.of({v: ("a" if i % 2 else "b") for i, v in enumerate(ids)}, g.topo_order())
    ex = Executor(bind(plan, g, [a, b]))
    ex.run_once({"x": np.ones((1, 8, 16, 16), np.float32)})
    assert a._sessions and b._sessions
    ex.close()
    assert not a._sessions and not b._sessions
