"""The workbench's profiling and running, both on worker threads: the profiler's progress
goes to the bar and its message beside it; Cancel stops a profile at its next step."""

from __future__ import annotations

from html import escape
from typing import Any

from hetlab.calibrate import profile as measure_profile
from hetlab.errors import HetlabError
from hetlab.viz import gantt_figure
from hetlab.widgets import draw
from hetlab.widgets.controls import disable, say
from hetlab.widgets.recommending import RECOMMENDED
from hetlab.widgets.runs import REAL, REPLAY, REPLAY_NOTE, execute, summary, why_not_real
from hetlab.widgets.tasks import Cancelled


class Running:
    """Mixed into ``Workbench``: profile and run, off the kernel thread."""

    graph: Any
    problem: Any
    devices: list[Any]

    # --- profiling -------------------------------------------------------------------
    def _chosen_devices(self) -> list[Any]:
        sel = set(self.device_select.value)
        return [d for d in self.devices if d.name in sel]

    def _profile_reason(self) -> str | None:
        if self.graph is None:
            return "load a model first"
        if not self.devices:
            return "no devices found on this machine"
        if not self.device_select.value:
            return "select at least one device"
        return None

    def _update_profile_state(self) -> None:
        disable(self.profile_button, self._profile_reason())

    def _profile_clicked(self) -> None:
        if self.profile_button.disabled:
            say(self.profile_status, f"cannot profile: {self.profile_button.tooltip}", "warn")
            return
        self.profile()

    def profile(self, **options: Any) -> None:
        """Profile the model on the selected devices in the background, once the model and
        the devices are known; ``options`` go to ``hetlab.calibrate.profile`` (over
        ``profile_options``). The bar shows the profiler's progress; Cancel stops it."""
        opts = {**self.profile_options, **options}

        def work(task: Any) -> Any:
            with self._ui:
                reason = self._profile_reason()
                if reason:
                    raise HetlabError(f"cannot profile: {reason}")
                graph, devs = self.graph, self._chosen_devices()
                say(self.profile_status, f"profiling on {', '.join(d.name for d in devs)}...")
            return measure_profile(graph, devs, progress=task.progress, **opts)

        with self._ui:
            self.progress.value = 0
            self.progress.bar_style = ""
            self.progress_text.value = ""
            say(self.profile_status, "profile queued (after the model loads)")
            self.tasks.submit(
                "model",
                work,
                self._profiled,
                lambda e: self._profile_failed(e, opts.get("cache", True)),
                self._profile_progress,
            )
            self._busy()

    def _profile_progress(self, done: int, total: int, message: str) -> None:
        with self._ui:
            self.progress.value = int(100 * done / total) if total else 0
            self.progress_text.value = f"<small>{done}/{total} · {escape(message)}</small>"

    def _profiled(self, problem: Any) -> None:
        self.progress.value = 100
        self.progress.bar_style = "success"
        self.problem = problem
        say(
            self.profile_status,
            f"profiled {len(problem.nodes)} ops on {', '.join(problem.devices)}",
            "ok",
        )

    def _profile_failed(self, e: BaseException, cached: bool) -> None:
        self.progress.bar_style = "warning"
        if isinstance(e, Cancelled):
            kept = (
                ": what was measured stays in the profile cache, so profiling again resumes there"
                if cached
                else ""
            )
            say(self.profile_status, f"profile cancelled at {self.progress.value}%{kept}", "warn")
        else:
            say(self.profile_status, draw.error_text(e), "error")

    # --- running ---------------------------------------------------------------------
    def chosen_plan(self) -> Any:
        if self.run_choice.value == RECOMMENDED:
            return self.rec_plan
        return self.ilp_plan if self.run_choice.value == "ILP" else self.greedy_plan

    def _real_reason(self) -> str | None:
        return why_not_real(self.problem, self.graph, [d.name for d in self.devices])

    def _default_run_where(self) -> None:
        """Replay where the profile cannot run here (measured elsewhere, or a what-if)."""
        if self.problem is not None:
            self.run_where.value = REPLAY if self._real_reason() else REAL

    def run_disabled_reason(self) -> str | None:
        """Why Run cannot run now, or None."""
        if self.problem is None:
            return "no profile: profile the model or load a saved profile"
        if self.run_where.value == REAL:
            reason = self._real_reason()
            if reason:
                return reason
        if self.chosen_plan() is None:
            return f"no {self.run_choice.value} plan to run"
        return None

    def _update_run_state(self) -> None:
        extra = [RECOMMENDED] if self.rec_plan is not None else []
        self.run_choice.options = ["ILP", self.algo_select.value, *extra]
        self._update_recommend_state()
        reason = self.run_disabled_reason()
        disable(self.run_button, reason)
        if reason:
            say(self.run_status, f"Run disabled: {reason}", "warn")
        elif self.run_report is None:
            say(self.run_status, "ready to run", "info")

    def run(self) -> None:
        """Run the chosen plan in the background: on this machine's devices (a measurement)
        or replayed on fake devices (labelled as such); draw its Gantt and its error."""
        reason = self.run_disabled_reason()
        if reason:
            say(self.run_status, f"Run disabled: {reason}", "warn")
            return
        plan, problem, graph = self.chosen_plan(), self.problem, self.graph
        replay, repeat = self.run_where.value == REPLAY, int(self.repeat.value)
        devices, choice = list(self.devices), self.run_choice.value
        with self._ui:
            say(self.run_status, "replaying..." if replay else "running...")
            self.tasks.submit(
                "run",
                lambda task: execute(plan, problem, graph, devices, replay, repeat),
                lambda report: self._ran(report, plan, replay, choice),
                lambda e: say(self.run_status, draw.error_text(e), "error"),
            )
            self._busy()

    def _ran(self, report: Any, plan: Any, replay: bool, choice: str) -> None:
        doc = dict(report.to_json())
        if doc.get("predicted_ms") is None:
            doc["predicted_ms"] = plan.makespan
        msg, self.run_error = summary(doc, plan, replay)
        what = f"replay: {choice} plan" if replay else f"measured: {choice} plan"
        g = gantt_figure(doc, self.problem, title=what, height=220)
        # on the prediction's time scale, so the two Gantts above each other read alike
        end = max([float(plan.makespan)] + [float(e["finish"]) for e in doc.get("timeline", [])])
        g.update_xaxes(range=[0, 1.02 * end])
        if replay:
            g.update_layout(title_text=f"{draw.whatif_prefix(self)}<b>{what}</b> · {REPLAY_NOTE}")
        self.slots["run_fig"].show(g)
        self.last_run = (report, "replay" if replay else "run")
        disable(self.trace_button, None)
        self.run_report = doc
        say(self.run_status, msg, "ok")
