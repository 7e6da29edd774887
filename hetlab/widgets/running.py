"""The workbench's profiling and running, both on worker threads: the profiler's progress
goes to the bar and its message beside it; Cancel stops a profile at its next step."""

from __future__ import annotations

from html import escape
from typing import Any

from hetlab.calibrate import profile as measure_profile
from hetlab.errors import HetlabError
from hetlab.viz import compare_figure
from hetlab.viz.common import fmt_ms
from hetlab.widgets import draw, precision
from hetlab.widgets.controls import disable, say
from hetlab.widgets.recommending import RECOMMENDED
from hetlab.widgets.runs import (
    REAL,
    REPLAY,
    REPLAY_NOTE,
    execute,
    status_line,
    summary,
    why_not_real,
)
from hetlab.widgets.tasks import Cancelled


class Running:
    """Mixed into ``Workbench``: profile and run, off the kernel thread."""

    state: Any
    devices: list[Any]

    # --- profiling -------------------------------------------------------------------
    def _chosen_devices(self) -> list[Any]:
        sel = set(self.device_select.value)
        return precision.at_chosen(
            [d for d in self.devices if d.name in sel], self.precision_select
        )

    def _profile_reason(self) -> str | None:
        if self.state.graph is None:
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
        ``profile_options``). The bar shows the profiler's progress; Cancel stops it. The
        profile belongs to the state it started in: a model loaded meanwhile drops it."""
        opts = {**self.profile_options, **options}
        started = {"state": self.state}  # the state the profile measures, once it starts

        def work(task: Any) -> Any:
            with self._ui:
                started["state"] = self.state
                reason = self._profile_reason()
                if reason:
                    raise HetlabError(f"cannot profile: {reason}")
                graph, devs = self.state.graph, self._chosen_devices()
                self._say("profile", f"profiling on {', '.join(d.name for d in devs)}...")
            return measure_profile(graph, devs, progress=task.progress, **opts)

        def mine(fn: Any) -> Any:
            def call(*args: Any) -> None:
                with self._ui:
                    if self.current(started["state"]):
                        fn(*args)

            return call

        with self._ui:
            self.progress.value = 0
            self.progress.bar_style = ""
            self.progress_text.value = ""
            self._say("profile", "profile queued (after the model loads)")
            self.tasks.submit(
                "model",
                work,
                mine(self._profiled),
                mine(lambda e: self._profile_failed(e, opts.get("cache", True))),
                mine(self._profile_progress),
            )
            self._busy()

    def _profile_progress(self, done: int, total: int, message: str) -> None:
        self.progress.value = int(100 * done / total) if total else 0
        self.progress_text.value = f"<small>{done}/{total} · {escape(message)}</small>"

    def _profiled(self, problem: Any) -> None:
        self.progress.value = 100
        self.progress.bar_style = "success"
        self.progress_text.value = ""  # the profiler's last step is over
        self.use_problem(problem, "profiled on this machine")

    def _profile_failed(self, e: BaseException, cached: bool) -> None:
        self.progress.bar_style = "warning"
        self.progress_text.value = ""  # the status line says what happened
        if isinstance(e, Cancelled):
            kept = (
                ": what was measured stays in the profile cache, so profiling again resumes there"
                if cached
                else ""
            )
            self._say("profile", f"profile cancelled at {self.progress.value}%{kept}", "warn")
        else:
            self._say("profile", draw.error_text(e), "error")

    # --- running ---------------------------------------------------------------------
    def chosen_plan(self) -> Any:
        """The plan Run runs: the one on screen in the slot chosen."""
        if self.run_choice.value == RECOMMENDED:
            return self.state.rec
        slot = "ilp_plan" if self.run_choice.value == "ILP" else "greedy_plan"
        return self.state.plan(slot)

    def _real_reason(self) -> str | None:
        st = self.state
        return why_not_real(st.problem, st.graph, [d.name for d in self.devices])

    def _default_run_where(self) -> None:
        """Replay where the profile cannot run here (measured elsewhere, or a what-if)."""
        if self.state.problem is not None:
            self.run_where.value = REPLAY if self._real_reason() else REAL

    def run_disabled_reason(self) -> str | None:
        """Why Run cannot run now, or None."""
        if self.state.problem is None:
            return "no profile: profile the model or load a saved profile"
        if self.run_where.value == REAL:
            reason = self._real_reason()
            if reason:
                return reason
        if self.chosen_plan() is None:
            return f"no {self.run_choice.value} plan to run"
        return None

    def _update_run_state(self) -> None:
        """Run's choices, its button and its status line, from the state."""
        st = self.state
        extra = [RECOMMENDED] if st.rec is not None else []
        self.run_choice.options = ["ILP", self.algo_select.value, *extra]
        self._update_recommend_state()
        disable(self.trace_button, None if st.last_run is not None else "run a plan first")
        reason = self.run_disabled_reason()
        disable(self.run_button, reason)
        say(self.run_status, *status_line(st.run_note, reason, st.ran, self.chosen_plan()))

    def run(self) -> None:
        """Run the plan on screen in the background: on this machine's devices (a
        measurement) or replayed on fake devices (labelled as such); draw its Gantt and its
        error."""
        reason = self.run_disabled_reason()
        if reason:
            say(self.run_status, f"Run disabled: {reason}", "warn")
            return
        st = self.state
        plan, graph, choice = self.chosen_plan(), st.graph, self.run_choice.value
        # a recommended plan is predicted on the profile it was scheduled on (its precision's)
        problem = st.rec_problem if choice == RECOMMENDED and st.rec_problem else st.problem
        replay, repeat = self.run_where.value == REPLAY, int(self.repeat.value)
        devices = list(self.devices)
        with self._ui:
            st.run_note = ("replaying..." if replay else "running...", "info")
            self._update_run_state()
            self.tasks.submit(
                "run",
                lambda task: execute(plan, problem, graph, devices, replay, repeat),
                self._guard(st, lambda report: self._ran(report, plan, problem, replay, choice)),
                self._guard(st, self._run_failed),
            )
            self._busy()

    def _run_failed(self, e: BaseException) -> None:
        self.state.run_note = (draw.error_text(e), "error")
        self._update_run_state()

    def _ran(self, report: Any, plan: Any, problem: Any, replay: bool, choice: str) -> None:
        st = self.state
        doc = dict(report.to_json())
        if doc.get("predicted_ms") is None:
            doc["predicted_ms"] = plan.makespan
        msg, st.run_error = summary(doc, plan, replay)
        what = f"replay: {choice} plan" if replay else f"measured: {choice} plan"
        # the plan's prediction above its measurement, on one time axis, transfers in both
        kind = "replayed" if replay else "measured"
        g = compare_figure([plan, report], [f"predicted: {choice} plan", kind], problem, title=what)
        # on the prediction's time scale, so the two Gantts above each other read alike
        end = max([float(plan.makespan)] + [float(e["finish"]) for e in doc.get("timeline", [])])
        g.update_xaxes(range=[0, 1.02 * end])
        if replay:
            lat = (doc.get("latency_ms") or {}).get("median")
            times = f"replayed {fmt_ms(lat)} · predicted {fmt_ms(doc['predicted_ms'])}"
            g.update_layout(
                title_text=f"{draw.whatif_prefix(self)}<b>{what}</b> · {times} · {REPLAY_NOTE}"
            )
        self.slots["run_fig"].show(g)
        st.last_run = (report, "replay" if replay else "run")
        st.run, st.run_note, st.ran = doc, (msg, "ok"), plan
        self._publish()
        self._update_run_state()
