"""The workbench's two plans: each slot shows the plan of its chosen algorithm with the
parameters of that algorithm's panel, from the cache when it was solved before, else solved
on the slot's worker thread, where a newer request supersedes an older one and a result that
is no longer wanted is kept in the cache but not shown."""

from __future__ import annotations

from typing import Any

from hetlab.errors import HetlabError
from hetlab.widgets import draw
from hetlab.widgets.params import ParamPanel
from hetlab.widgets.plans import solve, solve_key
from hetlab.widgets.tasks import Cancelled

# slot (the plan trait) -> (its algorithm dropdown, the box of that algorithm's controls)
SLOTS = {
    "ilp_plan": ("ilp_select", "ilp_params"),
    "greedy_plan": ("algo_select", "compared_params"),
}


class Solving:
    """Mixed into ``Workbench``: parameter panels, the plan cache and the solves."""

    state: Any
    plans: Any
    tasks: Any
    ilp_time_limit: float | None
    _panels: dict[tuple[str, str], ParamPanel]
    _inflight: dict[str, Any]

    def panel(self, slot: str, algo: str | None = None) -> ParamPanel:
        """The parameter controls of ``algo`` (default: the chosen one) in ``slot``."""
        algo = algo or getattr(self, SLOTS[slot][0]).value
        if (slot, algo) not in self._panels:
            p = ParamPanel(algo)
            if "time_limit" in p.controls and self.ilp_time_limit is not None:
                p.controls["time_limit"].value = self.ilp_time_limit
                p.defaults["time_limit"] = self.ilp_time_limit
            p.resolve(self.state.problem)
            p.observe_values(lambda: self._request(slot))
            self._panels[slot, algo] = p
        return self._panels[slot, algo]

    def _show_panel(self, slot: str) -> None:
        getattr(self, SLOTS[slot][1]).children = [self.panel(slot)]

    # the paper's three knobs, by the names the notebooks use
    eps_slider = property(lambda self: self.panel("ilp_plan", "ilp").controls["epsilon"])
    nt_slider = property(lambda self: self.panel("ilp_plan", "ilp").controls["nt"])
    k_slider = property(lambda self: self.panel("greedy_plan", "greedy").controls["k"])

    def _params(self, slot: str) -> dict[str, Any]:
        return self.panel(slot).values()

    def _algo_changed(self, slot: str) -> None:
        with self._ui:
            self._show_panel(slot)
            self._request(slot)
            self._update_run_state()

    def _request(self, slot: str) -> None:
        """Show ``slot``'s plan for the current problem, algorithm and parameters: from the
        cache at once, else solved on the slot's worker (a newer request supersedes it)."""
        with self._ui:
            st = self.state
            fig, label = draw.slot_figure(self, slot)
            if st.problem is None:
                st.slots[slot].key = None
                fig.message(f"{label}: no profile to schedule yet")
                return
            problem, algo, params = st.problem, draw.slot_algo(self, slot), self._params(slot)
            key = solve_key(st.pkey or "", algo, params)
            st.slots[slot].key = key
            self._params_line()
            cached = self.plans.get(key)
            if cached is not None:
                self.tasks.cancel(slot)
                self._show_plan(slot, cached, "plan from the cache", key)
                return
            task = self._inflight.get(slot)
            if task is not None and task[0] == key and not task[1].cancelled.is_set():
                return  # already being solved
            self._note(slot, f"solving {algo}...")
            t = self.tasks.submit(
                slot,
                lambda task: solve(problem, algo, params, task.progress),
                lambda plan: self._solved(st, slot, key, plan),
                self._guard(st, lambda e: self._solve_failed(slot, key, e)),
                on_progress=self._guard(st, lambda d, n, m: self._solve_progress(slot, d, n, m)),
                supersede=True,
            )
            self._inflight[slot] = (key, t)
            self._busy()

    def _solved(self, st: Any, slot: str, key: Any, plan: Any) -> None:
        self.plans.put(key, plan)  # valid for its problem whatever is shown now
        if self.current(st) and st.slots[slot].key == key:  # else another plan is wanted
            self._show_plan(slot, plan, f"solved in {plan.solve_seconds:.2f} s", key)

    def _show_plan(self, slot: str, plan: Any, note: str, key: Any) -> None:
        """Show ``plan`` in ``slot``: its Gantt, info line, the DAG colours and Run."""
        with self._ui:
            st = self.state
            st.slots[slot].plan, st.slots[slot].key = plan, key
            self._publish()
            draw.gantts(self, only=slot)
            if self.color_select.value.startswith("plan:"):
                draw.dag(self)
            self._note(slot, note, "ok")
            self._update_run_state()

    def _solve_failed(self, slot: str, key: Any, e: BaseException) -> None:
        if self.state.slots[slot].key != key:
            return
        fig, label = draw.slot_figure(self, slot)
        msg = str(e) if isinstance(e, HetlabError) else f"{type(e).__name__}: {e}"
        if isinstance(e, Cancelled):
            msg = "solve cancelled"
        fig.message(f"{label}: {msg}")
        self.state.slots[slot].plan = None
        self._publish()
        draw.gantts(self, only=slot)
        self._note(slot, msg, "warn")
        self._update_run_state()

    def _settle(self) -> None:
        """Once nothing runs in the background, no slot is solving: one whose line still says
        so lost its solve (dropped by Cancel before it started). Say that, rather than leave
        a stale "solving" line."""
        st = self.state
        for slot in SLOTS:
            if not st.slots[slot].note.startswith("solving"):
                continue
            self._inflight.pop(slot, None)
            if st.slots[slot].plan is None:
                fig, label = draw.slot_figure(self, slot)
                fig.message(f"{label}: solve cancelled")
                self._note(slot, "solve cancelled: move a parameter to solve again", "warn")
            else:
                self._note(slot, "solve cancelled: the plan shown is the one before", "warn")

    def _solve_progress(self, slot: str, done: int, total: int, msg: str) -> None:
        if self.state.slots[slot].note.startswith("solving"):
            self._note(slot, f"solving: {msg or f'step {done}/{total}'}")
