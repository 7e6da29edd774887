"""Drive the Workbench like a user: sliders, buttons, files; assert figures and state change."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hetlab.errors import HetlabError
from hetlab.widgets import Workbench, backend
from hetlab.widgets.shapes import parse_shapes
from tests._stubs import install, tiny_problem


@pytest.fixture
def stubs(monkeypatch):
    install(monkeypatch.setitem, force=True)


def _bases(fw):
    return list(fw.data[0].base) if fw.data else []


def test_k_slider_resolves_greedy_and_updates_figure_in_place(stubs):
    wb = Workbench(model="tiny")
    wb.profile_button.click()
    assert wb.problem is not None and wb.problem.devices == ["cpu0", "cl0"]
    assert wb.progress.value == 100
    assert wb.ilp_plan is not None and wb.greedy_plan is not None
    trace = wb.greedy_fig.data[0]
    before_plan, before = wb.greedy_plan, (list(trace.y), _bases(wb.greedy_fig))
    wb.k_slider.value = 1
    assert wb.greedy_plan is not before_plan
    assert wb.greedy_plan.device_of != before_plan.device_of
    assert (list(wb.greedy_fig.data[0].y), _bases(wb.greedy_fig)) != before
    assert wb.greedy_fig.data[0] is trace  # updated in place, not rebuilt
    ilp = wb.ilp_plan
    wb.nt_slider.value = 3
    assert wb.ilp_plan is not ilp and wb.ilp_plan.params["nt"] == 3
    assert "makespan" in wb.ilp_fig.layout.title.text
    assert wb.eps_slider.continuous_update is False and wb.k_slider.continuous_update is False


def test_run_adds_measured_gantt_and_error(stubs):
    wb = Workbench(model="tiny")
    assert wb.run_button.disabled and "profile" in wb.run_button.tooltip
    wb.profile_button.click()
    assert not wb.run_button.disabled
    assert not wb.run_fig.data
    wb.run_button.click()
    assert wb.run_report is not None and len(wb.run_fig.data) == 1
    assert len(wb.run_fig.data[0].base) == 8
    assert wb.run_error == pytest.approx(0.1, abs=0.02)  # the stub runs 10% slower
    assert "predicted" in wb.run_status.value and "measured" in wb.run_fig.layout.title.text


def test_saved_profile_without_its_devices_cannot_run(stubs, tmp_path):
    p = tiny_problem("phone")  # devices cpu/gpu; this "machine" has cpu0/cl0
    p.save(tmp_path / "phone.problem.json")
    wb = Workbench(problem=str(tmp_path / "phone.problem.json"))
    assert wb.problem.name == "phone" and wb.greedy_plan is not None
    assert wb.run_button.disabled
    assert "lacks the profiled device(s) cpu, gpu" in wb.run_button.tooltip
    assert "lacks" in wb.run_status.value
    wb.run_button.click()
    assert wb.run_report is None
    assert len(wb.heat_fig.data) == 2  # explorable: heatmap with the unsupported cell marked


def test_dag_colour_selector_and_devices(stubs):
    wb = Workbench(problem=tiny_problem())
    assert "cost:gpu" in wb.color_select.options
    nodes = wb.dag_fig.data[1]
    wb.color_select.value = "cost:gpu"
    assert wb.dag_fig.data[1] is nodes and "x" in list(nodes.marker.symbol)
    wb.color_select.value = "plan: ILP"
    assert isinstance(nodes.marker.color[0], str)  # device colours
    wb.color_select.value = "uprank"
    assert nodes.marker.symbol is None  # the cost view's x markers are cleared


def test_save_and_load_plans_and_profiles(stubs, tmp_path):
    wb = Workbench(problem=tiny_problem())
    wb.path_text.value = str(tmp_path)
    wb.save_profile_button.click()
    wb.save_plans_button.click()
    files = sorted(f.name for f in tmp_path.iterdir())
    assert files == ["tiny.compared.plan.json", "tiny.ilp.plan.json", "tiny.problem.json"]
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]  # no temp files left
    saved = json.loads((tmp_path / "tiny.ilp.plan.json").read_text())
    assert saved["makespan"] == pytest.approx(wb.ilp_plan.makespan)
    wb2 = Workbench()
    wb2.path_text.value = str(tmp_path)
    wb2.load_profile_button.click()
    assert wb2.problem is not None and wb2.problem.name == "tiny"
    wb2.k_slider.value = 1  # make the compared plan differ from the saved one
    wb2.load_plans_button.click()
    assert wb2.greedy_plan.device_of == wb.greedy_plan.device_of
    np.testing.assert_allclose(_bases(wb2.greedy_fig), _bases(wb.greedy_fig))


def test_bad_inputs_show_one_line_not_tracebacks(stubs, tmp_path):
    wb = Workbench()
    assert wb.profile_button.disabled and wb.profile_button.tooltip == "load a model first"
    wb.path_text.value = str(tmp_path)
    wb.load_profile_button.click()
    assert "no *.problem.json" in wb.file_status.value
    wb.shape_text.value = "input=1xAx3"
    wb.model_picker.value = "tiny"
    wb.load_button.click()
    assert "integers" in wb.model_status.value and wb.graph is None


def test_missing_pieces_disable_buttons_with_reasons(monkeypatch):
    def missing(*a, **k):
        raise backend.Missing("device discovery is not available in this build")

    monkeypatch.setattr(backend, "local_devices", missing)
    wb = Workbench(problem=tiny_problem())
    assert "device discovery" in wb.profile_status.value
    assert wb.run_button.disabled


def test_parse_shapes():
    assert parse_shapes("a=1x3x8x8, b=2") == {"a": (1, 3, 8, 8), "b": (2,)}
    assert parse_shapes("") == {}
    for bad in ("a", "a=0x3", "=1x2"):
        with pytest.raises(HetlabError):
            parse_shapes(bad)


def test_real_loader_on_a_small_onnx_file(tmp_path, monkeypatch):
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
    monkeypatch.setattr(backend, "local_devices", list)
    wb = Workbench(model=str(f), shapes="x=2x4")
    if wb.graph is None:
        pytest.skip(f"the ONNX loader is not available: {wb.model_status.value}")
    assert [n.id for n in wb.graph.nodes] == ["r1", "s1"]
    assert len(wb.dag_fig.data[1].x) == 2 and "2x4" in wb.dag_fig.data[1].text[0]
    assert wb.profile_button.disabled and "no devices" in wb.profile_button.tooltip


def test_first_display_hands_the_browser_fresh_figures_with_full_state(stubs):
    wb = Workbench(model="tiny")
    wb.profile_button.click()
    old = wb.greedy_fig
    bundle = wb._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert wb.greedy_fig is not old and wb._boxes["greedy_fig"].children == (wb.greedy_fig,)
    assert list(wb.greedy_fig.data[0].base) == list(old.data[0].base)
    assert wb.dag_fig.layout.yaxis.visible is False  # the DAG hides its meaningless y axis
    wb._repr_mimebundle_()
    fresh = wb.greedy_fig
    wb.k_slider.value = 1  # later updates go to the displayed figure
    assert wb.greedy_fig is fresh and list(fresh.data[0].base) != list(old.data[0].base)


def test_ilp_slider_moves_use_the_ilps_own_time_limit(monkeypatch):
    """A slider move re-solves in seconds: the window limit is the ILP's default (0.5 s), not
    a long one (20 s per window made a cached squeezenet profile take minutes to draw)."""
    from hetlab.schedulers.base import Param

    params = [
        Param("nt", "int", 12, 1, 2000, "subgraph size"),
        Param("time_limit", "float", None, 0.01, 1e5, "s"),
    ]
    monkeypatch.setattr(backend, "algorithm_params", lambda algo: params)
    assert Workbench()._params("ilp") == {"nt": 12}
    assert Workbench(ilp_time_limit=3.0)._params("ilp") == {"nt": 12, "time_limit": 3.0}
