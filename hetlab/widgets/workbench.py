"""``Workbench``: model -> profile -> DAG/heatmap -> ILP vs another algorithm -> run for real.

Thin: every number comes from the core (``schedule``, ``simulate``, the profiler, the
executor) and every figure from ``hetlab.viz``. State is traitlets, so tests and notebooks
can drive it: ``wb.k_slider.value = 2`` re-solves the compared plan and redraws its Gantt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets as W
import traitlets

from hetlab.errors import HetlabError
from hetlab.viz import dag_figure, gantt_figure, heatmap_figure
from hetlab.widgets import backend
from hetlab.widgets.controls import Controls, disable, say, section
from hetlab.widgets.figwidget import new_widget, no_colorbar, placeholder, update_in_place
from hetlab.widgets.shapes import parse_shapes

FIGURES = ("dag_fig", "heat_fig", "ilp_fig", "greedy_fig", "run_fig")
GANTT_WIDTH = 470  # px: two side by side fit a 1000 px notebook column
SLIDER_PARAMS = {"epsilon": "eps_slider", "nt": "nt_slider", "k": "k_slider"}


class Workbench(W.VBox):
    """The JupyterLab workbench. ``model``: zoo name or .onnx path; ``problem``: a ``Problem``
    or a path to a saved profile (explorable without its devices; Run then says why not);
    ``ilp_time_limit``: seconds per subgraph ILP (None: the ILP's default, 0.5 s, so that a
    slider move redraws in seconds)."""

    graph = traitlets.Any(None, allow_none=True)
    problem = traitlets.Any(None, allow_none=True)
    ilp_plan = traitlets.Any(None, allow_none=True)
    greedy_plan = traitlets.Any(None, allow_none=True)
    run_report = traitlets.Any(None, allow_none=True)
    run_error = traitlets.Any(None, allow_none=True)

    def __init__(
        self,
        model: str | None = None,
        problem: Any = None,
        shapes: str = "",
        compare: str = "greedy",
        ilp_time_limit: float | None = None,
        **kw: Any,
    ) -> None:
        c = Controls(backend.zoo_names())
        self.c = c
        for k, v in vars(c).items():
            setattr(self, k, v)
        self.ilp_time_limit = ilp_time_limit
        self._devices: list[Any] = []
        self.dag_fig = new_widget(height=380)
        self.heat_fig = new_widget(height=160)
        self.ilp_fig = new_widget(height=220)
        self.greedy_fig = new_widget(height=220)
        self.run_fig = new_widget(height=220)
        for f in (self.ilp_fig, self.greedy_fig):
            f.layout.width = GANTT_WIDTH
        half = W.Layout(width=f"{GANTT_WIDTH + 10}px")
        self._boxes = {
            name: W.Box(
                [getattr(self, name)],
                layout=half if name in ("ilp_fig", "greedy_fig") else W.Layout(),
            )
            for name in FIGURES
        }
        self._shown = False
        bx = self._boxes
        super().__init__(
            children=[
                W.HTML("<h3 style='margin:4px 0'>hetlab workbench</h3>"),
                section("1 · model"),
                W.HBox([c.model_picker, c.shape_text, c.load_button]),
                c.model_status,
                section("2 · devices and profile"),
                W.HBox([c.device_select, W.VBox([c.profile_button, c.progress])]),
                c.profile_status,
                section("3 · operator DAG"),
                c.color_select,
                bx["dag_fig"],
                bx["heat_fig"],
                section("4 · schedule"),
                W.HBox(
                    [c.algo_select, c.eps_slider, c.nt_slider, c.k_slider],
                    layout=W.Layout(flex_flow="row wrap"),
                ),
                c.solve_status,
                W.HBox([bx["ilp_fig"], bx["greedy_fig"]]),
                section("5 · run for real"),
                W.HBox([c.run_choice, c.repeat, c.run_button]),
                c.run_status,
                bx["run_fig"],
                section("6 · files"),
                W.HBox(
                    [
                        c.path_text,
                        c.save_profile_button,
                        c.load_profile_button,
                        c.save_plans_button,
                        c.load_plans_button,
                    ],
                    layout=W.Layout(flex_flow="row wrap"),
                ),
                c.file_status,
            ],
            **kw,
        )
        self._init_algos(compare)
        self._wire()
        self._init_devices()
        placeholder(self.run_fig, "press Run to measure the chosen plan on this machine")
        if shapes:
            c.shape_text.value = shapes
        if isinstance(problem, (str, Path)):
            self.load_profile(problem)
        elif problem is not None:
            self.problem = problem
        if model:
            c.model_picker.value = str(model)
            self.load_model()
        self._refresh_all()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """On first display, swap each figure for a fresh FigureWidget holding its current
        state: updates sent before the browser has loaded a figure's module can be lost,
        which leaves a blank plot (seen with plotly 7.1 in JupyterLab 4.6)."""
        if not self._shown:
            self._shown = True
            for name in FIGURES:
                fresh = new_widget(getattr(self, name).to_dict())
                setattr(self, name, fresh)
                self._boxes[name].children = (fresh,)
        return super()._repr_mimebundle_(**kwargs)

    # --- setup -------------------------------------------------------------------------
    def _init_algos(self, compare: str) -> None:
        from hetlab.schedulers.base import MODULES

        names = [a for a in MODULES if a not in ("ilp", "single")]
        self.algo_select.options = names
        self.algo_select.value = compare if compare in names else "greedy"
        for algo in ("ilp", compare):
            try:
                for p in backend.algorithm_params(algo):
                    s = getattr(self, SLIDER_PARAMS.get(p.name, ""), None)
                    if s is not None:
                        with s.hold_trait_notifications():
                            if p.low is not None:
                                s.min = p.low
                            if p.high is not None:
                                s.max = min(p.high, s.max * 4)
                            if p.default is not None:
                                s.value = p.default
            except HetlabError:
                pass

    def _wire(self) -> None:
        c = self.c
        c.load_button.on_click(lambda _: self.load_model())
        c.profile_button.on_click(lambda _: self.profile())
        c.run_button.on_click(lambda _: self.run())
        c.save_profile_button.on_click(lambda _: self.save_profile())
        c.load_profile_button.on_click(lambda _: self.load_profile())
        c.save_plans_button.on_click(lambda _: self.save_plans())
        c.load_plans_button.on_click(lambda _: self.load_plans())
        c.color_select.observe(lambda _: self._draw_dag(), "value")
        c.eps_slider.observe(lambda _: self.solve_ilp(), "value")
        c.nt_slider.observe(lambda _: self.solve_ilp(), "value")
        c.k_slider.observe(lambda _: self.solve_compared(), "value")
        c.algo_select.observe(lambda _: self.solve_compared(), "value")
        c.run_choice.observe(lambda _: self._update_run_state(), "value")
        c.device_select.observe(lambda _: self._update_profile_state(), "value")

    def _init_devices(self) -> None:
        try:
            self._devices = backend.local_devices()
            names = [d.name for d in self._devices]
            self.device_select.options = names
            self.device_select.value = tuple(names)
        except HetlabError as e:
            self._devices = []
            say(self.profile_status, str(e), "warn")

    # --- state changes --------------------------------------------------------------
    @traitlets.observe("graph")
    def _on_graph(self, change: dict) -> None:
        self._draw_dag()
        self._update_profile_state()
        self._update_run_state()

    @traitlets.observe("problem")
    def _on_problem(self, change: dict) -> None:
        p = self.problem
        if (
            p is not None
            and self.graph is not None
            and {n.id for n in p.nodes} != {n.id for n in self.graph.nodes}
        ):
            self.graph = None  # a profile of another model: explore the profile alone
        opts = ["uprank", "op"] + ([f"cost:{d}" for d in p.devices] if p is not None else [])
        opts += ["plan: ILP", "plan: compared"] if p is not None else []
        cur = self.color_select.value
        self.color_select.options = opts
        self.color_select.value = cur if cur in opts else "uprank"
        if p is None:
            placeholder(self.heat_fig, "no profile yet: press Profile, or load a saved profile")
        else:
            update_in_place(self.heat_fig, heatmap_figure(p))
        self._draw_dag()
        self.solve_ilp()
        self.solve_compared()

    @traitlets.observe("ilp_plan", "greedy_plan")
    def _on_plan(self, change: dict) -> None:
        self._draw_gantts()
        if self.color_select.value.startswith("plan:"):
            self._draw_dag()
        self._update_run_state()

    def _refresh_all(self) -> None:
        if self.problem is None:
            self._on_problem({})
        self._draw_dag()
        self._update_profile_state()
        self._update_run_state()

    # --- drawing ---------------------------------------------------------------------
    def _draw_dag(self) -> None:
        obj = self.graph if self.graph is not None else self.problem
        if obj is None:
            placeholder(self.dag_fig, "load a model or a profile to see its operator DAG")
            return
        color: Any = self.color_select.value
        if color.startswith("plan:"):
            plan = self.ilp_plan if color == "plan: ILP" else self.greedy_plan
            color = plan if plan is not None else "uprank"
        try:
            update_in_place(self.dag_fig, dag_figure(obj, color=color, problem=self.problem))
        except HetlabError as e:
            say(self.model_status, str(e), "error")

    def _draw_gantts(self) -> None:
        plans = [
            (self.ilp_fig, self.ilp_plan, "ILP"),
            (self.greedy_fig, self.greedy_plan, self.algo_select.value),
        ]
        end = max((p.makespan for _, p, _ in plans if p is not None), default=0.0)
        for fig, plan, name in plans:
            if plan is None:
                continue
            shown = {"epsilon": "ε", "nt": "NT", "k": "K"}  # the sliders' parameters, in the title
            args = ", ".join(
                f"{sym}={plan.params[key]}"
                for key, sym in shown.items()
                if plan.params.get(key) is not None
            )
            g = gantt_figure(
                plan, self.problem, title=f"{name} ({args})" if args else name, height=220
            )
            g.update_layout(title_font_size=12, xaxis_range=[0, end * 1.02 or 1], width=GANTT_WIDTH)
            update_in_place(fig, g)

    # --- actions -------------------------------------------------------------------
    def load_model(self, model: str | None = None) -> None:
        """Load ``model`` (or the picker's value) with the shapes text; clears the profile."""
        name = (model or self.model_picker.value or "").strip()
        if not name:
            say(self.model_status, "type a zoo name or a path to an .onnx file", "warn")
            return
        try:
            g = backend.load_graph(name, parse_shapes(self.shape_text.value))
        except HetlabError as e:
            say(self.model_status, str(e), "error")
            return
        self.model_picker.value = name
        if self.problem is not None and {n.id for n in self.problem.nodes} != {
            n.id for n in g.nodes
        }:
            self.problem = None
        self.graph = g
        say(self.model_status, f"{g.name}: {len(g.nodes)} ops, {len(g.edges)} edges", "ok")

    def _chosen_devices(self) -> list[Any]:
        sel = set(self.device_select.value)
        return [d for d in self._devices if d.name in sel]

    def _update_profile_state(self) -> None:
        reason = None
        if self.graph is None:
            reason = "load a model first"
        elif not self._devices:
            reason = "no devices found on this machine"
        elif not self.device_select.value:
            reason = "select at least one device"
        disable(self.profile_button, reason)

    def profile(self) -> None:
        """Profile the loaded model on the selected devices (progress in the bar)."""
        if self.profile_button.disabled:
            say(self.profile_status, f"cannot profile: {self.profile_button.tooltip}", "warn")
            return
        self.progress.value = 0

        def progress(*a: Any) -> None:
            if len(a) >= 2 and a[1]:
                self.progress.value = int(100 * float(a[0]) / float(a[1]))
            elif a and isinstance(a[0], (int, float)):
                self.progress.value = int(100 * float(a[0]) if a[0] <= 1 else a[0])

        say(self.profile_status, "profiling...")
        try:
            p = backend.profile(self.graph, self._chosen_devices(), progress=progress)
        except HetlabError as e:
            say(self.profile_status, str(e), "error")
            return
        self.progress.value = 100
        self.problem = p
        say(self.profile_status, f"profiled {len(p.nodes)} ops on {', '.join(p.devices)}", "ok")

    def _params(self, algo: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in backend.algorithm_params(algo):
            if p.name in SLIDER_PARAMS:
                out[p.name] = getattr(self, SLIDER_PARAMS[p.name]).value
            elif p.name == "time_limit" and algo == "ilp" and self.ilp_time_limit is not None:
                out[p.name] = (
                    self.ilp_time_limit
                )  # seconds per subgraph; None: the ILP's own default
        return out

    def _solve(self, algo: str, fig: Any, label: str) -> Any:
        if self.problem is None:
            placeholder(fig, f"{label}: no profile to schedule yet")
            return None
        try:
            plan = backend.schedule(self.problem, algo, **self._params(algo))
        except HetlabError as e:
            placeholder(fig, f"{label}: {e}")
            say(self.solve_status, f"{label}: {e}", "warn")
            return None
        say(
            self.solve_status,
            f"{label}: makespan {plan.makespan:.3f} {self.problem.units} "
            f"(solved in {plan.solve_seconds:.2f} s)",
            "ok",
        )
        return plan

    def solve_ilp(self) -> None:
        """Re-solve the ILP plan with the current ε and NT (sliders call this on release)."""
        self.ilp_plan = self._solve("ilp", self.ilp_fig, "ILP")

    def solve_compared(self) -> None:
        """Re-solve the compared algorithm (default greedy) with the current K."""
        self.greedy_plan = self._solve(
            self.algo_select.value, self.greedy_fig, self.algo_select.value
        )

    def chosen_plan(self) -> Any:
        return self.ilp_plan if self.run_choice.value == "ILP" else self.greedy_plan

    def run_disabled_reason(self) -> str | None:
        """Why Run cannot run now, or None."""
        plan = self.chosen_plan()
        if self.problem is None:
            return "no profile: profile the model or load a saved profile"
        here = {d.name for d in self._devices}
        lacking = [d for d in self.problem.devices if d not in here]
        if lacking:
            return (
                f"this machine lacks the profiled device(s) {', '.join(lacking)}: "
                "the profile can be explored, not run"
            )
        if self.graph is None:
            return "no model loaded: a profile alone cannot be executed"
        if plan is None:
            return f"no {self.run_choice.value} plan to run"
        return backend.executor_available()

    def _update_run_state(self) -> None:
        self.run_choice.options = ["ILP", self.algo_select.value]
        reason = self.run_disabled_reason()
        disable(self.run_button, reason)
        if reason:
            say(self.run_status, f"Run disabled: {reason}", "warn")
        elif self.run_report is None:
            say(self.run_status, "ready to run", "info")

    def run(self) -> None:
        """Execute the chosen plan on the real devices; draw the measured Gantt and the error."""
        reason = self.run_disabled_reason()
        if reason:
            say(self.run_status, f"Run disabled: {reason}", "warn")
            return
        plan = self.chosen_plan()
        devs = [d for d in self._devices if d.name in set(self.problem.devices)]
        say(self.run_status, "running...")
        try:
            report = backend.run(
                self.graph,
                plan,
                devs,
                repeat=int(self.repeat.value),
                check=True,
                problem=self.problem,
            )
        except HetlabError as e:
            say(self.run_status, str(e), "error")
            return
        doc = dict(backend.report_json(report))
        doc.setdefault("predicted_ms", plan.makespan)
        if doc.get("predicted_ms") is None:
            doc["predicted_ms"] = plan.makespan
        lat = (doc.get("latency_ms") or {}).get("median")
        self.run_error = None if not lat else (lat - plan.makespan) / plan.makespan
        g = gantt_figure(
            doc, self.problem, title=f"measured: {self.run_choice.value} plan", height=220
        )
        # A fresh widget, not an in-place update: the browser never redraws a FigureWidget that
        # was first shown as an empty placeholder (plotly 7.1, JupyterLab 4.6, Chromium).
        self.run_fig = new_widget(no_colorbar(g))
        self._boxes["run_fig"].children = [self.run_fig]
        msg = (
            f"measured {lat:.3f} ms vs predicted {plan.makespan:.3f} ms ({self.run_error:+.1%})"
            if lat
            else "ran"
        )
        best = doc.get("predicted_host_ms") or doc.get("predicted_io_ms")
        if lat and best and abs(best - plan.makespan) > 1e-9:
            what = "host dispatch and I/O" if doc.get("predicted_host_ms") else "host I/O"
            msg += f"; {best:.3f} ms with {what} ({(lat - best) / best:+.1%})"
        cp = doc.get("critical_path") or {}
        if lat and cp.get("predicted_run_ms") is not None:
            msg += (
                f"; on the critical path units ran {cp['run_ms']:.3f} ms (profiled "
                f"{cp['predicted_run_ms']:.3f}), dispatch {cp['dispatch_ms']:.3f} ms"
            )
        if doc.get("max_rel_err") is not None:
            msg += f"; max rel err vs onnxruntime {doc['max_rel_err']:.2g}"
        self.run_report = doc
        say(self.run_status, msg, "ok")

    # --- files ---------------------------------------------------------------------
    def _folder(self) -> Path:
        return Path(self.path_text.value.strip() or ".")

    def save_profile(self, path: str | Path | None = None) -> Path | None:
        if self.problem is None:
            say(self.file_status, "no profile to save", "warn")
            return None
        p = Path(path) if path else self._folder() / f"{self.problem.name}.problem.json"
        self.problem.save(p)
        say(self.file_status, f"saved profile to {p}", "ok")
        return p

    def load_profile(self, path: str | Path | None = None) -> None:
        from hetlab.cost.problem import Problem

        folder = self._folder()
        try:
            if path is None:
                found = sorted(folder.glob("*.problem.json"))
                if not found:
                    raise HetlabError(f"no *.problem.json in {folder}: save a profile there first")
                path = found[0]
            prob = Problem.load(path)
        except HetlabError as e:
            say(self.file_status, str(e), "error")
            return
        if self.graph is not None and {n.id for n in self.graph.nodes} != {
            n.id for n in prob.nodes
        }:
            self.graph = None
        self.problem = prob
        say(self.file_status, f"loaded profile {path}", "ok")

    def save_plans(self) -> list[Path]:
        out = []
        for tag, plan in (("ilp", self.ilp_plan), ("compared", self.greedy_plan)):
            if plan is not None:
                out.append(plan.save(self._folder() / f"{plan.problem}.{tag}.plan.json"))
        say(
            self.file_status,
            f"saved {len(out)} plan(s) to {self._folder()}" if out else "no plans to save",
            "ok" if out else "warn",
        )
        return out

    def load_plans(self) -> None:
        """Load the saved ILP and compared plans of this problem, re-timed under it."""
        from hetlab.schedulers.plan import Plan

        if self.problem is None:
            say(self.file_status, "load or make a profile first", "warn")
            return
        n = 0
        try:
            for tag, attr in (("ilp", "ilp_plan"), ("compared", "greedy_plan")):
                f = self._folder() / f"{self.problem.name}.{tag}.plan.json"
                if f.exists():
                    setattr(self, attr, Plan.load(f).resimulate(self.problem))
                    n += 1
        except HetlabError as e:
            say(self.file_status, str(e), "error")
            return
        say(
            self.file_status,
            f"loaded {n} plan(s)" if n else f"no saved plans in {self._folder()}",
            "ok" if n else "warn",
        )
