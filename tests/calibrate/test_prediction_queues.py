"""prediction.predict's queue terms: a device's queues sharing it, each node at rate
1 / (1 + (k - 1)(s - 1)/(q - 1)), and a captured graph's run."""

from __future__ import annotations

import pytest

from hetlab.calibrate.prediction import predict
from hetlab.cost.calibration import Calibration
from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.cost.queues import with_queues
from hetlab.devices.replay import graph_from_problem
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import simulate

FREE = Link(latency=0.0, bandwidth=None)


def shared_ms(p, g, place, order, host, remote) -> float:
    return predict(p, g, Plan.of(place, order), host=host, remote=remote).total_ms


def end_to_end_ms(p, g, place, order, host, remote) -> float:
    return predict(p, g, Plan.of(place, order), host=host, remote=remote).upto("host_io")


def two_chains(n: int = 3, cost: float = 2.0) -> Problem:
    """A source, two independent chains of ``n`` nodes, a join; on a CPU and a GPU."""
    nodes = [PNode("s", {"cpu": 1.0, "gpu": 0.0}), PNode("j", {"cpu": 1.0, "gpu": 0.0})]
    edges = []
    for c in "ab":
        prev = "s"
        for i in range(n):
            v = f"{c}{i}"
            nodes.append(PNode(v, {"cpu": 3 * cost, "gpu": cost}))
            edges.append(PEdge(prev, v, 4.0))
            prev = v
        edges.append(PEdge(prev, "j", 4.0))
    return Problem("two", ["cpu", "gpu"], nodes, edges, {"cpu->gpu": FREE, "gpu->cpu": FREE})


def on_queues(slowdown: float, n: int = 3) -> tuple[Problem, dict[str, str], list[str]]:
    p = with_queues(two_chains(n), {"gpu": ["gpu.q1"]}, 0.0, slowdown)
    place = {"s": "gpu", "j": "gpu"}
    place.update({f"a{i}": "gpu" for i in range(n)})
    place.update({f"b{i}": "gpu.q1" for i in range(n)})
    order = ["s"] + [f"{c}{i}" for i in range(n) for c in "ab"] + ["j"]
    return p, place, order


@pytest.mark.parametrize(("slowdown", "expected"), [(1.0, 6.0), (1.5, 9.0), (2.0, 12.0)])
def test_two_queues_share_their_device_by_the_measured_slowdown(slowdown, expected):
    """Two chains of 3 x 2 ms on two queues, both busy: each at 1 / slowdown of full speed."""
    p, place, order = on_queues(slowdown)
    g = graph_from_problem(p)
    assert shared_ms(p, g, place, order, "cpu", set()) == pytest.approx(expected)


def test_one_queue_is_the_standard_model():
    p, _, order = on_queues(1.7)
    g = graph_from_problem(p)
    alone = dict.fromkeys(order, "gpu")
    want = end_to_end_ms(p, g, alone, order, "cpu", set())
    assert want == pytest.approx(simulate(p, alone, order).makespan)
    assert shared_ms(p, g, alone, order, "cpu", set()) == pytest.approx(want)


def test_other_devices_run_beside_the_family_unslowed():
    p, place, order = on_queues(2.0)
    place.update({f"b{i}": "cpu" for i in range(3)})
    g = graph_from_problem(p)
    # chain a on the GPU alone (6 ms), chain b on the CPU (3 x 6 ms) beside it
    assert shared_ms(p, g, place, order, "cpu", set()) == pytest.approx(18.0)


def test_a_graph_run_costs_its_calibrated_overhead_once():
    p, place, order = on_queues(1.0)
    p.extra["queues"]["gpu"]["run_ms"] = 0.25
    g = graph_from_problem(p)
    assert shared_ms(p, g, place, order, "cpu", set()) == pytest.approx(6.25)
    on_cpu = dict.fromkeys(order, "cpu")
    assert shared_ms(p, g, on_cpu, order, "cpu", set()) == pytest.approx(
        simulate(p, on_cpu, order).makespan
    )


def host_links(p: Problem, latency: float) -> None:
    """Every link between the CPU and the GPU's two queues at ``latency`` ms."""
    for a, b in (("cpu", "gpu"), ("gpu", "cpu"), ("cpu", "gpu.q1"), ("gpu.q1", "cpu")):
        p.comm[f"{a}->{b}"] = Link(latency=latency, bandwidth=None)


def test_a_remote_device_pays_the_host_transfers():
    p, place, order = on_queues(1.0)
    host_links(p, 0.5)
    g = graph_from_problem(p)
    remote = {"gpu", "gpu.q1"}
    assert shared_ms(p, g, place, order, "cpu", remote) == pytest.approx(6.0 + 0.5 + 0.5)


def test_a_graph_kept_to_itself_pays_no_calibrated_boundary():
    """A unit boundary calibrated at 0.25 ms on the host's links: a captured graph whose
    only edges are the model's copies pays the link without it; a plan that feeds the
    device from a CPU unit (no graph then) pays it."""
    p, place, order = on_queues(1.0)
    p.extra["queues"]["gpu"]["run_ms"] = 0.0
    host_links(p, 0.5)
    p.calibration = Calibration.of({k: {"ms": 0.25} for k in ("cpu->gpu", "gpu->cpu")})
    g = graph_from_problem(p)
    remote = {"gpu", "gpu.q1"}
    assert shared_ms(p, g, place, order, "cpu", remote) == pytest.approx(6.0 + 2 * 0.5)
    fed = {**place, "s": "cpu"}  # the source on the CPU feeds both chains
    assert shared_ms(p, g, fed, order, "cpu", remote) == pytest.approx(1.0 + 0.75 + 6.0 + 0.75)
    assert p.comm["cpu->gpu"].latency == 0.5  # the links never hold the boundary


def test_the_slowdown_grows_linearly_with_the_nodes_running():
    """Three chains of 3 x 2 ms on three of four queues measured 2.5x slower all four busy:
    with three running, each at 1 / (1 + 2 x 1.5 / 3) = 1/2 of full speed."""
    nodes = [PNode("s", {"gpu": 0.0}), PNode("j", {"gpu": 0.0})]
    edges, place, order = [], {"s": "gpu", "j": "gpu"}, ["s"]
    queues = ["gpu", "gpu.q1", "gpu.q2"]
    for c, q in zip("abc", queues, strict=True):
        prev = "s"
        for i in range(3):
            v = f"{c}{i}"
            nodes.append(PNode(v, {"gpu": 2.0}))
            edges.append(PEdge(prev, v, 4.0))
            place[v], prev = q, v
            order.append(v)
        edges.append(PEdge(prev, "j", 4.0))
    order.append("j")
    p = Problem("three", ["gpu"], nodes, edges, {})
    p = with_queues(p, {"gpu": ["gpu.q1", "gpu.q2", "gpu.q3"]}, 0.0, 2.5)
    g = graph_from_problem(p)
    assert shared_ms(p, g, place, order, "gpu", set()) == pytest.approx(12.0)


def test_the_models_own_run_calibrates_run_ms_and_leaves_the_problem_as_it_was():
    from hetlab.calibrate.graph_run import model_run_ms
    from hetlab.devices.replay import ReplayDevice

    p, _, _ = on_queues(1.0)
    p.extra["queues"]["gpu"]["run_ms"] = 0.25
    g = graph_from_problem(p)
    gpu = ReplayDevice("gpu", p, time_scale=0.01)
    got = model_run_ms(gpu, p, g, "cpu", repeat=3)
    assert got is not None and got >= 0.0
    assert p.extra["queues"]["gpu"]["run_ms"] == 0.25
    assert model_run_ms(ReplayDevice("cpu", p), p, g, "cpu", repeat=1) is None  # no queues


def test_a_sequential_plan_all_on_one_device_is_predicted_shared():
    """The executor runs it as that device's group, so the shared model prices it; a
    sequential plan over two devices is left to the standard model."""
    from hetlab.calibrate.report import run_prediction
    from hetlab.devices.replay import ReplayDevice

    p, _, order = on_queues(1.0)
    g = graph_from_problem(p)
    devs = {"cpu": ReplayDevice("cpu", p), "gpu": ReplayDevice("gpu", p, kind="cuda")}
    alone = dict.fromkeys(order, "gpu")
    got = run_prediction(p, g, Plan.of(alone, order, sequential=True), devs)
    assert got["predicted_shared_ms"] == pytest.approx(got["predicted_io_ms"])
    assert got["predicted_ms"] == got["predicted_shared_ms"]
    mixed = {**alone, "a0": "cpu"}
    assert "predicted_shared_ms" not in run_prediction(
        p, g, Plan.of(mixed, order, sequential=True), devs
    )
