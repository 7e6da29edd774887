"""Three models loaded in a row into one workbench: after each step every figure, info line
and status line belongs to the model shown, and Run runs the plan on screen.

The "machine" is two fake devices replaying the costs of all three models
(``hetlab.devices.replay``), so profiling and running are real code paths everywhere."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hetlab.cost.problem import PEdge, PNode, Problem
from hetlab.devices.replay import ReplayDevice, graph_from_problem
from hetlab.widgets import Workbench
from tests.tiny import tiny_problem

QUICK = {"comm": False, "cache": False, "repeat": 3, "warmup": 1, "seconds": 0.01}
BOLD = re.compile(r"<b>([^<]+)</b>")


def _variant(tag: str, cpu: float, gpu: float, copies: int = 1) -> Problem:
    """``copies`` tiny problems in a chain, ids prefixed with ``tag``, costs scaled."""
    base = tiny_problem()
    nodes, edges = [], []
    for k in range(copies):
        pre = f"{tag}{k}"
        nodes += [
            PNode(
                f"{pre}{n.id}",
                {
                    "cpu": n.cost["cpu"] * cpu,
                    "gpu": None if n.cost["gpu"] is None else n.cost["gpu"] * gpu,
                },
                n.op_type,
            )
            for n in base.nodes
        ]
        edges += [PEdge(f"{pre}{e.src}", f"{pre}{e.dst}", e.bytes) for e in base.edges]
        if k:
            edges.append(PEdge(f"{tag}{k - 1}h", f"{pre}a", 4000.0))
    return Problem(tag, list(base.devices), nodes, edges, dict(base.comm))


MODELS = [_variant("alpha", 1.0, 1.0), _variant("beta", 0.3, 2.0), _variant("gamma", 1.5, 0.5, 2)]


def _machine() -> list[ReplayDevice]:
    union = Problem(
        "machine",
        ["cpu", "gpu"],
        [n for p in MODELS for n in p.nodes],
        [e for p in MODELS for e in p.edges],
        dict(MODELS[0].comm),
    )
    return [ReplayDevice(d, union) for d in union.devices]


def _ids(p) -> set[str]:
    return {n.id for n in p.nodes}


def _bold(texts) -> set[str]:
    """The node ids a figure names in bold in its hover texts."""
    flat = []
    for t in texts or []:
        flat += list(t) if isinstance(t, (list, tuple)) else [t]
    return {m for t in flat for m in BOLD.findall(str(t))}


def _only_loaded(wb: Workbench, model: Problem) -> None:
    """A model just loaded: its DAG, no profile, and nothing left of the model before."""
    ids = _ids(model)
    assert wb.graph is not None and _ids(wb.graph) == ids and wb.problem is None
    assert _bold(wb.dag_fig.data[1].text) == ids
    for fig in ("heat_fig", "ilp_fig", "greedy_fig", "rec_fig", "run_fig"):
        assert getattr(wb, fig) is None, fig  # a message, not a figure of another model
    assert wb.ilp_plan is None and wb.greedy_plan is None and wb.run_report is None
    assert wb.ilp_info.value == wb.compared_info.value == wb.recommend_info.value == ""
    assert model.name in wb.model_status.value and "profile" not in wb.profile_status.value
    assert wb.solve_status.value == ""
    assert "Run disabled: no profile" in wb.run_status.value and wb.run_button.disabled
    assert wb.trace_button.disabled and wb.progress.value == 0


def _all_of(wb: Workbench, model: Problem) -> None:
    """A model profiled and both plans solved: every view shows this model."""
    ids = _ids(model)
    assert wb.problem.name == model.name and _ids(wb.problem) == ids
    assert f"profile {model.name}: {len(ids)} ops" in wb.profile_status.value
    assert model.name in wb.model_status.value
    assert _bold(wb.dag_fig.data[1].text) == ids and _bold(wb.heat_fig.data[0].text) == ids
    for slot, fig, info in (
        ("ilp_plan", wb.ilp_fig, wb.ilp_info),
        ("greedy_plan", wb.greedy_fig, wb.compared_info),
    ):
        plan = getattr(wb, slot)
        assert plan.problem == model.name and set(plan.device_of) == ids
        assert set(fig.data[0].customdata) == ids  # the bars are this model's ops
        assert set(fig.data[0].y) <= {"cpu", "gpu"}
        shown = f"{plan.makespan:.3f}"
        assert f"makespan {shown}" in info.value, (slot, info.value)
        assert f"makespan {plan.makespan:.2f}" in fig.layout.title.text
    assert "solving" not in wb.solve_status.value and "solved" in wb.solve_status.value
    assert wb.run_status.value.endswith("ready to run</span>") and not wb.run_button.disabled
    assert wb.rec_fig is None and wb.run_fig is None and wb.recommend_info.value == ""


def _run_runs_the_plan_on_screen(wb: Workbench) -> None:
    for choice, info in (("ILP", wb.ilp_info), (wb.algo_select.value, wb.compared_info)):
        wb.run_choice.value = choice
        wb.run_button.click()
        assert wb.wait(60)
        shown = float(re.search(r"makespan ([\d.]+)", info.value).group(1))
        predicted = float(re.search(r"vs predicted ([\d.]+) ms", wb.run_status.value).group(1))
        assert predicted == shown, (choice, wb.run_status.value, info.value)
        assert wb.run_report["predicted_ms"] == pytest.approx(wb.chosen_plan().makespan, abs=1e-3)
        # the current model's ops: those timed alone have bars of their own, the rest are
        # inside the bars of the units measured as a whole
        assert _bold(wb.run_fig.data[0].text) <= _ids(wb.problem)
        assert {e["node"] for e in wb.run_report["timeline"]} == _ids(wb.problem)
        assert not wb.trace_button.disabled


def test_three_models_in_a_row_show_only_the_current_model():
    wb = Workbench(devices=_machine(), profile_options=QUICK)
    for model in MODELS:
        wb.load_model(graph_from_problem(model))
        assert wb.wait(60)
        _only_loaded(wb, model)
        wb.profile_button.click()
        assert wb.wait(120)
        _all_of(wb, model)
        assert wb.progress.value == 100 and wb.progress.bar_style == "success"
        wb.k_slider.value = 1  # a parameter move redraws the compared Gantt
        wb.eps_slider.value = 0.5
        assert wb.wait(60)
        assert "K=1" in wb.greedy_fig.layout.title.text
        assert "ε=0.5" in wb.ilp_fig.layout.title.text
        _all_of(wb, model)
        _run_runs_the_plan_on_screen(wb)
        wb.k_slider.value = None
        wb.eps_slider.value = 0.2


def test_work_for_an_older_model_is_dropped():
    """A run and a profile still going when another model loads never reach the views."""
    first, second = MODELS[0], MODELS[1]
    union = _machine()
    slow = [ReplayDevice(d.name, d.problem, time_scale=40.0) for d in union]
    wb = Workbench(model=graph_from_problem(first), devices=slow, profile_options=QUICK)
    wb.problem = first  # the profile of the model loaded: kept, so Run runs for real
    assert wb.wait(60) and wb.graph is not None and not wb.run_button.disabled
    wb.run_button.click()  # seconds on the slowed devices
    wb.load_model(graph_from_problem(second))
    assert wb.wait(120)
    assert wb.run_report is None and wb.run_fig is None and wb.last_run is None
    assert "Run disabled: no profile" in wb.run_status.value
    assert _ids(wb.graph) == _ids(second)
    wb.profile()
    wb.load_model(graph_from_problem(first))  # cancels the profile of the second model
    assert wb.wait(120)
    assert wb.problem is None and _ids(wb.graph) == _ids(first)
    assert "cancelled" not in wb.profile_status.value and wb.heat_fig is None


def test_shipped_profiles_open_from_the_dropdown():
    wb = Workbench(devices=[])
    names = [v for _, v in wb.shipped_select.options]
    assert "h200-16core/googlenet-streams" in names and "hope/inception-v3-huawei_p40" in names
    wb.shipped_select.value = "h200-16core/googlenet-streams"
    assert wb.wait(120)
    assert wb.problem.devices == ["cuda0", "cuda0.q1", "cuda0.q2", "cuda0.q3"]
    assert "shipped: h200-16core/googlenet-streams" in wb.profile_status.value
    assert wb.run_where.value == "replay" and not wb.run_button.disabled
    rows = set(wb.ilp_fig.data[0].y)
    assert len(rows & set(wb.problem.devices)) >= 2  # the ILP's plan uses several streams
    wb.load_profile("hope/inception-v3-huawei_p40")  # by name, as Workbench(problem=...) does
    assert wb.wait(120) and wb.problem.devices == ["cpu", "gpu"]
    assert wb.shipped_select.value == "hope/inception-v3-huawei_p40"
    assert set(wb.ilp_fig.data[0].y) <= {"cpu", "gpu"}


def test_a_slot_shows_a_message_or_its_figure_and_relays_clicks():
    """A message replaces the figure (the Output emptied); the next figure is drawn whole,
    and unchanged figures are not sent again. Clicks reach every callback, whatever figure
    the slot shows."""
    import plotly.graph_objects as go

    from hetlab.widgets.figwidget import MIME, FigureSlot

    slot = FigureSlot(width=300)
    first = slot.show(go.Figure(go.Bar(x=np.array([1.0, 2.0]), customdata=["a", "b"])))
    assert slot.fig is first and slot.box.children == (slot.out,)
    spec = slot.out.outputs[0]["data"][MIME]
    assert spec["data"][0]["x"] == [1.0, 2.0] and spec["layout"]["width"] == 300
    sent = slot.out.outputs
    slot.show(go.Figure(go.Bar(x=np.array([1.0, 2.0]), customdata=["a", "b"])))
    assert slot.out.outputs is sent  # the same figure: nothing sent
    slot.message("no profile yet")
    assert slot.fig is None and slot.out.outputs == () and slot.box.children == (slot.note,)
    clicked: list[dict] = []
    slot.on_click(clicked.append)
    assert slot.box.children == (slot.note,)
    slot.show(go.Figure([go.Bar(x=[1]), go.Scatter(x=[1])]))
    assert slot.box.children == (slot.out, slot.relay)
    slot.set_range([0, 5])
    assert slot.out.outputs[0]["data"][MIME]["layout"]["xaxis"]["range"] == [0, 5]
    slot.relay._received(slot.relay, {"event": "click", "point": {"customdata": "b"}}, [])
    slot.relay._received(slot.relay, {"event": "hover"}, [])
    assert clicked == [{"customdata": "b"}]


def test_units_and_a_missing_incumbent_are_said_in_words():
    from hetlab.schedulers.base import schedule
    from hetlab.widgets.plans import info_html

    wb = Workbench(devices=[])
    panel = wb.panel("ilp_plan", "ilp")
    assert panel.controls["time_limit"].description == "time_limit (s per window)"
    assert panel.controls["node_limit"].description == "node_limit (B&B nodes per window)"
    plan = schedule(tiny_problem(), "ilp")
    plan.extra["mip_gap_max"] = "no incumbent from the ILP"
    assert "max MIP gap: no incumbent" in info_html(plan) and "%" not in info_html(plan)
    plan.extra["mip_gap_max"] = float("inf")
    assert "inf" not in info_html(plan) and "no incumbent" in info_html(plan)
