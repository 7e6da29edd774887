"""Interaction: parameters across a model switch, the move budget line, sliders wide enough
to set, and no status line left behind by work that is over.

A value set for one model is reset, with one line naming it, where it does not fit the next
(out of its bounds, more operators than the model has, a move the ILP's estimate says cannot
meet the budget); one that fits is kept, and the line says so too."""

from __future__ import annotations

import re

import ipywidgets as W

from hetlab.cost.datasets import load_hope_profile
from hetlab.schedulers.base import algorithm
from hetlab.widgets import Workbench, fit
from hetlab.widgets.params import READOUT_PX, TRACK_PX, control, label
from tests.tiny import tiny_problem

TAG = re.compile(r"<[^>]+>")


def _text(html: W.HTML) -> str:
    return TAG.sub("", html.value).replace("&#x27;", "'")


def _phone() -> Workbench:
    return Workbench(
        problem=load_hope_profile("inception-v3-huawei_p40"), devices=[], ilp_time_limit=0.05
    )


def test_values_that_fit_the_next_model_are_kept_and_said():
    wb = _phone()
    assert wb.wait(60) and _text(wb.params_status) == ""  # defaults: nothing to say
    wb.nt_slider.value = 6
    wb.eps_slider.value = 0.3
    assert wb.wait(120)
    wb.use_problem(tiny_problem(), "test")  # 8 ops: NT = 6 fits
    assert wb.wait(60)
    line = _text(wb.params_status)
    assert "kept from the previous model" in line and "ε=0.3" in line and "NT=6" in line
    assert "reset" not in line
    assert wb.ilp_plan.params["nt"] == 6 and wb.ilp_plan.params["epsilon"] == 0.3


def test_a_model_loaded_before_its_profile_is_fitted_once_the_profile_comes():
    from hetlab.devices.replay import graph_from_problem

    wb = _phone()
    assert wb.wait(60)
    wb.eps_slider.value = 0.3
    assert wb.wait(120)
    small = tiny_problem()
    wb.use_graph(graph_from_problem(small))  # the model first: no profile, nothing to fit
    assert wb.wait(60) and _text(wb.params_status) == ""
    wb.use_problem(small, "profiled")
    assert wb.wait(60)
    assert "kept from the previous model: ε=0.3" in _text(wb.params_status)


def test_nt_beyond_the_op_count_is_reset_where_the_default_fits():
    wb = _phone()
    assert wb.wait(60)
    wb.nt_slider.value = 20
    assert wb.wait(120)
    wb.panel("ilp_plan").defaults["nt"] = 4  # a default that fits the next model's 8 ops
    wb.use_problem(tiny_problem(), "test")
    assert wb.wait(60)
    line = _text(wb.params_status)
    assert "reset for tiny" in line and "NT 20 → 4 (more than the model's 8 ops)" in line
    assert wb.nt_slider.value == 4 and wb.ilp_plan.params["nt"] == 4
    wb.use_problem(tiny_problem(), "again")  # the same model: nothing to fit again
    assert wb.wait(60) and _text(wb.params_status) == ""


def test_a_setting_the_estimate_says_is_too_slow_is_reset_on_a_switch_and_warned(monkeypatch):
    def slow_nt(problem, algo, params):
        if "nt" not in params:
            return None
        return fit.Estimate(window_s=params["nt"] * 0.2, windows=10)  # NT=6: 12 s

    wb = _phone()
    assert wb.wait(60)
    wb.nt_slider.value = 6
    assert wb.wait(120)
    monkeypatch.setattr(fit, "estimate", slow_nt)
    wb.panel("ilp_plan").defaults["nt"] = 1  # 2 s per move: within the budget
    wb.use_problem(tiny_problem(), "test")
    assert wb.wait(60)
    line = _text(wb.params_status)
    assert "NT 6 → 1 (each ILP window may take up to ~1.2 s on this model)" in line
    assert wb.nt_slider.value == 1
    wb.nt_slider.value = 3  # set by hand on this model: kept, with the budget line
    assert wb.wait(60)
    line = _text(wb.params_status)
    assert "NT=3 on this model: each ILP window may take up to ~0.6 s, ~6 s for its 10" in line
    assert "more than the 3 s a move should take" in line
    assert wb.nt_slider.value == 3


def test_the_budget_line_goes_once_the_setting_meets_it(monkeypatch):
    monkeypatch.setattr(
        fit, "estimate", lambda p, a, params: fit.Estimate(params.get("nt", 0) * 0.5, 2)
    )
    wb = Workbench(problem=tiny_problem(), devices=[], ilp_time_limit=0.05)
    assert wb.wait(60)
    assert "NT=12 on this model" in _text(wb.params_status)
    wb.nt_slider.value = 2  # 2 windows of 1 s
    assert wb.wait(60)
    assert _text(wb.params_status) == ""


def test_sliders_have_a_usable_track_and_a_typed_readout():
    for algo in ("ilp", "greedy", "ilp+"):
        for p in algorithm(algo).params:
            w = control(p, p.default if p.default is not None else p.low)
            inner = getattr(w, "inner", w)
            if isinstance(inner, W.IntSlider | W.FloatSlider):
                width = int(inner.layout.width.removesuffix("px"))
                assert width - 7 * len(label(p)) - 20 - READOUT_PX >= 250
                assert TRACK_PX >= 250 and inner.readout and "type a value" in inner.tooltip


def test_no_solving_line_is_left_once_nothing_runs():
    """Cancel drops a solve that had not started: its slot does not keep saying "solving"."""
    wb = _phone()
    assert wb.wait(60)
    wb.nt_slider.value = 20
    wb.nt_slider.value = 22  # supersedes: the solve of 20 is told to stop, 22 waits its turn
    wb.cancel()
    assert wb.wait(120)
    line = _text(wb.solve_status)
    assert "solving" not in line
    assert "ilp: solve cancelled" in line or "ilp: solved" in line
