"""Adaptive execution: switches away from a slowed device and back, beats the static run;
the burner is bounded and pinned; the figure marks the switch points; CLI checks."""

from __future__ import annotations

import os
import time

import pytest

from hetlab.cost.problem import Problem
from hetlab.devices.replay import ReplayDevice, graph_from_problem
from hetlab.errors import HetlabError
from hetlab.executor.check import random_inputs
from hetlab.schedulers.plan import Plan
from hetlab.stretch.adaptive import AdaptiveConfig, run_adaptive

DOC = {
    "name": "diamond",
    "devices": ["d0", "d1"],
    "nodes": [
        {"id": "a", "cost": {"d0": 1, "d1": 1}},
        {"id": "b", "cost": {"d0": 8, "d1": 8}},
        {"id": "c", "cost": {"d0": 8, "d1": 8}},
        {"id": "d", "cost": {"d0": 1, "d1": 1}},
    ],
    "edges": [
        {"src": "a", "dst": "b", "bytes": 4},
        {"src": "a", "dst": "c", "bytes": 4},
        {"src": "b", "dst": "d", "bytes": 4},
        {"src": "c", "dst": "d", "bytes": 4},
    ],
}
SLOW = range(4, 20)  # runs during which d0 is 4x slower (more than half of the 28)


def _run(adaptive: bool):
    p = Problem.from_json(DOC)
    g = graph_from_problem(p)
    devs = [ReplayDevice("d0", p), ReplayDevice("d1", p)]

    def slow(i, trace):
        devs[0].time_scale = 4.0 if i in SLOW else 1.0

    dof = {"a": "d0", "b": "d0", "c": "d1", "d": "d0"}
    return run_adaptive(
        g,
        Plan.of(dof, g.topo_order()),
        devs,
        random_inputs(g, 0),
        28,
        AdaptiveConfig(),
        problem=p,
        adaptive=adaptive,
        before_run=slow,
    )[0]


def test_adaptive_switches_away_and_back_and_beats_static():
    ad, st = _run(True), _run(False)
    away = [s for s in ad.switches if s["to"] != "base"]
    back = [s for s in ad.switches if s["to"] == "base"]
    assert away and away[0]["device"] == "d0" and SLOW.start < away[0]["run"] <= SLOW.start + 4
    assert (
        back
        and back[-1]["run"] >= SLOW.stop
        and back[-1]["run"] <= SLOW.stop + 2 * AdaptiveConfig().probe_every
    )
    degraded = [r for r in ad.runs if r.plan != "base"]
    assert degraded and all(r.devices == ["d1"] for r in degraded)
    assert ad.median_ms() < 0.8 * st.median_ms() and not st.switches
    assert ad.runs[-1].plan == "base"


def test_config_is_checked():
    with pytest.raises(HetlabError):
        AdaptiveConfig(threshold=0.9)


def test_figure_marks_switch_points():
    from hetlab.stretch.figure import adaptive_figure

    ad, st = _run(True), _run(False)
    fig = adaptive_figure(ad, st)
    assert len(fig.layout.shapes) == len(ad.switches) + len(ad.marks)
    assert fig.data[0].name.startswith("static")


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs Linux affinity")
def test_burner_is_pinned_stoppable_and_bounded():
    from hetlab.stretch.interference import CpuBurner

    core = max(os.sched_getaffinity(0))
    b = CpuBurner([core], duration_s=0.8, procs=1).start()
    assert b.running
    t0 = time.monotonic()
    while os.sched_getaffinity(b._ps[0].pid) != {core} and time.monotonic() - t0 < 0.4:
        time.sleep(0.01)  # the child pins itself first thing
    assert os.sched_getaffinity(b._ps[0].pid) == {core}
    time.sleep(2.0)
    assert not b.running  # stopped by itself
    b.stop()
    with CpuBurner([core], duration_s=30, procs=1) as b2:
        assert b2.running
    assert not b2.running


def test_run_cli_adaptive_flags_need_adaptive():
    from test_cli_run import hetlab  # beside this file

    r = hetlab("run", "squeezenet", "--device", "cpu0", "--interfere", "cpu0:1:2", "--repeat", "2")
    assert r.returncode == 2 and "need --adaptive" in r.stderr
    r = hetlab(
        "run",
        "squeezenet",
        "--device",
        "cpu0",
        "--adaptive",
        "--interfere",
        "cpu0:5:2",
        "--repeat",
        "3",
    )
    assert (
        r.returncode == 2 and "--interfere" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    )


def test_run_cli_adaptive_json_has_the_report_and_trace(tmp_path):
    import json

    from test_cli_run import hetlab  # beside this file

    tr = tmp_path / "t.json"
    r = hetlab(
        "run",
        "squeezenet",
        "--device",
        "cpu0",
        "--adaptive",
        "--repeat",
        "4",
        "--compare",
        "--check",
        "--adaptive-trace",
        str(tr),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {"model_path", "latency_ms", "max_rel_err", "devices", "timeline"} <= set(doc)
    assert (
        doc["max_rel_err"] <= 1e-3
        and len(doc["adaptive"]["runs"]) == 4
        and "static_median_ms" in doc
    )
    saved = json.loads(tr.read_text())
    assert saved["adaptive"]["runs"] == doc["adaptive"]["runs"] and "static" in saved
