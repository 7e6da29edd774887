"""The widgets of the workbench, built once (no logic here; ``workbench.py`` wires them)."""

from __future__ import annotations

from html import escape

import ipywidgets as W

WIDE = W.Layout(width="auto")


def _status() -> W.HTML:
    return W.HTML(value="", layout=W.Layout(min_height="1.4em"))


def section(title: str) -> W.HTML:
    return W.HTML(f"<h4 style='margin:8px 0 2px 0'>{title}</h4>")


class Controls:
    """Plain attribute bag of every control; the workbench exposes them as attributes."""

    def __init__(self, zoo: list[str], shipped: list[tuple[str, str]]) -> None:
        self._model_and_profile(zoo)
        self._schedule()
        self._run_and_files(shipped)

    def _model_and_profile(self, zoo: list[str]) -> None:
        self.model_picker = W.Combobox(
            options=zoo,
            placeholder="zoo name or path/to/model.onnx",
            description="model",
            ensure_option=False,
            layout=W.Layout(width="320px"),
        )
        self.shape_text = W.Text(
            placeholder="input=1x3x224x224 (symbolic dims)",
            description="shapes",
            layout=W.Layout(width="300px"),
        )
        self.load_button = W.Button(description="Load model", icon="folder-open")
        self.model_status = _status()

        self.device_select = W.SelectMultiple(
            options=[], description="devices", rows=4, layout=W.Layout(width="320px")
        )
        self.queue_count = W.BoundedIntText(
            value=1,
            min=1,
            max=8,
            description="queues per GPU",
            tooltip="each GPU as this many queues (CUDA streams, OpenCL queues): cuda0, cuda0.q1 ...",
            style={"description_width": "initial"},
            layout=W.Layout(width="160px"),
        )
        self.precision_select = W.Dropdown(
            options=["fp32"],
            value="fp32",
            description="precision",
            layout=W.Layout(width="160px"),
        )
        self.profile_button = W.Button(description="Profile", icon="stopwatch", button_style="info")
        self.progress = W.IntProgress(
            value=0, min=0, max=100, description="", layout=W.Layout(width="200px")
        )
        self.profile_status = _status()

        self.color_select = W.Dropdown(
            options=["op", "level", "best"],
            value="op",
            description="colour",
            layout=W.Layout(width="260px"),
        )
        self._views()

        self.cancel_button = W.Button(
            description="Cancel", icon="stop", disabled=True, layout=W.Layout(width="100px")
        )
        self.progress_text = W.HTML(value="", layout=W.Layout(width="420px"))

    def _views(self) -> None:
        """How the DAG, the heatmap and the two plans are drawn."""
        self.dag_search = W.Text(
            placeholder="find ops (a name fragment)",
            description="find",
            continuous_update=False,
            layout=W.Layout(width="260px"),
        )
        self.dag_collapse = W.Dropdown(
            options=[("auto", "auto"), ("every op", None), ("scopes, depth 1", 1)]
            + [(f"scopes, depth {d}", d) for d in (2, 3)],
            value="auto",
            description="show",
            layout=W.Layout(width="220px"),
        )
        self.heat_group = W.Dropdown(
            options=[("auto", "auto"), ("one column per op", None), ("by op type", "op")]
            + [("by name scope", "scope")],
            value="auto",
            description="heatmap",
            layout=W.Layout(width="260px"),
        )
        self.diff_toggle = W.Checkbox(
            value=False,
            description="mark the ops the two plans place differently",
            indent=False,
            layout=W.Layout(width="auto"),
        )

    def _schedule(self) -> None:
        pick = {"style": {"description_width": "initial"}, "layout": W.Layout(width="220px")}
        self.ilp_select = W.Dropdown(options=["ilp"], value="ilp", description="plan", **pick)
        self.algo_select = W.Dropdown(
            options=["greedy"], value="greedy", description="compare with", **pick
        )
        self.ilp_params = W.Box()
        self.compared_params = W.Box()
        self.ilp_info = W.HTML()
        self.compared_info = W.HTML()
        self.solve_status = _status()
        self.params_status = _status()  # parameters reset on a model switch, the move budget
        self.recommend_button = W.Button(
            description="Recommend",
            icon="trophy",
            tooltip="time the candidate plans (the scheduler's, greedy, heft, each device alone) "
            "on the devices, or on the replay, and keep the fastest",
        )
        self.recommend_info = W.HTML()
        self.budget_button = W.Button(
            description="Measure precisions",
            icon="balance-scale",
            tooltip="profile and time the candidate plans at every precision the devices "
            "declare, each checked against onnxruntime; the slider then picks among them",
            layout=W.Layout(width="190px"),
        )
        self.budget_slider = W.FloatLogSlider(
            value=1e-3,
            base=10,
            min=-6,
            max=-1,
            step=0.25,
            description="error budget",
            readout_format=".1e",
            continuous_update=True,
            style={"description_width": "initial"},
            layout=W.Layout(width="360px"),
        )
        self.whatif_banner = W.HTML()

    def _run_and_files(self, shipped: list[tuple[str, str]]) -> None:
        self.run_choice = W.ToggleButtons(
            options=["ILP", "compared"],
            value="ILP",
            description="run plan",
            style={"button_width": "120px"},
        )
        self.run_where = W.ToggleButtons(
            options=["this machine", "replay"],
            value="this machine",
            description="on",
            tooltips=[
                "the devices of this machine: a measurement",
                "fake devices that replay the profile's costs: no measurement",
            ],
            style={"button_width": "110px", "description_width": "30px"},
        )
        self.repeat = W.BoundedIntText(
            value=5, min=1, max=100, description="repeat", layout=W.Layout(width="140px")
        )
        self.run_button = W.Button(description="Run", icon="play", button_style="success")
        self.trace_button = W.Button(
            description="Perfetto trace",
            icon="download",
            disabled=True,
            tooltip="run a plan first",
        )
        self.run_status = _status()

        self.path_text = W.Text(
            value="hetlab-work", description="folder", layout=W.Layout(width="300px")
        )
        self.save_profile_button = W.Button(description="Save profile", icon="save")
        self.load_profile_button = W.Button(
            description="Load profile",
            icon="upload",
            tooltip="the folder's first *.problem.json",
        )
        self.shipped_select = W.Dropdown(
            options=shipped,
            value="",
            description="or open",
            tooltip="a profile that ships with hetlab: HOPE's phones, or a machine hetlab measured",
            layout=W.Layout(width="330px"),
        )
        self.save_plans_button = W.Button(description="Save plans", icon="save")
        self.load_plans_button = W.Button(description="Load plans", icon="upload")
        self.file_status = _status()


def disable(button: W.Button, reason: str | None) -> None:
    """Enable ``button`` when ``reason`` is None, else disable it with ``reason`` as tooltip."""
    button.disabled = reason is not None
    button.tooltip = reason or ""


COLORS = {"info": "#333", "ok": "#1a7f37", "warn": "#9a6700", "error": "#cf222e"}


def say(html: W.HTML, text: str, kind: str = "info") -> None:
    html.value = f"<span style='color:{COLORS[kind]}'>{escape(text)}</span>" if text else ""
