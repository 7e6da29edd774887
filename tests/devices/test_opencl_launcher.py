"""Launches without an event per launch (``launcher.enqueue``): the same results as through
pyopencl, the wait list honoured, the last event returned, errors in one line."""

from __future__ import annotations

import numpy as np
import pytest

from hetlab.devices.opencl import launcher
from hetlab.errors import HetlabError

cl = pytest.importorskip("pyopencl")

SRC = """
__kernel void axpb(__global float* y, const float a, const float b) {
    const int i = get_global_id(0);
    y[i] = a * y[i] + b;
}
"""


class Launch:
    def __init__(self, kernel, gsize, lsize, node="n0"):
        self.kernel, self.gsize, self.lsize, self.node = kernel, gsize, lsize, node


@pytest.fixture
def chain(dev):
    """Three launches on one buffer whose result depends on their order: y = 3 * (2y + 1) - 4."""
    prg = cl.Program(dev.ctx, SRC).build()
    buf = cl.Buffer(dev.ctx, cl.mem_flags.READ_WRITE, 64 * 4)
    launches = []
    for a, b in ((2.0, 1.0), (3.0, 0.0), (1.0, -4.0)):
        k = cl.Kernel(prg, "axpb")
        k.set_args(buf, np.float32(a), np.float32(b))
        launches.append(Launch(k, (64,), (16,)))
    return dev, buf, launches


def _result(dev, buf, launches, wait_for=()):
    q = dev.queue
    cl.enqueue_copy(q, buf, np.arange(64, dtype=np.float32))
    ev = launcher.enqueue(cl, q, launches, wait_for)
    ev.wait()
    out = np.empty(64, np.float32)
    cl.enqueue_copy(q, out, buf)
    return out


def test_the_loader_pyopencl_uses_is_found():
    path = launcher.loaded_loader()
    assert path is not None and "libOpenCL" in path
    assert launcher.c_enqueue() is not None


def test_same_result_with_and_without_the_c_call(chain, monkeypatch):
    dev, buf, launches = chain
    want = 3 * (2 * np.arange(64, dtype=np.float32) + 1) - 4
    assert np.array_equal(_result(dev, buf, launches), want)
    monkeypatch.setattr(launcher, "c_enqueue", lambda: None)
    assert np.array_equal(_result(dev, buf, launches), want)


def test_first_launch_waits_on_the_wait_list(chain):
    dev, buf, launches = chain
    q = dev.queue
    cl.enqueue_copy(q, buf, np.zeros(64, dtype=np.float32))
    gate = cl.UserEvent(dev.ctx)
    ev = launcher.enqueue(cl, q, launches, [gate])
    q.flush()
    assert ev.command_execution_status != cl.command_execution_status.COMPLETE
    gate.set_status(cl.command_execution_status.COMPLETE)
    ev.wait()
    out = np.empty(64, np.float32)
    cl.enqueue_copy(q, out, buf)
    assert np.all(out == 3 * (2 * 0 + 1) - 4)


def test_no_launches_gives_a_marker(dev):
    ev = launcher.enqueue(cl, dev.queue, [])
    ev.wait()
    assert ev.command_execution_status == cl.command_execution_status.COMPLETE


def test_a_refused_launch_is_one_line(chain):
    dev, _buf, launches = chain
    big = 1 << 20  # a work-group larger than any device takes
    bad = Launch(launches[0].kernel, (big,), (big,), node="conv7")
    with pytest.raises(HetlabError, match=r"node conv7 \(error -?\d+\)") as e:
        launcher.enqueue(cl, dev.queue, [bad, launches[1]])
    assert "\n" not in str(e.value)
