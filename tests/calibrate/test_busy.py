"""The busy check of the executor's calibrations (``calibrate/busy.py``): a calibration run
whose whole-model reference runs slower than the profile says is measured again, and marked
``busy`` and left out of the cache when it stays so. ``api.run`` is replaced by a fake whose
one-device runs (the reference) and plan runs return figures given in the test; the load
signal (``calibrate/load.py``) is absent unless a test gives it, and its arithmetic is checked
on ``/proc/stat`` text written in the test."""

from __future__ import annotations

import html
import itertools
from dataclasses import replace
from types import SimpleNamespace

import pytest

from hetlab.calibrate import busy, load
from hetlab.calibrate.boundary import calibrate_boundaries
from hetlab.calibrate.concurrency import calibrate_concurrency
from hetlab.cost.calibration import Calibration
from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.executor import api

IDS = [f"n{i}" for i in range(12)]
WINDOWS = [IDS[i : i + 2] for i in range(0, 12, 2)]
MEASURE_LOAD = load.measure_load  # the real sampler, which the fixture below replaces
EXPECTED = 12 * 0.2  # the profile's whole model on either device
PLAN_MS = 4.0  # what a plan run measures, whatever the machine


@pytest.fixture(autouse=True)
def no_load_signal(monkeypatch):
    """The test machine's own load stays out: the reference alone decides, as without
    ``/proc/stat``."""
    monkeypatch.setattr(load, "measure_load", lambda fn: (fn(), None))


def chain12() -> Problem:
    nodes = [PNode(v, {"x": 0.2, "y": 0.2}) for v in IDS]
    edges = [PEdge(a, b, 4.0) for a, b in itertools.pairwise(IDS)]
    link = Link(latency=0.01, bandwidth=None)
    return Problem("chain12", ["x", "y"], nodes, edges, {"x->y": link, "y->x": link})


def fake_run(monkeypatch, references: list[float]) -> dict[str, list]:
    """``api.run`` returning ``references`` in turn for one-device runs, ``PLAN_MS`` for
    others; what ran, by kind."""
    calls: dict[str, list] = {"reference": [], "plan": []}
    refs = iter(references)

    def run(graph, plan, devs, repeat=1, inputs=None, **kw):
        placed = plan if isinstance(plan, dict) else plan.device_of
        one = len(set(placed.values())) == 1
        ms = next(refs) if one else PLAN_MS
        calls["reference" if one else "plan"].append((set(placed.values()), repeat))
        crit = {"critical_path": {"run_ms": ms * 0.9}}
        return SimpleNamespace(latency_ms={"median": ms}, units=1 if one else 6, extra=crit)

    monkeypatch.setattr(api, "run", run)
    return calls


def boundaries(p: Problem, cache: dict) -> dict:
    memo = (lambda a, b: cache.get((a, b)), lambda a, b, v: cache.__setitem__((a, b), v))
    g = graph_from_problem(p)
    return calibrate_boundaries(p, g, replay_devices(p), WINDOWS, {}, repeat=5, memo=memo)


def test_a_busy_reference_measures_the_pair_again_and_the_idle_one_is_cached(monkeypatch):
    calls = fake_run(monkeypatch, [10.0, 2.5])  # busy, then as the profile says
    cache: dict = {}
    done = boundaries(chain12(), cache)
    assert len(calls["reference"]) == len(calls["plan"]) == 2
    assert all(r == 5 for _, r in calls["reference"])  # the plan's repeat count
    assert calls["reference"][0][0] == {"x"}  # the whole model on one device of the pair
    cal = done["x->y"]
    assert "busy" not in cal and cal["measured_ms"] == PLAN_MS
    assert (cal["reference_ms"], cal["expected_ms"]) == (2.5, pytest.approx(EXPECTED))
    assert cache[("x", "y")]["reference_ms"] == 2.5 and "busy" not in cache[("x", "y")]
    assert not busy.busy_lines(Problem.from_json(chain12().to_json()))


def test_a_pair_busy_twice_is_kept_marked_and_not_cached(monkeypatch):
    calls = fake_run(monkeypatch, [10.0, 9.0])
    cache: dict = {}
    done = boundaries(chain12(), cache)
    p = replace(chain12(), calibration=Calibration.of(done))
    cal = done["x->y"]
    assert cal["busy"] is True and cal["reference_ms"] == 9.0  # the less busy try is kept
    assert cal["measured_ms"] == PLAN_MS and cache == {}
    assert Problem.from_json(p.to_json()).calibration.pairs()["y->x"]["busy"] is True
    (line,) = busy.busy_lines(p, "rerun 'hetlab profile m --devices x,y'")
    assert "x->y" in line and "9.0 ms, expected 2.4" in line and "'hetlab profile m" in line
    calls = fake_run(monkeypatch, [9.5, 2.4])  # the next profile measures it again
    again = boundaries(chain12(), cache)
    assert len(calls["plan"]) == 2 and "busy" not in again["x->y"] and ("x", "y") in cache


def test_a_cached_run_is_not_measured_but_an_old_entry_without_evidence_is(monkeypatch):
    monkeypatch.setattr(api, "run", lambda *a, **k: pytest.fail("a cached pair ran"))
    new = {("x", "y"): {"ms": 5.0, "units": 6, "reference_ms": 2.5, "expected_ms": 2.4}}
    cal = boundaries(chain12(), new)["x->y"]
    assert (cal["reference_ms"], cal["expected_ms"]) == (2.5, 2.4) and "busy" not in cal
    calls = fake_run(monkeypatch, [2.5])
    old = {("x", "y"): {"ms": 31.66, "units": 6}}  # cached before the check, on a busy machine
    cal = boundaries(chain12(), old)["x->y"]
    assert len(calls["plan"]) == 1 and cal["measured_ms"] == PLAN_MS
    assert old[("x", "y")]["reference_ms"] == 2.5  # measured again, with its evidence


def test_the_check_allows_the_factor_and_the_executor_s_slack():
    assert not busy.is_busy(busy.BUSY_FACTOR * 10.0 + busy.BUSY_SLACK_MS, 10.0)
    assert busy.is_busy(busy.BUSY_FACTOR * 10.0 + busy.BUSY_SLACK_MS + 0.01, 10.0)
    assert not busy.is_busy(0.05, 0.005)  # a tiny model: the executor's own cost dominates
    assert busy.is_busy(31.66, 16.5)  # squeezenet on a busy machine (docs/decisions.md)
    assert busy.guarded(lambda: {"ms": 1.0}, lambda: pytest.fail("no reference"), None, "x") == {
        "ms": 1.0
    }


def ladder() -> Problem:
    """Two chains whose step ``i + 1`` reads both nodes of step ``i`` (heft overlaps units),
    with a per-unit boundary calibration."""
    ids = [(f"p{i}", f"q{i}") for i in range(8)]
    nodes = [PNode(v, {"x": 0.2, "y": 0.2}) for pair in ids for v in pair]
    edges = [PEdge(a, b, 4.0) for s, t in itertools.pairwise(ids) for a in s for b in t]
    link = Link(latency=0.01, bandwidth=None)
    cal = {"ms": 0.0, "per_unit_ms": 0.01, "method": "alternating windows"}
    extra = {"boundary": {"x->y": dict(cal), "y->x": dict(cal)}}
    return Problem("ladder", ["x", "y"], nodes, edges, {"x->y": link, "y->x": link}, extra=extra)


def test_the_concurrency_calibration_is_checked_too_and_measures_an_old_number_again(monkeypatch):
    cache: dict = {}
    memo = (cache.get, cache.__setitem__)
    p = ladder()
    g = graph_from_problem(p)
    calls = fake_run(monkeypatch, [20.0, 19.0])
    got = calibrate_concurrency(p, g, replay_devices(p), repeat=3, memo=memo)
    assert len(calls["plan"]) == 2 and got["busy"] is True and cache == {}
    assert got["reference_ms"] == 19.0 and got["expected_ms"] == pytest.approx(16 * 0.2)
    (line,) = busy.busy_lines(replace(p, calibration=p.calibration.with_part("concurrent", got)))
    assert "concurrent units (heft's plan)" in line and "19.0 ms, expected 3.2" in line
    fake_run(monkeypatch, [3.3])
    got = calibrate_concurrency(ladder(), g, replay_devices(p), repeat=3, memo=memo)
    assert "busy" not in got and [v["ms"] for v in cache.values()] == [PLAN_MS]
    key = next(iter(cache))
    monkeypatch.setattr(api, "run", lambda *a, **k: pytest.fail("a cached plan ran"))
    got = calibrate_concurrency(ladder(), g, replay_devices(p), memo=memo)
    assert got["measured_ms"] == PLAN_MS
    fake_run(monkeypatch, [3.3])  # a bare number, cached before the check: measured again
    stale = {key: 6.0}
    old = calibrate_concurrency(ladder(), g, replay_devices(p), memo=(stale.get, stale.__setitem__))
    assert old["measured_ms"] == PLAN_MS and stale[key]["reference_ms"] == 3.3


def test_the_workbench_shows_the_busy_line_with_the_profile():
    from hetlab.widgets import Workbench

    p = chain12()
    cal = {"ms": 0.1, "method": "alternating windows", "busy": True}
    cal.update(reference_device="x", reference_ms=31.66, expected_ms=17.0)
    p.calibration = Calibration.of({"x->y": cal, "y->x": dict(cal)})
    wb = Workbench(problem=p, devices=[])
    assert wb.wait(60)
    shown = html.unescape(wb.profile_status.value)
    assert "x->y ran while the machine was busy" in shown and "31.7 ms, expected 17.0" in shown


def stat(busy: int, idle: int, cores: tuple[int, ...] = (0, 1)) -> str:
    """``/proc/stat`` text whose every core has ``busy`` jiffies spread over user, system,
    irq and steal, and ``idle`` idle and iowait jiffies; the first line sums them."""

    def row(name: str, n: int) -> str:
        u, s, q, st = busy * n // 2, busy * n // 4, busy * n // 8, busy * n // 8
        return f"{name} {u} 0 {s} {idle * n} {idle * n} {q} 0 {st} 0 0"

    lines = [row("cpu", len(cores))] + [row(f"cpu{c}", 1) for c in cores]
    return "\n".join(lines + ["intr 12345 0 0", "ctxt 999"]) + "\n"


def test_other_cores_is_the_machine_s_busy_time_less_this_process_s_per_second():
    assert load.busy_jiffies(stat(800, 50)) == 1600  # both cores, idle and iowait left out
    assert load.busy_jiffies(stat(800, 50), [1]) == 800  # the cores this process may use
    assert load.busy_jiffies(stat(800, 50), [5]) == 1600  # no such line: the whole machine
    assert load.busy_jiffies("intr 1\n") is None
    one = load.busy_jiffies(stat(800, 50), [0])
    before = load.Sample(one, own_s=3.0, wall_s=10.0)
    # 1.6 s of busy time on core 0 over 2 s of wall time, 1.2 s of it this process's
    after = load.Sample(one + 160, own_s=4.2, wall_s=12.0)
    assert load.other_cores(before, after, hz=100, cores=1) == pytest.approx(0.2)
    mine = load.Sample(one + 100, own_s=4.2, wall_s=12.0)  # own time read finer than a jiffy
    assert load.other_cores(before, mine, hz=100, cores=1) == 0.0
    hog = load.Sample(one + 400, own_s=3.0, wall_s=12.0)  # 2 s busy per second on 1 core
    assert load.other_cores(before, hog, hz=100, cores=1) == 1.0
    assert load.other_cores(before, before, hz=100, cores=1) is None


def test_measure_load_reads_before_and_after_and_is_absent_without_proc_stat(monkeypatch):
    texts = iter([stat(1000, 0), stat(1200, 0)])  # each core 2 s busier
    owns = iter([1.0, 3.0])
    clock = iter([5.0, 7.0])
    monkeypatch.setattr(load, "read_stat", lambda: next(texts))
    monkeypatch.setattr(load, "own_seconds", lambda: next(owns))
    monkeypatch.setattr(load.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(load, "usable_cores", lambda: [0, 1])
    monkeypatch.setattr(load, "clock_hz", lambda: 100.0)
    monkeypatch.setattr(load, "measure_load", MEASURE_LOAD)
    assert load.measure_load(lambda: "ran") == ("ran", 1.0)  # (4 - 2) s / 2 s
    monkeypatch.setattr(load, "read_stat", lambda: None)  # macOS, Windows
    assert load.measure_load(lambda: "ran") == ("ran", None)


def test_other_processes_load_alone_marks_the_run_busy(monkeypatch):
    loads = iter([1.02, 0.9])  # a reference as the profile says, with a hog on one core
    monkeypatch.setattr(load, "measure_load", lambda fn: (fn(), next(loads)))
    calls = fake_run(monkeypatch, [2.5, 2.4])
    cache: dict = {}
    done = boundaries(chain12(), cache)
    p, cal = replace(chain12(), calibration=Calibration.of(done)), done["x->y"]
    assert len(calls["plan"]) == 2 and cache == {}  # measured again, then kept unmarked
    assert cal["busy"] is True and (cal["reference_ms"], cal["other_cores"]) == (2.4, 0.9)
    (line,) = busy.busy_lines(p)
    assert "2.4 ms, expected 2.4; other processes kept 0.90 cores busy" in line
    loads = iter([0.9, 0.03])  # the second try is idle: it is kept and cached
    fake_run(monkeypatch, [2.3, 2.5])
    cal = boundaries(chain12(), cache)["x->y"]
    assert "busy" not in cal and (cal["reference_ms"], cal["other_cores"]) == (2.5, 0.03)
    assert cache[("x", "y")]["other_cores"] == 0.03


def test_without_the_load_signal_the_reference_alone_decides(monkeypatch):
    assert busy.is_busy(10.0, 2.4, None) and not busy.is_busy(2.5, 2.4, None)
    assert busy.is_busy(2.5, 2.4, load.OTHER_LOAD + 0.01)
    assert not busy.is_busy(2.5, 2.4, load.OTHER_LOAD)
    monkeypatch.setattr(load, "measure_load", MEASURE_LOAD)  # on a machine without /proc/stat
    monkeypatch.setattr(load, "read_stat", lambda: None)
    calls = fake_run(monkeypatch, [2.5])
    cal = boundaries(chain12(), {})["x->y"]
    assert len(calls["plan"]) == 1 and "busy" not in cal and "other_cores" not in cal
    fake_run(monkeypatch, [10.0, 9.0])
    assert boundaries(chain12(), {})["x->y"]["busy"] is True
