"""The choice within an error budget alone: pure and instant over candidates measured once
(``measure_precisions`` with the fake tf32 device of ``precision_fakes``), so a slider can
move it. A larger budget never gives a slower plan; a budget under every error is one line."""

from __future__ import annotations

import time

import pytest

from hetlab.calibrate.recommend_precision import measure_precisions, within_budget
from hetlab.errors import HetlabError
from hetlab.graph.onnx_io import load
from tests.precision_fakes import Tf32Device, chain_model
from tests.profiling.cost_helpers import OrtTestDevice

FAST = {"repeat": 3, "warmup": 1, "seconds": 0.02, "context": 0, "comm": False, "cache": False}
ERR = 3e-3
BUDGETS = [10.0**e for e in range(-6, 0)] + [ERR]


class SlowDevice(OrtTestDevice):
    """An fp32-only device that waits 5 ms a run: never the fastest."""

    def run(self, unit, inputs, node_times=None):
        time.sleep(0.005)
        return super().run(unit, inputs)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    graph = load(chain_model(tmp_path_factory.mktemp("wb") / "chain.onnx"))
    devs = [SlowDevice("c"), Tf32Device("g", err=ERR, pause_s=0.005)]
    steps = []
    got = measure_precisions(
        graph, devs, 1, profile_options=FAST, progress=lambda d, n, m: steps.append((d, n, m))
    )
    return got, steps


def test_measuring_once_keeps_every_row_plan_and_profile_and_reports_progress(measured):
    got, steps = measured
    assert set(got.problems) == {"fp32", "g=tf32"}
    assert {f"{r['precision']} {r['candidate']}" for r in got.rows} == set(got.plans)
    assert got.problems["g=tf32"].extra["precision"] == {"g": "tf32"}
    done = [d / n for d, n, _ in steps]
    assert done == sorted(done) and done[-1] == 1.0  # forward only, to the end
    assert any(m.startswith("g=tf32: ") for _, _, m in steps)


def test_a_larger_budget_never_gives_a_slower_plan(measured):
    got, _ = measured
    rows = {f"{r['precision']} {r['candidate']}": r for r in got.rows}
    times = []
    for budget in sorted(BUDGETS):
        try:
            plan = within_budget(got.rows, got.plans, budget)
        except HetlabError:
            assert not times  # only the smallest budgets find nothing
            continue
        rec = plan.extra["recommended"]
        assert rec["error_budget"] == budget and rows[rec["chosen"]]["max_rel_err"] <= budget
        times.append(rows[rec["chosen"]]["measured"])
    assert times == sorted(times, reverse=True) and times
    loose = within_budget(got.rows, got.plans, 1e-1).extra["recommended"]["chosen"]
    tight = within_budget(got.rows, got.plans, 1e-4).extra["recommended"]["chosen"]
    assert loose.startswith("g=tf32 ") and loose.split()[1] != "single:c"  # tf32 on g
    assert rows[tight]["max_rel_err"] < ERR / 10 and tight != loose


def test_the_choice_is_a_copy_the_measured_plans_stay_as_they_were(measured):
    got, _ = measured
    plan = within_budget(got.rows, got.plans, 1e-1)
    assert "recommended" not in got.plans[plan.extra["recommended"]["chosen"]].extra


def test_a_budget_below_every_error_is_the_one_line_reason():
    rows = [
        {"precision": "fp32", "candidate": "single:g", "measured": 2.0, "max_rel_err": 1e-6},
        {"precision": "g=tf32", "candidate": "single:g", "measured": 1.0, "max_rel_err": 3e-3},
        {"precision": "g=tf32", "candidate": "heft", "measured": None, "max_rel_err": None},
    ]
    with pytest.raises(HetlabError) as e:
        within_budget(rows, {}, 1e-7)
    assert str(e.value) == (
        "no candidate ran within the error budget 1.0e-07 (the smallest error was 1.00e-06); "
        "the model needs its ONNX file for the check"
    )
