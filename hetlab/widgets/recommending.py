"""The workbench's recommendation: the candidate plans (the ILP slot's algorithm with its
parameters, greedy, heft, each device alone) timed on this machine's devices or replayed on
the profile's virtual clock, the fastest kept (``hetlab.recommend`` with ``measure``); where
the replays miss their predictions beyond their tolerance, the prediction chooses and the
line under the Gantt says so. It has its own Gantt below the two compared plans and is a
third choice of Run."""

from __future__ import annotations

from html import escape
from typing import Any

from hetlab.calibrate import recommend
from hetlab.schedulers.plan import Plan
from hetlab.viz import gantt_figure
from hetlab.widgets import draw
from hetlab.widgets.controls import disable
from hetlab.widgets.runs import REPLAY, REPLAY_NOTE, where

RECOMMENDED = "recommended"
MEASURE = 3  # runs per round and candidate (5 interleaved rounds)


def recommend_plan(
    problem: Any, graph: Any, devices: list[Any], replay: bool, algo: str, params: dict
) -> Plan:
    """``hetlab.recommend`` timed on ``devices`` (those the profile names) or, with
    ``replay``, on fake devices that replay the profile's costs."""
    graph, devs = where(problem, graph, devices, replay)
    kw = {k: v for k, v in params.items() if v is not None}
    return recommend(problem, graph, devs, algo=algo, measure=MEASURE, **kw)


def rec_info_html(plan: Plan | None, replay: bool) -> str:
    """The chosen candidate and the times it was chosen by (measured, replayed on the
    virtual clock, or predicted), and in a second line why replays were set aside."""
    if plan is None:
        return ""
    rec = plan.extra.get("recommended", {})
    basis = rec.get("basis")
    times = rec.get(basis) if basis in ("measured", "replayed") else None
    times = times or rec.get("predicted") or {}
    shown = sorted((v, k) for k, v in times.items() if v is not None)
    parts = [f"{escape(k)} {v:.3f}" for v, k in shown[:6]]
    what = {"measured": "measured", "replayed": "replayed (virtual clock)"}.get(
        str(basis), "predicted"
    )
    line = (
        f"<span style='font-size:12px'><b>{escape(str(rec.get('chosen')))}</b> is fastest "
        f"{what} ({' · '.join(parts)} ms)</span>"
    )
    if rec.get("why"):
        line += f"<br><span style='font-size:12px'>{escape(str(rec['why']))}</span>"
    return line


class Recommending:
    """Mixed into ``Workbench``: the Recommend button and its plan."""

    state: Any
    devices: list[Any]

    def _recommend_reason(self) -> str | None:
        if self.state.problem is None:
            return "no profile: profile the model or load a saved profile"
        if self.run_where.value != REPLAY and self._real_reason():
            return self._real_reason()
        return None

    def recommend(self) -> None:
        """Time the candidates in the background (see the module doc) and show the winner."""
        reason = self._recommend_reason()
        if reason:
            self._note("rec", f"cannot recommend: {reason}", "warn")
            return
        st = self.state
        replay = self.run_where.value == REPLAY
        problem, graph, devices = st.problem, st.graph, list(self.devices)
        algo, params = self.ilp_select.value, self._params("ilp_plan")
        with self._ui:
            where = "on the profile's virtual clock" if replay else "on this machine"
            self._note("rec", f"timing the candidate plans {where}...")
            self.tasks.submit(
                "run",
                lambda task: recommend_plan(problem, graph, devices, replay, algo, params),
                self._guard(st, lambda plan: self._recommended(plan, problem, replay)),
                self._guard(st, lambda e: self._note("rec", draw.error_text(e), "error")),
            )
            self._busy()

    def _recommended(self, plan: Plan, problem: Any, replay: bool) -> None:
        if problem is not self.state.problem:  # a what-if changed the problem meanwhile
            return
        self._show_rec(plan, problem, replay, rec_info_html(plan, replay))
        self._note("rec", str(plan.extra["recommended"]["chosen"]), "ok")

    def _show_rec(self, plan: Plan, problem: Any, replay: bool, info: str, title: str = "") -> None:
        """Show ``plan`` as the recommended one: its Gantt (on ``problem``, the profile it
        was scheduled on), ``info`` beside the button, and a third choice of Run."""
        st = self.state
        st.rec, st.rec_replay, st.rec_problem = plan, replay, problem
        self._publish()
        self.recommend_info.value = info
        chosen = plan.extra["recommended"]["chosen"]
        g = gantt_figure(
            plan, problem, title=f"{draw.whatif_prefix(self)}{title or RECOMMENDED}: {chosen}"
        )
        g.update_layout(height=draw.gantt_height(g))
        if replay:
            g.update_layout(title_text=f"{g.layout.title.text} · {REPLAY_NOTE}")
        g.update_layout(title_font_size=12)
        self.slots["rec_fig"].show(g)
        self._update_run_state()

    def _update_recommend_state(self) -> None:
        disable(self.recommend_button, self._recommend_reason())
        self._update_budget_state()

    def _settle_rec(self) -> None:
        """Once nothing runs in the background, a recommendation still said to be timing or
        measuring lost its task (dropped by Cancel before it started): say so."""
        text, kind = self.state.rec_note
        if kind == "info" and text.endswith("..."):
            self._note("rec", "cancelled: press the button again", "warn")
