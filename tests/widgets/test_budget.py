"""The workbench's error budget: disabled with its reason where only fp32 exists; with the
fake tf32 device (``precision_fakes``), Measure precisions measures once and the slider then
moves the recommended plan between the tf32 and an fp32 candidate without running anything."""

from __future__ import annotations

import time

import pytest

from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.graph.onnx_io import load
from hetlab.widgets import Workbench, precision
from tests.precision_fakes import ERR, FAST, SlowDevice, Tf32Device, chain_model
from tests.tiny import tiny_problem


def test_only_fp32_disables_the_slider_and_the_button_with_the_reason():
    p = tiny_problem()
    wb = Workbench(model=graph_from_problem(p), devices=replay_devices(p))
    assert wb.budget_slider.disabled and wb.budget_slider.tooltip == precision.ONLY_FP32
    assert wb.budget_button.disabled and wb.budget_button.tooltip == precision.ONLY_FP32
    assert wb.budget_slider.readout_format == ".1e" and wb.budget_slider.min == -6
    wb.measure_budget()  # a call from Python says why, and runs nothing
    assert "cannot measure precisions" in wb.solve_status.value and not wb.tasks.busy()


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    graph = load(chain_model(tmp_path_factory.mktemp("budget") / "chain.onnx"))
    devs = [SlowDevice("c"), Tf32Device("g", err=ERR, pause_s=0.005)]
    wb = Workbench(model=graph, devices=devs, profile_options=FAST)
    assert not wb.budget_slider.disabled and "no profile" in wb.budget_button.tooltip
    wb.profile()
    assert wb.wait(120) and wb.problem is not None
    assert not wb.budget_button.disabled
    wb.budget_slider.value = 1e-1
    wb.budget_button.click()
    assert wb.wait(300)
    return wb


def test_after_measuring_the_slider_moves_the_plan_between_tf32_and_fp32(measured):
    wb = measured
    rec = wb.rec_plan.extra["recommended"]
    assert rec["chosen"].startswith("g=tf32 ") and wb.rec_plan.extra["precision"] == {"g": "tf32"}
    assert "within the error budget 1.0e-01" in wb.recommend_info.value
    assert "recommended" in wb.run_choice.options and wb.rec_fig is not None
    assert wb.state.rec_problem.extra["precision"] == {"g": "tf32"}
    rows = {f"{r['precision']} {r['candidate']}": r for r in rec["candidates"]}
    wb.budget_slider.value = 1e-4  # instant: nothing runs
    assert not wb.tasks.busy()
    tight = wb.rec_plan.extra["recommended"]["chosen"]
    assert tight != rec["chosen"] and rows[tight]["max_rel_err"] < ERR / 10  # no tf32 on g
    assert "within the error budget 1.0e-04" in wb.recommend_info.value
    assert rows[tight]["measured"] >= rows[rec["chosen"]]["measured"]
    wb.budget_slider.value = 1e-1
    assert wb.rec_plan.extra["recommended"]["chosen"] == rec["chosen"]


def test_the_candidates_figure_draws_the_budget_as_a_line(measured):
    wb = measured
    wb.budget_slider.value = 1e-2
    fig = wb.budget_fig
    (line,) = [s for s in fig.layout.shapes if s.type == "line"]
    assert line.x0 == pytest.approx(1e-2)
    names = {t.name for t in fig.data}
    assert {"fp32", "g=tf32"} <= names
    assert any(n.startswith("chosen: ") for n in names)


def test_measuring_shows_its_progress_and_cancel_stops_it(measured, monkeypatch):
    from hetlab.widgets import budgeting

    def endless(graph, devices, measure, profile_options, progress):
        for i in range(10_000):
            progress(i, 10_000, "fp32: profiling")  # raises once cancelled
            time.sleep(0.01)

    monkeypatch.setattr(budgeting, "measure_precisions", endless)
    wb = measured
    wb.measure_budget()
    deadline = time.time() + 30
    while "measuring precisions 0%: fp32" not in wb.solve_status.value and time.time() < deadline:
        time.sleep(0.02)
    assert not wb.cancel_button.disabled
    wb.cancel_button.click()
    assert wb.wait(30) and "measuring precisions cancelled" in wb.solve_status.value


def test_a_new_profile_drops_the_measurement(measured):
    wb = measured
    wb.use_problem(wb.base_problem, "again")  # a new state
    assert wb.state.budget is None and wb.rec_plan is None
    wb.budget_slider.value = 1e-3
    assert wb.rec_plan is None
