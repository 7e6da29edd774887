"""Plans over models whose shapes depend on input values (a Loop's trip count, NonZero, a
run-time Range): run on inputs that give other shapes than the reference run, they match
onnxruntime; a kernel device never runs a data-dependent shape, and one fed another shape than
it was built for stops the run in one line."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import hetlab
from hetlab.devices.binding import bind
from hetlab.devices.platform import devices as platform_devices
from hetlab.errors import HetlabError
from hetlab.executor import Executor, run
from hetlab.executor.worker import RunError
from hetlab.graph import load
from hetlab.schedulers.plan import Plan
from tests.graph.test_dynamic_shapes import CASES


@pytest.fixture(scope="module")
def devs():
    return {d.name: d for d in platform_devices()}


@pytest.fixture(scope="module")
def cl0(devs):
    if "cl0" not in devs:
        pytest.skip("no OpenCL device here")
    return devs["cl0"]


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, tmp_path_factory):
    make, feed, ref, others = CASES[request.param]
    path = make(tmp_path_factory.mktemp("dyn") / f"{request.param}.onnx")
    return load(path, values=feed(ref)), feed, others


def reference(g, feed) -> dict[str, np.ndarray]:
    sess = ort.InferenceSession(g.source_path, providers=["CPUExecutionProvider"])
    return dict(zip(g.outputs, sess.run(g.outputs, feed), strict=True))


def assert_matches_onnxruntime(g, plan, devices, feed) -> None:
    got = run(g, plan, devices, inputs=feed, warmup=0).outputs
    for name, want in reference(g, feed).items():
        assert got[name].shape == want.shape, name
        np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-6)


def test_cpu_plans_run_other_trip_counts(case, devs):
    g, feed, others = case
    cpus = [devs[d] for d in ("cpu0", "cpu1") if d in devs]
    alternate = {n.id: cpus[i % len(cpus)].name for i, n in enumerate(g.nodes)}
    for v in others:
        assert_matches_onnxruntime(g, "cpu0", cpus, feed(v))
        assert_matches_onnxruntime(g, alternate, cpus, feed(v))


def test_kernel_devices_keep_only_the_fixed_shape_tail(case, devs, cl0):
    g, feed, others = case
    both = [devs["cpu0"], cl0]
    rep = run(g, "cl0", both, inputs=feed(others[0]), warmup=0)
    on_cl0 = {r["node"] for r in rep.to_json()["timeline"] if r["device"] == "cl0"}
    assert on_cl0, "the fixed-shape tail runs on cl0"
    assert not any(g.data_dependent(g.node(v)) for v in on_cl0)
    for v in others:
        assert_matches_onnxruntime(g, "cl0", both, feed(v))


def test_a_profiled_plan_runs_other_trip_counts(case, devs, cl0):
    g, feed, others = case
    both = [devs["cpu0"], cl0]
    p = hetlab.profile(g, both, repeat=1, warmup=0, rounds=1, context=0, comm=False, cache=False)
    plan = hetlab.schedule(p, "heft")
    assert not any(d == "cl0" and g.data_dependent(g.node(v)) for v, d in plan.device_of.items())
    for v in others:
        assert_matches_onnxruntime(g, plan, both, feed(v))


def test_a_plan_that_puts_a_data_dependent_shape_on_a_kernel_device_is_refused(case, devs, cl0):
    g, feed, others = case
    marked = next(n.id for n in g.nodes if n.op_type in ("Relu", "Mul") and g.data_dependent(n))
    plan = {n.id: "cl0" if n.id == marked else "cpu0" for n in g.nodes}
    with pytest.raises(HetlabError, match="cl0 cannot run 1 node: .*data-dependent shape"):
        run(g, plan, [devs["cpu0"], cl0], inputs=feed(others[0]), warmup=0)


@pytest.mark.parametrize("ahead_of_time", [True, False])
def test_a_kernel_unit_fed_another_shape_stops_in_one_line(tmp_path, devs, cl0, ahead_of_time):
    make, feed, ref, _others = CASES["loop"]
    g = load(make(tmp_path / "loop.onnx"), values=feed(ref))
    for t in g.tensors.values():  # as if the marks had missed it: cl0 builds for [3, 1, 4]
        t.dynamic = False
    plan = {n.id: "cl0" if n.id == "relu" else "cpu0" for n in g.nodes}
    plan = Plan.of(plan, g.topo_order())
    with Executor(bind(plan, g, [devs["cpu0"], cl0]), ahead_of_time=ahead_of_time) as ex:
        ex.run_once(feed(ref))  # the reference trip count runs
        with pytest.raises(HetlabError) as err:
            ex.run_once(feed(5))
    msg = str(err.value)
    assert not isinstance(err.value, RunError) and "\n" not in msg
    assert "on cl0 [relu]" in msg and "'steps'" in msg
    assert "[3, 1, 4]" in msg and "[5, 1, 4]" in msg
