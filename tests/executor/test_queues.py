"""Plans over the queues of one OpenCL device, enqueued ahead of time (``executor/aot.py``):
outputs match onnxruntime whatever the split between queues and CPU groups."""

from __future__ import annotations

import pytest

from hetlab.devices.platform import devices as platform_devices
from hetlab.executor import Executor, run
from hetlab.executor.aot import UnitDone
from hetlab.graph import load
from tests.executor.models import two_branch

pytest.importorskip("pyopencl")

QUEUES = {"opencl": {"queues": {"cl0": 3}}}


@pytest.fixture(scope="module")
def devs():
    found = platform_devices(QUEUES)
    names = [d.name for d in found]
    if "cl0.q2" not in names:
        pytest.skip("no OpenCL device here")
    return {d.name: d for d in found}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return load(two_branch(tmp_path_factory.mktemp("q") / "two_branch.onnx"))


def placements(graph):
    """Round-robin over three queues; branches on two queues; queues and a CPU group."""
    ids = [n.id for n in graph.nodes]
    queues = ["cl0", "cl0.q1", "cl0.q2"]
    yield {v: queues[i % 3] for i, v in enumerate(ids)}
    yield {v: "cl0.q1" if v.startswith("b_") else "cl0" for v in ids}
    yield {v: "cpu0" if v.startswith("a_") else queues[i % 2 + 1] for i, v in enumerate(ids)}
    yield {v: "cl0.q2" if v in ("gap", "concat") else "cpu0" for v in ids}


def test_queue_views_share_the_context(devs):
    q1 = devs["cl0.q1"]
    assert q1.root is devs["cl0"] and q1.ctx is devs["cl0"].ctx
    assert q1.queue is not devs["cl0"].queue
    assert q1.info()["queue_of"] == "cl0"


@pytest.mark.parametrize("trace", [False, True])
def test_multi_queue_plans_match_onnxruntime(devs, graph, tmp_path, trace):
    for device_of in placements(graph):
        rep = run(
            graph,
            device_of,
            devs,
            repeat=3,
            check=True,
            trace=tmp_path / "t.json" if trace else None,
        )
        assert rep.max_rel_err is not None and rep.max_rel_err <= 1e-4, device_of
        assert sum(rep.devices.values()) == len(graph.nodes)
        units = [e for e in rep.events if e.kind == "unit"]
        assert all(e.start <= e.finish for e in units)


def test_group_is_enqueued_ahead_of_time(devs, graph):
    device_of = {v.id: ("cl0.q1" if v.id.startswith("b_") else "cl0") for v in graph.nodes}
    with Executor(graph, device_of, devs) as ex:
        ex.prepare()
        assert len(ex._groups) == 1 and set(ex._groups[0].names) == {"cl0", "cl0.q1"}
        rep = ex.run_once({"x": __import__("numpy").ones((1, 8, 16, 16), "float32")})
        assert all(isinstance(ex._done[s.index], UnitDone) for s in ex.specs)
        assert all(e.args.get("aot") for e in rep.events if e.kind == "unit")
