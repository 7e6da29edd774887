"""prediction.predict's host terms: the model's inputs and outputs in host memory, each unit's
host dispatch one at a time, the concurrency surcharge; and the calibrations behind them."""

from __future__ import annotations

import itertools

import pytest

from hetlab.calibrate.prediction import predict
from hetlab.cost.calibration import Calibration
from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.devices.replay import graph_from_problem
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import simulate


def end_to_end_ms(p, g, device_of, order, host, remote) -> float:
    """The prediction up to the host's inputs and outputs (no per-unit calibration here)."""
    return predict(p, g, Plan.of(device_of, order), host=host, remote=remote).upto("host_io")


def host_serial(p, g, device_of, order, host, remote, sequential=False, concurrent=None):
    plan = Plan.of(device_of, order, sequential=sequential)
    got = predict(p, g, plan, host=host, remote=remote, surcharge=concurrent)
    return got.total_ms, got.overlapped


def host_serial_ms(p, g, device_of, order, host, remote) -> float | None:
    """The total where the host-dispatch term applies, else None."""
    got = predict(p, g, Plan.of(device_of, order), host=host, remote=remote)
    return got.total_ms if got.applies("host_dispatch") else None


def chain() -> Problem:
    nodes = [PNode(v, {"cpu0": 4.0, "gpu": 1.0}) for v in ("a", "b", "c")]
    edges = [PEdge("a", "b", 400.0), PEdge("b", "c", 400.0)]
    link = Link(latency=0.5, bandwidth=100.0)  # bytes per ms
    return Problem("chain", ["cpu0", "gpu"], nodes, edges, {"cpu0->gpu": link, "gpu->cpu0": link})


def test_a_remote_device_pays_the_input_and_output_transfers():
    p = chain()
    g = graph_from_problem(p)
    order = ["a", "b", "c"]
    on_gpu = dict.fromkeys(order, "gpu")
    base = simulate(p, on_gpu, order).makespan
    up = 0.5 + g.tensors["input"].nbytes / 100.0
    down = 0.5 + g.tensors["c:out"].nbytes / 100.0
    assert end_to_end_ms(p, g, on_gpu, order, "cpu0", {"gpu"}) == pytest.approx(base + up + down)
    # a device sharing host memory pays nothing; on the host itself nothing either
    assert end_to_end_ms(p, g, on_gpu, order, "cpu0", set()) == pytest.approx(base)
    on_cpu = dict.fromkeys(order, "cpu0")
    assert end_to_end_ms(p, g, on_cpu, order, "cpu0", {"gpu"}) == pytest.approx(
        simulate(p, on_cpu, order).makespan
    )


def test_mixed_plan_and_unknown_host():
    p = chain()
    g = graph_from_problem(p)
    order = ["a", "b", "c"]
    mixed = {"a": "cpu0", "b": "gpu", "c": "gpu"}
    base = simulate(p, mixed, order).makespan
    down = 0.5 + g.tensors["c:out"].nbytes / 100.0
    assert end_to_end_ms(p, g, mixed, order, "cpu0", {"gpu"}) == pytest.approx(base + down)
    # no host: no host I/O
    unknown = predict(p, g, Plan.of(mixed, order), host="cpu9", remote={"gpu"})
    assert not unknown.applies("host_io") and unknown.total_ms == pytest.approx(base)


def diamond(per_unit: float, boundary: float) -> Problem:
    nodes = [PNode(v, {"x": 1.0, "y": 1.0}) for v in ("a", "b", "c", "d")]
    edges = [PEdge("a", "b", 4.0), PEdge("a", "c", 4.0), PEdge("b", "d", 4.0), PEdge("c", "d", 4.0)]
    link = Link(latency=0.1, bandwidth=None)
    cal = {"ms": boundary, "per_unit_ms": per_unit, "method": "alternating windows"}
    return Problem(
        "diamond",
        ["x", "y"],
        nodes,
        edges,
        {"x->y": link, "y->x": link},
        extra={"boundary": {"x->y": dict(cal), "y->x": dict(cal)}},
    )


def test_host_serial_charges_each_unit_the_host_one_at_a_time():
    order = ["a", "b", "c", "d"]
    p = diamond(per_unit=0.0, boundary=0.0)
    g = graph_from_problem(p)
    split = {"a": "x", "b": "x", "c": "y", "d": "x"}
    assert host_serial_ms(p, g, split, order, "x", set()) == pytest.approx(
        end_to_end_ms(p, g, split, order, "x", set())
    )
    p = diamond(per_unit=0.5, boundary=0.3)
    one = dict.fromkeys(order, "x")
    # one unit: its compute plus one host slot; the boundary latency is not charged
    assert host_serial_ms(p, g, one, order, "x", set()) == pytest.approx(4.0 + 0.5)
    # split: units a | b | c (on y) | d; b and c are ready at once, but the host serves one
    t = host_serial_ms(p, g, split, order, "x", set())
    assert t == pytest.approx(0.5 + 1.0 + 0.5 + 0.5 + 0.1 + 1.0 + 0.5 + 0.1 + 1.0)
    p.calibration = Calibration()
    assert host_serial_ms(p, g, split, order, "x", set()) is None


def test_run_report_has_the_predictions_and_a_foreign_profile_does_not_stop_the_run():
    from hetlab.calibrate import run
    from hetlab.devices.replay import replay_devices
    from hetlab.schedulers.plan import Plan

    p = chain()
    g = graph_from_problem(p)
    plan = Plan.build(p, "by hand", {"a": "cpu0", "b": "gpu", "c": "gpu"}, ["a", "b", "c"])
    doc = run(g, plan, replay_devices(p, time_scale=0.01), problem=p).to_json()
    assert doc["predicted_io_ms"] == pytest.approx(doc["predicted_ms"])  # no remote device here
    terms = doc["prediction"]["terms"]
    assert sum(terms.values()) == pytest.approx(doc["predicted_ms"], abs=1e-3)
    assert doc["prediction"]["makespan_ms"] == pytest.approx(plan.makespan, abs=1e-3)
    other = diamond(per_unit=0.1, boundary=0.0)
    doc = run(g, plan, replay_devices(p, time_scale=0.01), problem=other).to_json()
    assert "predicted_io_ms" not in doc and "prediction" not in doc
    assert doc["predicted_ms"] == pytest.approx(plan.makespan, abs=1e-3)


def test_a_model_too_small_to_alternate_gets_its_one_unit_cost():
    order = ["a", "b", "c", "d"]
    p = diamond(per_unit=0.0, boundary=0.0)
    p.calibration = Calibration.of(
        {
            "x->y": {"ms": 0.05, "method": "probe handoff + per-unit cost"},
            "single_unit": {"x": {"measured_ms": 4.3, "per_unit_ms": 0.3}},
        }
    )
    g = graph_from_problem(p)
    one = dict.fromkeys(order, "x")
    assert host_serial_ms(p, g, one, order, "x", set()) == pytest.approx(4.0 + 0.3)
    # with what the whole run cost above the profile, the one-unit plan is charged that
    single = {"x": {"measured_ms": 4.3, "per_unit_ms": 0.3, "excess_ms": 0.7}}
    p.calibration = p.calibration.with_part("single_unit", single)
    assert host_serial_ms(p, g, one, order, "x", set()) == pytest.approx(4.0 + 0.7)
    split = {"a": "x", "b": "x", "c": "y", "d": "x"}  # more units: the per-unit cost, as before
    p.calibration = p.calibration.with_part("single_unit", {**single, "y": {"per_unit_ms": 0.3}})
    t = host_serial_ms(p, g, split, order, "x", set())
    # c receives over x->y: the link's 0.1 and the probe's 0.05, which no per-unit cost replaces
    assert t == pytest.approx(0.3 + 1.0 + 0.3 + 0.3 + 0.15 + 1.0 + 0.3 + 0.1 + 1.0)


def test_calibration_measures_windows_and_small_models_on_the_executor(monkeypatch):
    from hetlab.calibrate import handoff
    from hetlab.calibrate.boundary import calibrate_boundaries
    from hetlab.devices.replay import replay_devices

    ids = [f"n{i}" for i in range(12)]
    nodes = [PNode(v, {"x": 0.2, "y": 0.2}) for v in ids]
    edges = [PEdge(a, b, 4.0) for a, b in itertools.pairwise(ids)]
    link = Link(latency=0.01, bandwidth=None)
    p = Problem("chain12", ["x", "y"], nodes, edges, {"x->y": link, "y->x": link})
    g = graph_from_problem(p)
    devs = replay_devices(p, time_scale=0.1)
    wins = [ids[i : i + 2] for i in range(0, 12, 2)]
    done = calibrate_boundaries(p, g, devs, wins, {}, repeat=3)
    cal = done["x->y"]
    assert cal["method"] == "alternating windows" and cal["units"] == 6
    assert cal["per_unit_ms"] >= 0.0
    assert "single_unit" not in done
    monkeypatch.setattr(handoff, "measure_handoff", lambda devs: {})  # its probe is no fake's model
    small = calibrate_boundaries(Problem.from_json(p.to_json()), g, devs, [], {}, repeat=3)
    assert small["x->y"]["method"] == "probe handoff + per-unit cost"
    assert set(small["single_unit"]) == {"x", "y"}
    assert all(v["per_unit_ms"] >= 0.0 for v in small["single_unit"].values())
    for v in small["single_unit"].values():  # the measured latency above the profile's 12 x 0.2
        assert v["excess_ms"] == pytest.approx(max(0.0, v["measured_ms"] - 2.4), abs=1e-3)


def test_warm_up_runs_a_count_or_for_a_while():
    from hetlab.executor import api

    calls: list[int] = []
    assert api.warm_up(lambda: calls.append(1), 3) == 3 and len(calls) == 3
    assert api.warm_up(lambda: calls.append(1), 0) == 0 and len(calls) == 3
    n = api.warm_up(lambda: calls.append(1))  # default: until WARMUP_S, at most WARMUP_MAX
    assert n == api.WARMUP_MAX and len(calls) == 3 + n  # instant runs stop at the cap
    import time

    assert api.warm_up(lambda: time.sleep(api.WARMUP_S)) == 1  # a slow model: one run


def test_a_pair_calibrated_by_the_probe_keeps_its_handoff_in_the_host_serial_prediction():
    order = ["a", "b", "c", "d"]
    p = diamond(per_unit=0.0, boundary=0.0)
    probe = {"ms": 0.4, "method": "probe handoff + per-unit cost"}
    p.calibration = Calibration.of(
        {
            "x->y": dict(probe),
            "y->x": dict(probe),
            "single_unit": {"x": {"per_unit_ms": 0.1}, "y": {"per_unit_ms": 0.1}},
        }
    )
    g = graph_from_problem(p)
    split = {"a": "x", "b": "x", "c": "y", "d": "x"}
    # a | b | c on y | d: c waits 0.1 + 0.4 for a's tensor, d as long for c's
    t = host_serial_ms(p, g, split, order, "x", set())
    assert t == pytest.approx(0.1 + 1.0 + 0.1 + 0.1 + 0.5 + 1.0 + 0.1 + 0.5 + 1.0)


def test_a_unit_started_beside_another_devices_run_pays_the_concurrency_surcharge():
    order = ["a", "b", "c", "d"]
    p = diamond(per_unit=0.5, boundary=0.3)
    g = graph_from_problem(p)
    split = {"a": "x", "b": "x", "c": "y", "d": "x"}
    # a | b | c on y | d: only c starts (2.5) while another device runs (b, until 3.0)
    t0, overlapped = host_serial(p, g, split, order, "x", set())
    assert (t0, overlapped) == (pytest.approx(5.2), 1)
    p.calibration = p.calibration.with_part("concurrent", {"plan": "heft", "per_unit_ms": 0.25})
    assert host_serial_ms(p, g, split, order, "x", set()) == pytest.approx(t0 + 0.25)
    assert host_serial(p, g, split, order, "x", set(), concurrent=0.0)[0] == pytest.approx(t0)
    one = dict.fromkeys(order, "x")
    assert host_serial(p, g, one, order, "x", set())[1] == 0
    assert host_serial(p, g, split, order, "x", set(), sequential=True)[1] == 0


def test_the_surcharge_is_fitted_to_the_measured_plan():
    from hetlab.calibrate.concurrency import fit_surcharge

    assert fit_surcharge(lambda x: 2.0 + 3.0 * x, 5.0) == pytest.approx(1.0, abs=1e-6)
    assert fit_surcharge(lambda x: 2.0 + 3.0 * x, 1.0) == 0.0  # predicted slower already
    assert fit_surcharge(lambda x: 2.0, 5.0) == 5.0  # no unit overlaps: at most the latency


def ladder(n: int = 8) -> Problem:
    """Two chains ``p0..`` and ``q0..`` whose step ``i + 1`` reads both nodes of step ``i``,
    every node 0.2 ms on x and y, with a boundary calibration on both links."""
    ids = [(f"p{i}", f"q{i}") for i in range(n)]
    nodes = [PNode(v, {"x": 0.2, "y": 0.2}) for pair in ids for v in pair]
    edges = [PEdge(a, b, 4.0) for s, t in itertools.pairwise(ids) for a in s for b in t]
    link = Link(latency=0.01, bandwidth=None)
    cal = {"ms": 0.0, "per_unit_ms": 0.01, "method": "alternating windows"}
    return Problem(
        "ladder",
        ["x", "y"],
        nodes,
        edges,
        {"x->y": link, "y->x": link},
        extra={"boundary": {"x->y": dict(cal), "y->x": dict(cal)}},
    )


def test_concurrency_is_calibrated_on_a_plan_run_for_real_and_cached(monkeypatch):
    from hetlab.calibrate import busy, load
    from hetlab.calibrate.concurrency import calibrate_concurrency
    from hetlab.devices.replay import replay_devices
    from hetlab.executor import api

    monkeypatch.setattr(busy, "BUSY_FACTOR", 1e9)  # a loaded test machine still caches here
    monkeypatch.setattr(load, "OTHER_LOAD", 1e9)
    p = ladder()
    g = graph_from_problem(p)
    devs = replay_devices(p, time_scale=1.0)
    cache: dict[str, dict] = {}
    got = calibrate_concurrency(p, g, devs, repeat=3, memo=(cache.get, cache.__setitem__))
    assert got["plan"] == "heft" and got["overlapped"] >= 4 and got["measured_ms"] > 0
    cal = p.calibration.with_part("concurrent", got)
    assert got["per_unit_ms"] >= 0.0 and cal.concurrent_ms == got["per_unit_ms"]
    assert [c["ms"] for c in cache.values()] == [pytest.approx(got["measured_ms"], abs=1e-4)]
    assert got["expected_ms"] == pytest.approx(16 * 0.2) and got["reference_ms"] > 0

    def no_run(*a, **k):
        raise AssertionError("a cached plan is not run again")

    monkeypatch.setattr(api, "run", no_run)
    again = calibrate_concurrency(
        Problem.from_json(p.to_json()), g, devs, memo=(cache.get, cache.__setitem__)
    )
    assert again["measured_ms"] == got["measured_ms"]


def test_a_plan_without_overlap_leaves_the_surcharge_out():
    from hetlab.calibrate.concurrency import calibrate_concurrency
    from hetlab.devices.replay import replay_devices

    p = diamond(per_unit=0.1, boundary=0.0)
    g = graph_from_problem(p)
    got = calibrate_concurrency(p, g, replay_devices(p, time_scale=0.01), repeat=1)
    assert got["per_unit_ms"] is None and "unit(s) beside another device" in got["why"]
    assert p.calibration.with_part("concurrent", got).concurrent_ms == 0.0
    p.calibration = Calibration()
    assert "no host-serial prediction" in calibrate_concurrency(p, g, replay_devices(p))["why"]
