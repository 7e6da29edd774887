"""``Workbench``: model -> profile -> DAG/heatmap -> what-if -> two plans -> run or replay.

Thin: every number comes from the core (``schedule``, the profiler, the executor) and every
figure from ``hetlab.viz``. The widget is shown at once: loading, profiling, solving and running
happen on worker threads (``tasks``), with progress and a Cancel button. What it shows is one
``State`` per model or profile (``states``); the public traits mirror it, so tests and
notebooks can drive it: ``wb.k_slider.value = 2`` solves the compared plan again (or takes it
from the cache) and redraws its Gantt; ``wb.wait()`` blocks until the work is done.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import ipywidgets as W
import traitlets

from hetlab.cost.problem import Problem
from hetlab.devices import is_accelerator, platform_devices
from hetlab.devices.platform import devices as local_devices
from hetlab.devices.platform import one_driver_per_gpu
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.graph.onnx_io import load
from hetlab.schedulers.base import MODULES
from hetlab.widgets import draw, nodepanel, precision
from hetlab.widgets.budgeting import Budgeting
from hetlab.widgets.controls import Controls, disable
from hetlab.widgets.figwidget import FigureSlot
from hetlab.widgets.files import Files
from hetlab.widgets.params import ParamPanel
from hetlab.widgets.plans import PlanCache
from hetlab.widgets.recommending import Recommending
from hetlab.widgets.running import Running
from hetlab.widgets.shape_text import parse_shapes
from hetlab.widgets.shipped import shipped_choices
from hetlab.widgets.solving import SLOTS, Solving
from hetlab.widgets.state import State
from hetlab.widgets.states import States
from hetlab.widgets.tasks import Lanes
from hetlab.widgets.whatif import WhatIf
from hetlab.zoo import names as zoo_names

FIGURES = ("dag_fig", "heat_fig", "ilp_fig", "greedy_fig", "rec_fig", "budget_fig", "run_fig")


class Workbench(States, Solving, Recommending, Budgeting, Files, Running, W.VBox):
    """The JupyterLab workbench. ``model``: zoo name, .onnx path or ``OpGraph``; ``problem``:
    a ``Problem``, a saved profile's path or a shipped profile's name (``hope/<name>`` or
    ``<platform>/<model>``, explorable and replayable without its devices); ``plan``/
    ``compare``: the two algorithms shown; ``devices``: the devices to profile and run on
    (default: this machine's); ``profile_options``: keywords for the profiler;
    ``ilp_time_limit``: the ILP's safety net in seconds per window (None: its own default)."""

    graph = traitlets.Any(None, allow_none=True)
    problem = traitlets.Any(None, allow_none=True)
    ilp_plan = traitlets.Any(None, allow_none=True)
    greedy_plan = traitlets.Any(None, allow_none=True)
    rec_plan = traitlets.Any(None, allow_none=True)
    run_report = traitlets.Any(None, allow_none=True)
    run_error = traitlets.Any(None, allow_none=True)

    def __init__(
        self,
        model: str | OpGraph | None = None,
        problem: Problem | str | Path | None = None,
        shapes: str = "",
        compare: str = "greedy",
        plan: str = "ilp",
        devices: list[Any] | None = None,
        profile_options: dict[str, Any] | None = None,
        ilp_time_limit: float | None = None,
        **kw: Any,
    ) -> None:
        self._ui = threading.RLock()
        self.tasks = Lanes(self._ui, on_idle=self._on_idle)
        self.plans = PlanCache()
        self.state = State(0)
        self.devices: list[Any] = []
        self.profile_options = dict(profile_options or {})
        self.ilp_time_limit = ilp_time_limit
        self._panels: dict[tuple[str, str], ParamPanel] = {}
        self._inflight: dict[str, Any] = {}
        self._publishing = 0
        c = Controls(zoo_names(), shipped_choices())
        self.c = c
        for k, v in vars(c).items():
            setattr(self, k, v)
        self.whatif = WhatIf()
        half, full = draw.GANTT_WIDTH, 2 * draw.GANTT_WIDTH + 10
        widths = {"ilp_fig": half, "greedy_fig": half, "rec_fig": full, "run_fig": full}
        widths["budget_fig"] = full
        self.slots = {n: FigureSlot(widths.get(n)) for n in FIGURES}
        self.nodes = nodepanel.NodePanel()
        self.critical_toggle = draw.critical_checkbox()
        super().__init__(children=draw.layout(self), **kw)
        self.add_class("hetlab-workbench")
        with self._ui:
            self._init_algos(plan, compare)
            self._wire()
            nodepanel.wire(self)
            self._init_devices(devices)
            c.shape_text.value = shapes
            self._new_state(lines=self.state.lines)
            if isinstance(problem, (str, Path)):
                self.load_profile(problem)
            elif problem is not None:
                self.use_problem(problem, "given")
            if model is not None:
                self.load_model(model)

    # the figures, None until they have something to show
    dag_fig = property(lambda self: self.slots["dag_fig"].fig)
    heat_fig = property(lambda self: self.slots["heat_fig"].fig)
    ilp_fig = property(lambda self: self.slots["ilp_fig"].fig)
    greedy_fig = property(lambda self: self.slots["greedy_fig"].fig)
    rec_fig = property(lambda self: self.slots["rec_fig"].fig)
    budget_fig = property(lambda self: self.slots["budget_fig"].fig)
    run_fig = property(lambda self: self.slots["run_fig"].fig)
    # the state's profile as measured or loaded (``problem`` may be its what-if copy)
    base_problem = property(lambda self: self.state.base)
    last_run = property(lambda self: self.state.last_run)

    def wait(self, timeout: float | None = 120.0) -> bool:
        """Block until loading, profiling, solving and running are done; False on timeout."""
        return self.tasks.wait(timeout)

    def select_node(self, node_id: str) -> None:
        """Show op ``node_id`` in the node panel (what a click on a DAG node or a bar does)."""
        self.nodes.select(node_id)

    def cancel(self) -> int:
        """Stop what runs in the background (a profile keeps what it measured in its cache)."""
        n = self.tasks.cancel()
        with self._ui:
            if not self.tasks.busy():  # only dropped work, which calls nothing back: tidy now
                self._on_idle()
        return n

    # --- setup -------------------------------------------------------------------------
    def _init_algos(self, plan: str, compare: str) -> None:
        names = [a for a in MODULES if a != "single"]
        ilps = [a for a in names if a.startswith("ilp")]
        self.ilp_select.options = ilps
        self.ilp_select.value = plan if plan in ilps else ilps[0]
        self.algo_select.options = names
        self.algo_select.value = compare if compare in names else "greedy"
        for slot in SLOTS:
            self._show_panel(slot)

    def _wire(self) -> None:
        c = self.c
        c.load_button.on_click(lambda _: self.load_model())
        c.profile_button.on_click(lambda _: self._profile_clicked())
        c.cancel_button.on_click(lambda _: self.cancel())
        c.run_button.on_click(lambda _: self.run())
        c.recommend_button.on_click(lambda _: self.recommend())
        c.budget_button.on_click(lambda _: self.measure_budget())
        c.budget_slider.observe(lambda _: self._redraw(Budgeting.choose_within), "value")
        c.queue_count.observe(lambda _: self._queues_changed(), "value")
        c.trace_button.on_click(lambda _: self.export_trace())
        c.save_profile_button.on_click(lambda _: self.save_profile())
        c.load_profile_button.on_click(lambda _: self.load_profile())
        c.shipped_select.observe(lambda ch: self.load_shipped(ch["new"]), "value")
        c.save_plans_button.on_click(lambda _: self.save_plans())
        c.load_plans_button.on_click(lambda _: self.load_plans())
        c.color_select.observe(lambda _: draw.dag(self), "value")
        for control, redraw in (
            (c.dag_search, draw.dag),
            (c.dag_collapse, draw.dag),
            (c.heat_group, draw.problem),
            (c.diff_toggle, draw.gantts),
            (self.critical_toggle, draw.gantts),
        ):
            control.observe(lambda _, f=redraw: self._redraw(f), "value")
        for slot, (select, _) in SLOTS.items():
            getattr(c, select).observe(lambda _, s=slot: self._algo_changed(s), "value")
        c.run_choice.observe(lambda _: self._update_run_state(), "value")
        c.run_where.observe(lambda _: self._update_run_state(), "value")
        c.device_select.observe(lambda _: self._update_profile_state(), "value")
        self.whatif.on_change(self._apply_whatif)
        self.observe(self._trait_set, ["graph", "problem", "ilp_plan", "greedy_plan"])

    def _init_devices(self, devices: list[Any] | None) -> None:
        """The devices to profile and run on: ``devices``, else this machine's (found in
        milliseconds, so the notebook can choose at once between profiling and a saved
        profile)."""
        self._local = devices is None  # this machine's: the queue count can rebuild them
        disable(self.queue_count, None if self._local else "the devices were given")
        try:
            self._set_devices(list(devices) if devices is not None else local_devices())
        except HetlabError as e:
            self._set_devices([])
            self._say("profile", f"no devices: {e}", "warn")

    def _set_devices(self, devices: list[Any]) -> None:
        """Every device is offered; one driver per GPU is selected (CUDA where it drives one)."""
        self.devices = devices
        self.device_select.options = [d.name for d in devices]
        self.device_select.value = tuple(d.name for d in one_driver_per_gpu(devices))
        precision.set_choices(self.precision_select, devices)
        self._devices_line()
        self._update_profile_state()
        self._update_run_state()

    def _devices_line(self) -> None:
        names = ", ".join(d.name for d in self.devices) or "none found"
        self._say("profile", f"devices: {names}", "info")

    def _redraw(self, draw_part: Any) -> None:
        """Redraw one part of the view (a ``draw`` function) after a view control moved."""
        with self._ui:
            draw_part(self)

    def _queues_changed(self) -> None:
        """This machine's devices again, each GPU (each accelerator that is no queue view)
        as ``queue_count`` queues, all of them selected."""
        if not self._local:
            return
        n = int(self.queue_count.value)
        roots = [d.name for d in self.devices if is_accelerator(d) and d.root is d]
        try:
            self._set_devices(platform_devices(queues=dict.fromkeys(roots, n)))
        except HetlabError as e:
            self._say("profile", str(e), "error")

    def _on_idle(self) -> None:
        disable(self.cancel_button, "nothing runs in the background")
        self._settle()
        self._settle_rec()

    def _busy(self) -> None:
        disable(self.cancel_button, None)

    def _apply_whatif(self) -> None:
        with self._ui:
            if self.state.base is not None:
                self._show_problem(self.whatif.apply(self.state.base))

    # --- loading ---------------------------------------------------------------------
    def load_model(self, model: str | OpGraph | None = None) -> None:
        """Load ``model`` (or the picker's value) with the shapes text, in the background;
        once loaded it replaces the state (a profile of another model goes with it). A load
        or a profile still going or queued is cancelled: it was for the model shown."""
        if isinstance(model, OpGraph):
            self.tasks.cancel("model")
            self.use_graph(model)
            return
        name = str(model or self.model_picker.value or "").strip()
        if not name:
            self._say("model", "type a zoo name or a path to an .onnx file", "warn")
            return
        try:
            shapes = parse_shapes(self.shape_text.value)
        except HetlabError as e:
            self._say("model", str(e), "error")
            return
        self.model_picker.value = name
        with self._ui:
            self.tasks.cancel("model")
            self._say("model", f"loading {name}...")
            self.tasks.submit(
                "model",
                lambda task: load(name, shapes or None),
                self._loaded,
                lambda e: self._say("model", draw.error_text(e), "error"),
            )
            self._busy()

    def _loaded(self, g: OpGraph) -> None:
        self.use_graph(g)
