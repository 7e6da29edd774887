"""How the workbench moves from one ``State`` to the next, and how its views follow.

A new model or profile makes a new state (``_new_state``): every background task of the old
one is cancelled, and every figure, info line, status line and button is drawn again from the
new state alone. A what-if keeps the state and changes the problem shown (``_show_problem``).
The public traits (``graph``, ``problem``, the plans, ``run_report``) mirror the state
(``_publish``); setting ``graph`` or ``problem`` from outside loads that model or profile."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from hetlab.calibrate.busy import busy_lines
from hetlab.widgets import draw
from hetlab.widgets.controls import COLORS, say
from hetlab.widgets.fit import budget_line, refit, refit_line
from hetlab.widgets.plans import problem_key
from hetlab.widgets.state import LINES, SLOT_NAMES, State, same_model

RANK = {"ok": 0, "info": 1, "warn": 2, "error": 3}


class States:
    """Mixed into ``Workbench``: the current ``state`` and its transitions."""

    state: State
    _fitted: Any = None  # the profile the parameters were last fitted to

    def current(self, st: State) -> bool:
        """Whether ``st`` is still the state shown (else a result for it is dropped)."""
        return st is self.state

    def _guard(self, st: State, fn: Callable[..., None]) -> Callable[..., None]:
        """``fn`` as a task callback that does nothing once ``st`` is no longer current."""

        def call(*args: Any) -> None:
            with self._ui:
                if self.current(st):
                    fn(*args)

        return call

    # --- lines ------------------------------------------------------------------------
    def _say(self, line: str, text: str, kind: str = "info") -> None:
        """Write status line ``line`` (model, profile, file) of the current state."""
        self.state.say(line, text, kind)
        say(getattr(self, f"{line}_status"), text, kind)

    def _note(self, slot: str, text: str, kind: str = "info") -> None:
        """What plan ``slot`` (or ``"rec"``, the recommendation) is doing: the solve line."""
        st = self.state
        if slot == "rec":
            st.rec_note = (text, kind)
        else:
            st.slots[slot].note, st.slots[slot].kind = text, kind
        self._solve_line()

    def _solve_line(self) -> None:
        st = self.state
        parts = [
            (draw.slot_figure(self, s)[1], st.slots[s].note, st.slots[s].kind) for s in SLOT_NAMES
        ]
        parts.append(("recommend", *st.rec_note))
        html = " · ".join(
            f"<span style='color:{COLORS[kind]}'>{escape(label)}: {escape(text)}</span>"
            for label, text, kind in parts
            if text
        )
        self.solve_status.value = html

    def _refresh(self) -> None:
        """Every status line and button from the state."""
        for line in LINES:
            say(getattr(self, f"{line}_status"), *self.state.lines.get(line, ("", "info")))
        self._solve_line()
        self._params_line()
        self._update_profile_state()
        self._update_run_state()

    def _refit(self, base: Any) -> None:
        """On a new model: reset the parameters that do not fit it, and say so in one line
        (with the values kept from the previous model)."""
        if base is None:
            return  # a model with no profile yet: fitted once its profile comes
        fitted, self._fitted = self._fitted, base
        if fitted is not None and same_model(fitted, base):
            return
        resets, kept = refit(list(self._panels.values()), base)
        self.state.params_note = refit_line(resets, kept if fitted is not None else [], base.name)

    def _params_line(self) -> None:
        """The parameters line: what was reset for this model, and a warning for each plan
        whose parameters make a move slower than the budget."""
        st = self.state
        text, kind = st.params_note
        slow = []
        for slot in SLOT_NAMES:
            line = budget_line(st.problem, draw.slot_algo(self, slot), self._params(slot))
            if line and line not in slow:
                slow.append(line)
        kind = "warn" if slow else kind
        say(self.params_status, " · ".join(x for x in (text, *slow) if x), kind)

    # --- transitions --------------------------------------------------------------------
    def _new_state(
        self,
        graph: Any = None,
        base: Any = None,
        lines: dict[str, tuple[str, str]] | None = None,
        cancel_model_lane: bool = True,
    ) -> State:
        """Replace the state: ``graph`` and ``base`` (a profile of ``graph`` or of nothing
        loaded); older background work is cancelled and every view is drawn again."""
        with self._ui:
            for lane in (*SLOT_NAMES, "run", *(("model",) if cancel_model_lane else ())):
                self.tasks.cancel(lane)
            self._inflight.clear()
            if graph is not None and base is not None and not same_model(graph, base):
                graph = None  # a profile of another model: explore the profile alone
            st = State(self.state.gen + 1, graph=graph, base=base, lines=dict(lines or {}))
            self.state = st
            self._refit(base)
            if graph is None:
                self.model_picker.value = ""  # the model typed there is no longer shown
                if base is not None:
                    st.say("model", "no model loaded: the profile is explored and replayed alone")
            self.whatif.set_devices(list(base.devices) if base is not None else [])
            self.slots["run_fig"].message("press Run to measure the chosen plan, or replay it")
            self._show_problem(base)
            self._refresh()
            return st

    def _show_problem(self, problem: Any) -> None:
        """Show ``problem`` (the state's profile or a what-if of it): heatmap, DAG, the two
        plans (from the cache or solved), no recommendation."""
        st = self.state
        st.problem = problem
        st.pkey = problem_key(problem) if problem is not None else None
        self._default_run_where()
        st.rec, st.rec_problem, st.rec_note = None, None, ("", "info")
        self.recommend_info.value = ""
        self.slots["rec_fig"].message("press Recommend to time the candidate plans")
        self._clear_budget()
        for panel in self._panels.values():
            panel.resolve(problem)
        draw.problem(self)
        for slot in SLOT_NAMES:
            st.slots[slot].plan = None
            st.slots[slot].note = ""
            fig, label = draw.slot_figure(self, slot)
            fig.message(f"{label}: {'solving...' if problem is not None else 'no profile yet'}")
        draw.gantts(self)
        self._publish()
        for slot in SLOT_NAMES:
            self._request(slot)
        self._update_run_state()

    def _publish(self) -> None:
        """The public traits from the state (their observers see that it is no user's set)."""
        st = self.state
        self._publishing += 1
        try:
            self.graph = st.graph
            self.problem = st.problem
            for slot in SLOT_NAMES:
                setattr(self, slot, st.plan(slot))
            self.rec_plan = st.rec
            self.run_report = st.run
            self.run_error = st.run_error
        finally:
            self._publishing -= 1

    def _trait_set(self, change: dict) -> None:
        """A trait set from outside: a graph or a problem is loaded, a plan is shown."""
        if self._publishing:
            return
        with self._ui:
            name, new = change["name"], change["new"]
            if name == "graph":
                self.use_graph(new)
            elif name == "problem":
                self.use_problem(new, "set from Python")
            elif name in SLOT_NAMES:
                self._show_plan(name, new, "set from Python", key=None)

    def use_graph(self, graph: Any) -> None:
        """Show ``graph`` (a new state), with the current profile if it profiles ``graph``."""
        st = self.state
        base = st.base if same_model(graph, st.base) else None
        lines = {"model": (f"{graph.name}: {len(graph.nodes)} ops, {len(graph.edges)} edges", "ok")}
        if base is not None:
            lines["profile"] = st.lines.get("profile", ("", "info"))
        self._reset_progress()
        self._new_state(graph, base, lines, cancel_model_lane=False)
        if base is None:
            self._devices_line()

    def _reset_progress(self) -> None:
        self.progress.value = 0
        self.progress.bar_style = ""
        self.progress_text.value = ""

    def use_problem(self, problem: Any, source: str) -> None:
        """Show profile ``problem`` (a new state), with the model loaded if it is its model;
        ``source`` says where the profile comes from, in the profile line."""
        st = self.state
        graph = st.graph if same_model(st.graph, problem) else None
        lines = {"model": st.lines["model"]} if graph is not None and "model" in st.lines else {}
        if problem is not None:
            where = ", ".join(problem.devices)
            text = f"profile {problem.name}: {len(problem.nodes)} ops on {where} ({source})"
            busy = busy_lines(problem, "profile again")
            lines["profile"] = (" · ".join([text, *busy]), "warn" if busy else "ok")
        self._new_state(graph, problem, lines)
        if problem is None:
            self._devices_line()
