"""Plans over the queues of one OpenCL device, enqueued ahead of time
(``devices/opencl/aot.py``): outputs match onnxruntime whatever the split between queues
and CPU groups."""

from __future__ import annotations

import numpy as np
import pytest

from hetlab.devices.binding import bind
from hetlab.devices.opencl.aot import UnitDone
from hetlab.devices.platform import devices as platform_devices
from hetlab.errors import HetlabError
from hetlab.executor import Executor, run
from hetlab.graph import load
from hetlab.schedulers.plan import Plan
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


def test_a_context_s_queues_are_enqueued_ahead_of_time_by_one_runner(devs, graph):
    device_of = {v.id: ("cl0.q1" if v.id.startswith("b_") else "cl0") for v in graph.nodes}
    with Executor(bind(Plan.of(device_of, graph.topo_order()), graph, devs)) as ex:
        ex.prepare()
        assert len(ex._runners) == 1 and set(ex._runners[0].names) == {"cl0", "cl0.q1"}
        rep = ex.run_once({"x": __import__("numpy").ones((1, 8, 16, 16), "float32")})
        assert all(isinstance(ex.state.done[s.index], UnitDone) for s in ex.specs)
        assert all(e.args.get("aot") for e in rep.events if e.kind == "unit")


@pytest.mark.parametrize("sequential", [False, True])
def test_node_times_are_node_intervals_of_their_units_device_inside_their_unit(
    devs, graph, sequential
):
    """Timed by the queue runner's stamps (ahead of time) or by each run (one at a time): every
    node a device timed is a node interval on the device of its unit, within its unit's
    interval, in the unit's node order."""
    ids = [v.id for v in graph.nodes]
    device_of = {
        v: "cpu0" if v.startswith("a_") else ("cl0.q1", "cl0")[i % 2] for i, v in enumerate(ids)
    }
    plan = Plan.of(device_of, graph.topo_order(), sequential=sequential)
    with Executor(bind(plan, graph, devs), node_times=True) as ex:
        rep = ex.run_once({"x": np.ones((1, 8, 16, 16), "float32")})
        unit_of = {int(e.args["unit"]): e for e in rep.events if e.kind == "unit"}
        timed = rep.node_times
        assert any(ex.specs[i].device.startswith("cl0") for i in timed)
        for i, times in timed.items():
            ev, spec = unit_of[i], ex.specs[i]
            assert [t.name for t in times] == list(spec.nodes)
            assert {(t.kind, t.device) for t in times} == {("node", spec.device)}
            tol = 1e-3  # ms: the stamps' mapping onto the host clock
            assert all(ev.start - tol <= t.start <= t.finish <= ev.finish + tol for t in times)


def test_a_sequential_plan_is_enqueued_ahead_of_time_only_on_one_queue(devs, graph):
    """One device keeps a sequential plan's order by itself; two queues would overlap."""
    x = {"x": __import__("numpy").ones((1, 8, 16, 16), "float32")}
    one = {v.id: "cl0" for v in graph.nodes}
    two = {v.id: ("cl0.q1" if v.id.startswith("b_") else "cl0") for v in graph.nodes}
    for device_of, together in ((one, True), (two, False)):
        plan = Plan.of(device_of, graph.topo_order(), sequential=True)
        with Executor(bind(plan, graph, devs)) as ex:
            ex.prepare()
            assert bool(ex._runners) is together
            ex.run_once(x)


def test_a_profile_over_queues_measures_the_device_once_and_runs_checked(devs, graph):
    from hetlab.calibrate import profile
    from hetlab.schedulers import schedule

    queues = [devs["cl0"], devs["cl0.q1"], devs["cl0.q2"]]
    p = profile(graph, queues, repeat=2, warmup=1, seconds=0.01, rounds=1, context=0)
    assert p.devices == ["cl0", "cl0.q1", "cl0.q2"]
    q = p.extra["queues"]["cl0"]
    assert q["views"] == ["cl0.q1", "cl0.q2"] and q["slowdown"] >= 1.0 and "pay" in q
    for node in p.nodes:
        if node.cost["cl0"] is not None:
            assert node.cost["cl0.q1"] == pytest.approx(node.cost["cl0"] * q["slowdown"])
    rep = run(graph, schedule(p, "heft"), devs, repeat=2, check=True)
    assert rep.max_rel_err <= 1e-4


def test_the_whole_cpu_and_its_groups_are_alternatives():
    from hetlab.calibrate.profile import exclusive_sets
    from hetlab.devices import OrtCpuDevice
    from hetlab.devices.platform import whole_cpu

    groups = [{"name": "cpu0", "cores": [0]}, {"name": "cpu1", "cores": [0]}]
    whole = whole_cpu("cpu", groups)
    assert whole.capabilities().covers == ("cpu0", "cpu1")
    assert whole.pin and not whole.pin_pool  # a plain session's pool: nothing to keep apart

    def group(name):
        return OrtCpuDevice(name, [0])

    assert exclusive_sets([group("cpu0"), group("cpu1"), whole]) == [["cpu"], ["cpu0", "cpu1"]]
    assert exclusive_sets([group("cpu0"), group("cl0")]) == []


def test_a_view_of_a_host_tensor_passes_between_queues(devs, tmp_path):
    """A unit that is only a view (Reshape) of what the host or a CPU group sends: its
    output's buffer is known only once the copy is enqueued."""
    import onnx
    from onnx import TensorProto, helper

    from tests.executor.models import save

    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Reshape", ["r", "shape"], ["v"], name="view"),
        helper.make_node("Sigmoid", ["v"], ["y"], name="sig"),
    ]
    shape = onnx.numpy_helper.from_array(__import__("numpy").array([4, 8], "int64"), "shape")
    g = helper.make_graph(
        nodes,
        "view_between_queues",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [shape],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    graph = load(save(model, tmp_path / "view.onnx"))
    for first in ("cpu0", "cl0"):
        device_of = {"relu": first, "view": "cl0.q1", "sig": "cl0"}
        rep = run(graph, device_of, devs, repeat=2, check=True)
        assert rep.max_rel_err <= 1e-6, first


def test_an_untimed_unit_enqueued_ahead_says_its_interval_is_approximate(devs, graph, tmp_path):
    device_of = {v.id: "cl0" for v in graph.nodes}
    untimed = run(graph, device_of, devs, repeat=1, warmup=0)
    assert untimed.timeline and all(e.get("approx") for e in untimed.timeline)
    timed = run(graph, device_of, devs, repeat=1, warmup=0, trace=tmp_path / "t.json")
    assert timed.timeline and not any(e.get("approx") for e in timed.timeline)


def test_a_bounds_checked_queue_runner_fails_the_run_that_indexes_past_a_buffer(devs, graph):
    """Under the bounds-checked build (opencl/bounds.py) the queue runner checks every unit's error
    record after its run: a launch one element too long fails the run with its node."""
    device_of = {v.id: ("cl0.q1" if v.id.startswith("b_") else "cl0") for v in graph.nodes}
    x = {"x": np.ones((1, 8, 16, 16), "float32")}
    cl = {d: d.bounds_check for d in devs.values() if d.kind == "opencl"}
    for d in cl:
        d.bounds_check = True
    try:
        with Executor(bind(Plan.of(device_of, graph.topo_order()), graph, devs)) as ex:
            ex.prepare()
            assert len(ex._runners) == 1
            ex.run_once(x)  # as built: every index in range
            launches = [L for u in ex.units for L in u.handle.launches if L.node == "b_sig"]
            (sig,) = launches
            # the element count one too many, and a work-group more to reach it
            sig.kernel.set_arg(2, np.int32(sig.args[2] + 1))
            sig.gsize = (sig.gsize[0] + 256,)
            vars(sig).pop("c_args", None)  # the C launcher's copy of the sizes (launcher.py)
            with pytest.raises(
                HetlabError, match="kernel unary(_cpu)? of node b_sig .* (read|wrote) index"
            ):
                ex.run_once(x)
    finally:
        for d, before in cl.items():
            d.bounds_check = before
