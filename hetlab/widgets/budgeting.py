"""The workbench's error budget. **Measure precisions** profiles the model at every
combination of the precisions the profiled devices declare and times each combination's
candidate plans, each checked against onnxruntime (``recommend_precision.measure_precisions``,
on a worker thread, its progress in the solve line, stopped by Cancel). Afterwards the
**error budget** slider picks the fastest candidate whose ``max_rel_err`` is within it at once
(``within_budget``: nothing runs again), shows it as the recommended plan, as Recommend does,
and draws every candidate, speed against error, with the budget as a line
(``viz.budget_figure``). Where only fp32 exists there is no error to trade: the slider and the
button are disabled with the precision Dropdown's reason. A new profile or a what-if drops
the measurement, as it drops a recommendation."""

from __future__ import annotations

from html import escape
from typing import Any

from hetlab.calibrate.recommend_precision import OverPrecisions, measure_precisions, within_budget
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan
from hetlab.viz import budget_figure
from hetlab.widgets import draw, precision
from hetlab.widgets.controls import disable
from hetlab.widgets.recommending import MEASURE
from hetlab.widgets.tasks import Cancelled

WITHIN = "within budget"


def budget_info_html(plan: Plan) -> str:
    """The chosen candidate, its time and error, and the budget it was chosen within."""
    rec = plan.extra["recommended"]
    row = next(
        r for r in rec["candidates"] if f"{r['precision']} {r['candidate']}" == rec["chosen"]
    )
    within = sum(
        1 for r in rec["candidates"] if r["measured"] is not None and _ok(r, rec["error_budget"])
    )
    return (
        f"<span style='font-size:12px'><b>{escape(rec['chosen'])}</b> is fastest measured "
        f"within the error budget {rec['error_budget']:.1e} ({row['measured']:.3f} ms, "
        f"max_rel_err {row['max_rel_err']:.1e}; {within} of {len(rec['candidates'])} "
        "candidates within it)</span>"
    )


def _ok(row: dict[str, Any], budget: float) -> bool:
    return row["max_rel_err"] is not None and row["max_rel_err"] <= budget


class Budgeting:
    """Mixed into ``Workbench``: the Measure precisions button and the error budget slider."""

    state: Any
    devices: list[Any]

    def _budget_reason(self) -> str | None:
        if len(precision.offered(self.devices)) < 2:
            return precision.ONLY_FP32
        if self.state.problem is None:
            return "no profile: profile the model or load a saved profile"
        if self._real_reason():
            return self._real_reason()
        if not self.state.graph.model_path:
            return "the model has no ONNX file: the check against onnxruntime needs one"
        return None

    def _update_budget_state(self) -> None:
        disable(self.budget_button, self._budget_reason())
        only = len(precision.offered(self.devices)) < 2
        disable(self.budget_slider, precision.ONLY_FP32 if only else None)

    def measure_budget(self) -> None:
        """Measure the candidates over precisions in the background (see the module doc),
        then choose within the slider's budget."""
        reason = self._budget_reason()
        if reason:
            self._note("rec", f"cannot measure precisions: {reason}", "warn")
            return
        st = self.state
        names = set(st.problem.devices)
        graph, devs = st.graph, [d for d in self.devices if d.name in names]
        opts = dict(self.profile_options)
        with self._ui:
            self._note("rec", "measuring the candidates at each precision...")
            self.tasks.submit(
                "run",
                lambda task: measure_precisions(
                    graph, devs, MEASURE, profile_options=opts, progress=task.progress
                ),
                self._guard(st, self._budget_measured),
                self._guard(st, self._budget_failed),
                on_progress=self._guard(st, self._budget_progress),
            )
            self._busy()

    def _budget_progress(self, done: int, total: int, message: str) -> None:
        share = int(100 * done / total) if total else 0
        self._note("rec", f"measuring precisions {share}%: {message}")

    def _budget_failed(self, e: BaseException) -> None:
        if isinstance(e, Cancelled):
            self._note("rec", "measuring precisions cancelled", "warn")
        else:
            self._note("rec", draw.error_text(e), "error")

    def _budget_measured(self, got: OverPrecisions) -> None:
        self.state.budget = got
        self.choose_within()

    def choose_within(self) -> None:
        """The fastest measured candidate within the slider's budget as the recommended
        plan, and the candidates' figure; instant (nothing runs). Without a measurement it
        does nothing."""
        st, budget = self.state, float(self.budget_slider.value)
        got = st.budget
        if got is None:
            return
        chosen = None
        try:
            plan = within_budget(got.rows, got.plans, budget)
        except HetlabError as e:
            st.rec, st.rec_problem = None, None
            self._publish()
            self.recommend_info.value = ""
            self.slots["rec_fig"].message(str(e))
            self._note("rec", str(e), "warn")
            self._update_run_state()
        else:
            chosen = plan.extra["recommended"]["chosen"]
            problem = got.problems[chosen.split(" ", 1)[0]]
            self._show_rec(plan, problem, False, budget_info_html(plan), title=WITHIN)
            self._note("rec", f"{chosen} within {budget:.1e}", "ok")
        self.slots["budget_fig"].show(budget_figure(got.rows, budget, chosen))

    def _clear_budget(self) -> None:
        """No measurement over precisions (a new profile, a what-if): the figure says how
        to get one."""
        self.state.budget = None
        reason = self._budget_reason()
        self.slots["budget_fig"].message(
            f"error budget: {reason}"
            if reason
            else "press Measure precisions, then move the error budget"
        )
