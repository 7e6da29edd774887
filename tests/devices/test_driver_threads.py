"""Driver threads (hetlab.devices.opencl.threads): found by what a block started, pinned with
the driving thread to the device's host cores, left alone on CPU devices."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from onnx import TensorProto, helper

from hetlab.devices.opencl.threads import Started, affinity, enabled, native_threads, pin

linux = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")


def _session(threads: int):
    import onnxruntime as ort

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    m = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
        ir_version=9,
    )
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


@linux
def test_started_finds_native_threads_but_not_pythons():
    stop = threading.Event()
    with Started() as s:
        sess = _session(2)  # one onnxruntime pool thread, native, inherits our affinity
        th = threading.Thread(target=stop.wait, daemon=True)
        th.start()
    try:
        assert s.tids and s.tids <= native_threads()
        assert th.native_id not in s.tids
        assert threading.get_native_id() not in s.tids
    finally:
        stop.set()
        th.join()
    del sess


@linux
def test_started_leaves_out_threads_with_their_own_affinity():
    import onnxruntime as ort

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    m = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
        ir_version=9,
    )
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    core = min(os.sched_getaffinity(0))
    so.add_session_config_entry("session.intra_op_thread_affinities", str(core + 1))  # 1-based
    with Started() as s:
        sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    assert not s.tids
    del sess


@linux
def test_pin_moves_the_threads_and_skips_ended_ones():
    with Started() as s:
        sess = _session(2)
    core = min(os.sched_getaffinity(0))
    assert pin(s.tids | {2**30}, [core]) == sorted(s.tids)
    assert all(affinity(t) == {core} for t in s.tids)
    del sess


def test_env_switch(monkeypatch):
    monkeypatch.delenv("HETLAB_PIN_DRIVER_THREADS", raising=False)
    assert not enabled()  # off by default: see threads.py for the H100 measurement
    monkeypatch.setenv("HETLAB_PIN_DRIVER_THREADS", "1")
    assert enabled()


@linux
def test_bind_thread_pins_the_driver_threads_with_the_driving_thread(dev):
    all_cores = set(os.sched_getaffinity(0))
    core = min(all_cores)
    saved = (dev.host_cores, dev.pin_driver_threads, set(dev.driver_threads))
    with Started() as s:
        sess = _session(2)  # stands in for threads a GPU driver starts
    dev.driver_threads |= s.tids
    seen = {}

    def driving():
        dev.bind_thread()
        seen["self"] = affinity(0)

    try:
        dev.host_cores, dev.pin_driver_threads = [core], False  # a CPU device: compute threads
        th = threading.Thread(target=driving)
        th.start()
        th.join()
        assert seen["self"] == {core} and all(affinity(t) == all_cores for t in s.tids)
        assert dev.info()["driver_threads_pinned"] is False
        dev.pin_driver_threads = True
        th = threading.Thread(target=driving)
        th.start()
        th.join()
        assert all(affinity(t) == {core} for t in s.tids)
        assert affinity(0) == all_cores  # the caller of the test is untouched
    finally:
        dev.host_cores, dev.pin_driver_threads, dev.driver_threads = saved
        pin(s.tids, all_cores)
    del sess
    b = dev.copy_in(np.ones(3, np.float32))
    np.testing.assert_array_equal(dev.copy_out(b), np.ones(3, np.float32))
