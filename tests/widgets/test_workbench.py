"""Drive the Workbench like a user: sliders, buttons, files; assert figures and state change.

The devices are fake ones replaying a hand-made problem (``hetlab.devices.replay``), so the real
profiler, schedulers and executor run everywhere, on worker threads; ``wb.wait()`` joins them.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from hetlab.cost.datasets import load_hope_profile
from hetlab.devices.replay import ReplayDevice, graph_from_problem, replay_devices
from hetlab.errors import HetlabError
from hetlab.schedulers.base import MODULES, algorithm
from hetlab.widgets import Workbench, solving
from hetlab.widgets.params import Auto
from hetlab.widgets.shape_text import parse_shapes
from tests.tiny import tiny_problem

QUICK = {"comm": False, "cache": False, "repeat": 3, "warmup": 1, "seconds": 0.01}


def _bases(fw):
    return list(fw.data[0].base) if fw.data else []


def _tiny_bench(**kw):
    p = tiny_problem()
    kw.setdefault("devices", replay_devices(p))
    return Workbench(model=graph_from_problem(p), profile_options=QUICK, **kw)


def _phone(**kw):
    return Workbench(problem=load_hope_profile("inception-v3-huawei_p40"), devices=[], **kw)


def test_profile_runs_off_the_kernel_thread_then_both_plans_are_solved():
    p = tiny_problem()
    wb = _tiny_bench(devices=[ReplayDevice(d, p, time_scale=5.0) for d in p.devices])
    wb.profile_button.click()
    # the click has returned with the profile still running on a worker
    assert wb.problem is None and not wb.cancel_button.disabled
    assert wb.wait(120)
    assert wb.problem is not None and wb.problem.devices == ["cpu", "gpu"]
    # the bar stays full; the profiler's last step ("calibrating...") does not stay beside it
    assert wb.progress.value == 100 and wb.progress_text.value == ""
    assert wb.ilp_plan is not None and wb.greedy_plan is not None
    assert wb.cancel_button.disabled  # nothing left to cancel


def test_cancel_stops_a_profile():
    p = tiny_problem()
    slow = [ReplayDevice(d, p, time_scale=50.0) for d in p.devices]  # ~0.3 s per measurement
    wb = _tiny_bench(devices=slow)
    wb.profile()
    deadline = time.time() + 30
    while "cpu" not in wb.progress_text.value and time.time() < deadline:
        time.sleep(0.05)  # the bar carries the profiler's message
    assert not wb.cancel_button.disabled
    wb.cancel_button.click()
    assert wb.wait(30)
    assert wb.problem is None and "cancelled" in wb.profile_status.value
    assert wb.progress.value < 100 and wb.progress.bar_style == "warning"


def test_k_slider_resolves_greedy_and_redraws_its_figure():
    wb = _phone(ilp_time_limit=0.05)
    assert wb.wait(60)
    trace = wb.greedy_fig.data[0]
    before_plan, before = wb.greedy_plan, (list(trace.y), _bases(wb.greedy_fig))
    wb.k_slider.value = 1
    assert wb.wait(60)
    assert wb.greedy_plan is not before_plan
    assert wb.greedy_plan.device_of != before_plan.device_of
    assert (list(wb.greedy_fig.data[0].y), _bases(wb.greedy_fig)) != before
    ilp = wb.ilp_plan
    wb.nt_slider.value = 3
    assert wb.wait(60)
    assert wb.ilp_plan is not ilp and wb.ilp_plan.params["nt"] == 3
    assert "makespan" in wb.ilp_fig.layout.title.text
    assert wb.eps_slider.continuous_update is False and wb.k_slider.continuous_update is False


def test_plans_are_cached_and_a_move_back_redraws_from_the_cache(monkeypatch):
    calls = []
    real = solving.solve
    monkeypatch.setattr(solving, "solve", lambda *a: calls.append(a[1]) or real(*a))
    wb = _phone(ilp_time_limit=0.05)
    assert wb.wait(60)
    assert sorted(calls) == ["greedy", "ilp"]  # loading a profile solves each plan once
    first = wb.greedy_plan
    wb.k_slider.value = 2
    assert wb.wait(60) and wb.greedy_plan is not first
    wb.k_slider.value = None  # back to greedy's own K: the cached plan, shown at once
    assert wb.greedy_plan is first
    assert not wb.tasks.busy() and calls.count("greedy") == 2


def test_a_newer_move_supersedes_an_older_solve():
    wb = _phone(ilp_time_limit=0.05)
    for nt in (4, 6, 8, 10):
        wb.nt_slider.value = nt  # no wait: each move supersedes the one before
    assert wb.wait(120)
    assert wb.ilp_plan.params["nt"] == 10 and wb.nt_slider.value == 10


def test_parameter_panels_come_from_the_registry():
    wb = Workbench(problem=tiny_problem(), devices=[])
    for algo in MODULES:
        if algo == "single":
            continue
        panel = wb.panel("greedy_plan", algo)
        params = algorithm(algo).params
        assert set(panel.controls) == {p.name for p in params}
        for p in params:
            w = panel.controls[p.name]
            assert w.value == p.default, (algo, p.name)
            assert isinstance(w, Auto) == (p.default is None and p.kind != "bool")
    assert wb.compared_params.children == (wb.panel("greedy_plan"),)
    wb.algo_select.value = "heft"  # heft has no K: greedy's controls leave the screen
    assert wb.compared_params.children == (wb.panel("greedy_plan", "heft"),)
    assert wb.k_slider not in wb.compared_params.children[0].children
    assert wb.wait(60) and wb.greedy_plan.algo == "heft"


def test_plan_info_line_shows_how_the_plan_was_decided():
    wb = _phone(ilp_time_limit=0.05)
    assert wb.wait(60)
    assert "subgraphs" in wb.ilp_info.value and "makespan" in wb.compared_info.value


def test_saved_profile_without_its_devices_is_replayed_and_labelled(tmp_path):
    p = tiny_problem("phone")  # devices cpu/gpu; this "machine" has none
    p.save(tmp_path / "phone.problem.json")
    wb = Workbench(problem=str(tmp_path / "phone.problem.json"), devices=[])
    assert wb.wait(60) and wb.problem.name == "phone" and wb.greedy_plan is not None
    assert wb.run_where.value == "replay" and not wb.run_button.disabled
    wb.run_where.value = "this machine"
    assert wb.run_button.disabled
    assert "lacks the profiled device(s) cpu, gpu" in wb.run_button.tooltip
    assert "lacks" in wb.run_status.value
    wb.run_where.value = "replay"
    wb.run_button.click()
    assert wb.wait(60) and wb.run_report is not None
    assert "not a measurement" in wb.run_fig.layout.title.text
    assert "replayed" in wb.run_status.value and "measured" not in wb.run_status.value
    assert "virtual clock" in wb.run_status.value and "threads took" in wb.run_status.value
    assert wb.run_report["replay"]["clock"] == "virtual"  # the report says what it is
    assert "replayed" in wb.run_fig.layout.title.text
    # one prediction: the status line's is the report's, as the measured panel's is
    pred = wb.run_report["predicted_ms"]
    assert f"vs predicted {pred:.3f} ms" in wb.run_status.value
    assert len(wb.heat_fig.data) == 2  # explorable: heatmap with the unsupported cell marked
    out = wb.export_trace(tmp_path / "run.trace.json")
    events = json.loads(out.read_text())
    assert any(e.get("ph") == "X" for e in events.get("traceEvents", events))


def test_run_adds_measured_gantt_and_error():
    wb = _tiny_bench()
    assert wb.run_button.disabled and "profile" in wb.run_button.tooltip
    wb.profile_button.click()
    assert wb.wait(60)
    assert not wb.run_button.disabled and wb.run_where.value == "this machine"
    assert wb.run_fig is None and wb.trace_button.disabled  # no empty figure is ever shown
    wb.run_button.click()
    assert wb.wait(60)
    assert wb.run_report is not None and len(wb.run_fig.data) >= 1
    # the prediction on top (8 op bars), the measurement below: each op once, as its own
    # bar or inside its unit's
    assert len(wb.run_fig.data[0].base) == 8 and wb.run_fig.data[0].yaxis == "y"
    own = [t for t in wb.run_fig.data if t.name == "measured" and t.yaxis == "y2"]
    units = [t for t in wb.run_fig.data if t.name == "measured units"]
    inside = sum(int(s.split(" · ")[1].split()[0]) for t in units for s in t.text)
    assert sum(len(t.base) for t in own) + inside == 8
    assert math.isfinite(wb.run_error)  # its size is the host's timing: benchmarks judge it
    assert "predicted" in wb.run_status.value and "measured" in wb.run_fig.layout.title.text
    assert not wb.trace_button.disabled


def test_what_if_scales_the_profile_and_says_so():
    wb = Workbench(problem=tiny_problem(), devices=[])
    assert wb.wait(60)
    base, plan = wb.problem, wb.ilp_plan
    wb.whatif.speed["cpu"].value = 10.0
    assert wb.wait(60)
    assert wb.problem is not base and wb.base_problem is base
    assert wb.problem.extra["what_if"]["speed"]["cpu"] == 10.0
    assert wb.problem.nodes[0].cost["cpu"] == pytest.approx(base.nodes[0].cost["cpu"] / 10)
    assert "WHAT-IF" in wb.whatif_banner.value and "what-if" in wb.heat_fig.layout.title.text
    assert "what-if" in wb.ilp_fig.layout.title.text and "what-if" in wb.dag_fig.layout.title.text
    assert wb.ilp_plan.makespan < plan.makespan
    wb.run_where.value = "this machine"
    assert "what-if" in wb.run_button.tooltip
    wb.whatif.reset()
    assert wb.problem is base and wb.ilp_plan is plan and wb.whatif_banner.value == ""


def test_dag_colour_selector_and_devices():
    wb = Workbench(problem=tiny_problem(), devices=[])
    assert wb.wait(60)
    assert "cost:gpu" in wb.color_select.options
    wb.color_select.value = "cost:gpu"
    assert "x" in list(wb.dag_fig.data[1].marker.symbol)
    wb.color_select.value = "plan: ILP"
    assert isinstance(wb.dag_fig.data[1].marker.color[0], str)  # device colours
    wb.color_select.value = "level"
    assert wb.dag_fig.data[1].marker.symbol is None  # the cost view's x markers are gone


def test_save_and_load_plans_and_profiles(tmp_path):
    wb = Workbench(problem=tiny_problem(), devices=[])
    assert wb.wait(60)
    wb.path_text.value = str(tmp_path)
    wb.save_profile_button.click()
    wb.save_plans_button.click()
    files = sorted(f.name for f in tmp_path.iterdir())
    assert files == ["tiny.compared.plan.json", "tiny.ilp.plan.json", "tiny.problem.json"]
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]  # no temp files left
    saved = json.loads((tmp_path / "tiny.ilp.plan.json").read_text())
    assert saved["makespan"] == pytest.approx(wb.ilp_plan.makespan)
    wb2 = Workbench(devices=[])
    wb2.path_text.value = str(tmp_path)
    wb2.load_profile_button.click()
    assert wb2.problem is not None and wb2.problem.name == "tiny"
    wb2.k_slider.value = 1  # a solve still running when the saved plans load
    wb2.load_plans_button.click()
    assert wb2.wait(60)
    assert wb2.greedy_plan.device_of == wb.greedy_plan.device_of
    np.testing.assert_allclose(_bases(wb2.greedy_fig), _bases(wb.greedy_fig))


def test_bad_inputs_show_one_line_not_tracebacks(tmp_path):
    wb = Workbench(devices=[])
    assert wb.profile_button.disabled and wb.profile_button.tooltip == "load a model first"
    wb.path_text.value = str(tmp_path)
    wb.load_profile_button.click()
    assert "no *.problem.json" in wb.file_status.value
    wb.shape_text.value = "input=1xAx3"
    wb.model_picker.value = "tiny"
    wb.load_button.click()
    assert "integers" in wb.model_status.value and wb.graph is None
    wb.shape_text.value = ""
    wb.load_model("no_such_model")
    assert wb.wait(60)
    assert "Traceback" not in wb.model_status.value and "no_such_model" in wb.model_status.value


def test_without_devices_profile_and_real_runs_are_disabled_with_reasons():
    wb = Workbench(model=graph_from_problem(tiny_problem()), devices=[])
    assert wb.profile_button.disabled and "no devices" in wb.profile_button.tooltip
    wb.profile()  # called anyway: one line, no traceback
    assert wb.wait(60) and "cannot profile" in wb.profile_status.value


def test_parse_shapes():
    assert parse_shapes("a=1x3x8x8, b=2") == {"a": (1, 3, 8, 8), "b": (2,)}
    assert parse_shapes("") == {}
    for bad in ("a", "a=0x3", "=1x2"):
        with pytest.raises(HetlabError):
            parse_shapes(bad)


def test_real_loader_on_a_small_onnx_file(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="r1"),
        helper.make_node("Sigmoid", ["h"], ["y"], name="s1"),
    ]
    m = helper.make_model(
        helper.make_graph(nodes, "two", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]
    )
    f = tmp_path / "two.onnx"
    onnx.save(m, f)
    wb = Workbench(model=str(f), shapes="x=2x4", devices=[])
    assert wb.wait(60)
    assert [n.id for n in wb.graph.nodes] == ["r1", "s1"]
    assert len(wb.dag_fig.data[1].x) == 2 and "2x4" in wb.dag_fig.data[1].text[0]
    assert wb.profile_button.disabled and "no devices" in wb.profile_button.tooltip


def test_a_view_created_late_draws_the_figures_current_state():
    """A figure is its slot's Output state, the plotly bundle of the figure shown now: a
    browser view created after any update (a cell scrolled back into view, a page reloaded)
    draws the current figure, as plain JSON lists."""
    from hetlab.widgets.figwidget import MIME

    wb = _phone(ilp_time_limit=0.05)
    slot = wb.slots["greedy_fig"]
    assert slot.box.children == (slot.note,)  # a message
    assert wb.wait(60)
    assert slot.box.children == (slot.out, slot.relay)  # the figure and its click relay
    before = list(wb.greedy_fig.data[0].base)
    bundle = wb._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    wb.k_slider.value = 1
    assert wb.wait(60)
    shown = slot.out.outputs[0]["data"][MIME]
    assert len(slot.out.outputs) == 1 and list(wb.greedy_fig.data[0].base) != before
    assert shown["data"][0]["base"] == list(wb.greedy_fig.data[0].base)
    assert shown["layout"]["title"]["text"] == wb.greedy_fig.layout.title.text
    assert slot.out.layout.min_height == f"{wb.greedy_fig.layout.height}px"
    assert wb.dag_fig.layout.yaxis.visible is False  # the DAG hides its meaningless y axis


def test_ilp_time_limit_defaults_to_the_params_and_can_be_set():
    """Defaults come from ``Param`` alone; ``ilp_time_limit`` overrides the window limit."""
    default = {p.name: p.default for p in algorithm("ilp").params}
    assert Workbench(devices=[])._params("ilp_plan") == default
    assert Workbench(devices=[], ilp_time_limit=3.0)._params("ilp_plan")["time_limit"] == 3.0


def test_info_line_says_when_something_other_than_the_ilp_decided():
    from hetlab.schedulers.base import schedule
    from hetlab.widgets.plans import info_html

    p = load_hope_profile("inception-v3-huawei_p40")
    plan = schedule(p, "ilp", time_limit=0.05)
    plan.extra.update(subgraphs=[["a"], ["b", "c"]], decided_by="search", windows_limit=2)
    html = info_html(plan)
    assert "subgraphs: 2" in html and "hit the limit: 2" in html
    assert "<b style='color:#9a6700'>decided by: search</b>" in html
    plan.extra["decided_by"] = "ilp"
    assert "<b" not in info_html(plan).replace("<b style", "")  # the ILP's own plan: plain


def test_auto_names_the_algorithms_own_choice_for_the_problem():
    from hetlab.schedulers.base import defaults

    wb = _phone(ilp_time_limit=0.05)
    k = defaults("greedy", wb.problem)["k"]
    assert wb.k_slider.value is None and wb.k_slider.auto.description == f"auto ({k})"
    assert wb.wait(60) and wb.greedy_plan.params["k"] == k


def test_a_streams_profile_replays_a_row_per_stream_and_recommends_a_plan():
    """A GPU run as streams (queue views of one device): the plans' Gantts have a row per
    stream used, Recommend times the candidates on the replay, and Run can run its plan."""
    from hetlab.cost.queues import with_queues

    p = with_queues(tiny_problem(), {"gpu": ["gpu.q1", "gpu.q2"]}, 0.01, 1.1)
    wb = Workbench(problem=p, devices=[], plan="ilp")
    assert wb.wait()
    assert wb.run_where.value == "replay"
    assert "recommended" not in wb.run_choice.options
    wb.recommend()
    assert wb.wait()
    rec = wb.rec_plan.extra["recommended"]
    assert "measured" not in rec  # a replay times nothing on this host's threads
    assert rec["basis"] in ("replayed", "prediction") and rec["chosen"] in rec["replayed"]
    if rec["basis"] == "prediction":  # a replay beyond its tolerance: said in one line
        assert "ranked by prediction" in wb.recommend_info.value
    else:
        assert "replayed (virtual clock)" in wb.recommend_info.value
    assert wb.slots["rec_fig"].fig is not None
    assert rec["chosen"] in wb.recommend_info.value
    rows = {a.device for a in wb.rec_plan.assignments}
    assert set(wb.slots["rec_fig"].fig.data[0].y) >= rows  # one Gantt row per device used
    wb.run_choice.value = "recommended"
    wb.run()
    assert wb.wait()
    assert wb.run_report is not None and set(wb.run_report["devices"]) == rows
    wb.problem = tiny_problem()  # a new profile drops the recommendation
    assert wb.rec_plan is None and "recommended" not in wb.run_choice.options


def test_view_controls_find_ops_collapse_group_and_mark_what_moved():
    wb = _phone()
    assert wb.wait(120)
    assert wb.color_select.value == "op" and "best" in wb.color_select.options
    wb.dag_search.value = "Conv2d_1a"
    assert "matches" in [t.name for t in wb.dag_fig.data]
    wb.dag_collapse.value = 1
    assert "by scope" in wb.dag_fig.layout.title.text
    wb.dag_collapse.value = None
    assert "by scope" not in wb.dag_fig.layout.title.text
    wb.heat_group.value = None
    columns = len(wb.heat_fig.data[0].x)
    wb.heat_group.value = "op"
    assert len(wb.heat_fig.data[0].x) < columns
    assert "moved" not in [t.name for t in wb.ilp_fig.data]
    wb.diff_toggle.value = True
    moved = {n for n, (a, b) in _moved_ops(wb).items() if a != b}
    names = [t.name for t in wb.ilp_fig.data]
    assert ("moved" in names) == bool(moved)


def _moved_ops(wb):
    from hetlab.viz import moved_ops

    return moved_ops(wb.greedy_plan, wb.ilp_plan)


def test_run_status_is_never_stale():
    from hetlab.widgets.runs import status_line

    a, b = object(), object()
    done = ("measured 1.000 ms vs predicted 1.000 ms (+0.0%)", "ok")
    assert status_line(done, None, a, a) == done
    text, kind = status_line(done, None, a, b)  # the plan on screen moved on
    assert text.startswith("last run, of a plan no longer on screen: measured") and kind == "info"
    assert status_line(done, "no profile", a, a) == ("Run disabled: no profile", "warn")
    assert status_line(("running...", "info"), "no profile", a, a) == ("running...", "info")
    assert status_line(("", "info"), None, None, a) == ("ready to run", "info")
