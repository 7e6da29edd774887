"""prediction.predict: one event simulation with named terms; its first terms are spec §3."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab.calibrate.prediction import SCHEDULED, TERMS, predict
from hetlab.cost.calibration import Calibration
from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.devices.replay import graph_from_problem
from hetlab.schedulers import schedule
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import simulate
from tests.calibrate.test_prediction_queues import on_queues


@st.composite
def problems(draw) -> Problem:
    devs = ["a", "b", "c"][: draw(st.integers(1, 3))]
    n = draw(st.integers(2, 12))
    cost = st.floats(0.05, 3.0)
    nodes = [PNode(f"n{i}", {d: draw(cost) for d in devs}) for i in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    edges = [PEdge(f"n{i}", f"n{j}", draw(st.floats(0.0, 500.0))) for i, j in chosen]
    link = st.builds(Link, st.floats(0.0, 0.5), st.floats(50.0, 500.0))
    comm = {f"{x}->{y}": draw(link) for x in devs for y in devs if x != y}
    p = Problem("random", devs, nodes, edges, comm)
    if len(devs) > 1 and draw(st.booleans()):
        ms = draw(st.floats(0.0, 0.4))
        p.calibration = Calibration.of({f"{devs[0]}->{devs[1]}": {"ms": ms}})
    return p


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(), algo=st.sampled_from(["heft", "greedy", "peft"]), sequential=st.booleans())
def test_the_scheduled_terms_are_the_standard_timing_model(p, algo, sequential):
    """Oracle agreement: compute, transfer and boundary alone give ``sim.simulate``'s
    makespan, the one every scheduler optimises; the shares sum to the total."""
    g = graph_from_problem(p)
    made = schedule(p, algo)
    plan = Plan.of(made.device_of, made.order, sequential=sequential)
    want = simulate(p, plan.device_of, plan.order, (), sequential).makespan
    got = predict(p, g, plan, terms=SCHEDULED)
    assert got.total_ms == want  # the same engine: the same sums
    full = predict(p, g, plan)
    assert sum(full.terms.values()) == pytest.approx(full.total_ms)
    assert full.makespan_ms == pytest.approx(want, abs=1e-9)
    assert list(full.terms) == [t for t in TERMS if t in full.terms]
    quick = predict(p, g, plan, breakdown=False)
    assert quick.total_ms == pytest.approx(full.total_ms)


def test_replacing_the_calibration_reprices_the_edges():
    """The links never hold the boundary; §3's edge cost follows the calibration in place."""
    nodes = [PNode("x", {"a": 1.0, "b": 1.0}), PNode("y", {"a": 1.0, "b": 1.0})]
    p = Problem("pair", ["a", "b"], nodes, [PEdge("x", "y", 0.0)], {"a->b": Link(0.1, None)})
    assert p.comm_cost("x", "y", "a", "b") == pytest.approx(0.1)
    p.calibration = Calibration.of({"a->b": {"ms": 0.4}})
    assert p.comm_cost("x", "y", "a", "b") == pytest.approx(0.5)
    assert p.comm["a->b"].latency == 0.1
    again = Problem.from_json(p.to_json())
    assert again.to_json() == p.to_json() and again.comm_cost("x", "y", "a", "b") == 0.5


def test_an_old_document_with_the_latency_in_its_links_and_views_reads_the_same():
    p = on_queues(1.0)[0]
    p.comm = {k: Link(0.2, None) for k in ("cpu->gpu", "gpu->cpu", "cpu->gpu.q1", "gpu.q1->cpu")}
    p.calibration = Calibration.of({"cpu->gpu": {"ms": 0.3}, "gpu->cpu": {"ms": 0.3}})
    old = p.to_json()
    del old["boundary"]["links"]
    for link in old["comm"].values():
        link["latency"] += 0.3  # what the calibration wrote into every link of the pair
    back = Problem.from_json(old)
    assert back.comm_tensor == pytest.approx(p.comm_tensor)
    assert back.comm["cpu->gpu.q1"].latency == pytest.approx(0.2)


def test_a_graph_kept_to_itself_is_dispatched_once_and_priced_by_its_run():
    """With a per-unit calibration, the CPU's units take the host; a device family that runs
    as one captured graph (``run_ms``) does not: it starts ``run_ms`` late instead."""
    p, place, order = on_queues(1.0)
    p.extra["queues"]["gpu"]["run_ms"] = 0.25
    cal = {"ms": 0.0, "per_unit_ms": 0.5, "method": "alternating windows"}
    p.calibration = Calibration.of({"cpu->gpu": cal, "gpu->cpu": cal})
    g = graph_from_problem(p)
    got = predict(p, g, Plan.of(place, order), host="cpu", remote={"gpu", "gpu.q1"})
    assert got.total_ms == pytest.approx(6.0 + 0.25)
    # unit by unit: s (0.5 on the host), then chain a, then chain b (6 ms each, b 0.5 later),
    # then j: 0.5 + 0.5 + 0.5 + 6.0 + 0.5 = 8.0, which the graph's run replaces
    assert got.upto("queue_sharing") == pytest.approx(8.0)
    assert got.terms["graph_run"] == pytest.approx(6.25 - 8.0)
    fed = {**place, "s": "cpu"}  # fed by a CPU unit: no graph, every unit takes the host
    assert "graph_run" not in predict(p, g, Plan.of(fed, order), host="cpu").terms
