"""The workbench's two plans: each slot shows the plan of its chosen algorithm with the
parameters of that algorithm's panel, from the cache when it was solved before, else solved
on the slot's worker thread, where a newer request supersedes an older one and a result that
is no longer wanted is kept in the cache but not shown."""

from __future__ import annotations

from typing import Any

from hetlab.errors import HetlabError
from hetlab.widgets import draw
from hetlab.widgets.controls import say
from hetlab.widgets.params import ParamPanel
from hetlab.widgets.plans import plan_key, solve
from hetlab.widgets.tasks import Cancelled

# slot (the plan trait) -> (its algorithm dropdown, the box of that algorithm's controls)
SLOTS = {
    "ilp_plan": ("ilp_select", "ilp_params"),
    "greedy_plan": ("algo_select", "compared_params"),
}


class Solving:
    """Mixed into ``Workbench``: parameter panels, the plan cache and the solves."""

    problem: Any
    plans: Any
    tasks: Any
    ilp_time_limit: float | None
    _panels: dict[tuple[str, str], ParamPanel]
    _want: dict[str, Any]
    _inflight: dict[str, Any]

    def panel(self, slot: str, algo: str | None = None) -> ParamPanel:
        """The parameter controls of ``algo`` (default: the chosen one) in ``slot``."""
        algo = algo or getattr(self, SLOTS[slot][0]).value
        if (slot, algo) not in self._panels:
            p = ParamPanel(algo)
            if "time_limit" in p.controls and self.ilp_time_limit is not None:
                p.controls["time_limit"].value = self.ilp_time_limit
            p.resolve(self.problem)
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
            fig, label = draw.slot_figure(self, slot)
            if self.problem is None:
                self._want[slot] = None
                fig.message(f"{label}: no profile to schedule yet")
                return
            problem, algo, params = self.problem, draw.slot_algo(self, slot), self._params(slot)
            key = plan_key(self._pkey or "", algo, params)
            self._want[slot] = key
            cached = self.plans.get(key)
            if cached is not None:
                self.tasks.cancel(slot)
                setattr(self, slot, cached)
                say(self.solve_status, f"{label}: {algo} plan from the cache", "ok")
                return
            task = self._inflight.get(slot)
            if task is not None and task[0] == key and not task[1].cancelled.is_set():
                return  # already being solved
            say(self.solve_status, f"{label}: solving {algo}...")
            if fig.fig is None:
                fig.message(f"{label}: solving...")
            t = self.tasks.submit(
                slot,
                lambda task: solve(problem, algo, params, task.progress),
                lambda plan: self._solved(slot, key, plan),
                lambda e: self._solve_failed(slot, key, e),
                on_progress=lambda d, n, m: self._solve_progress(label, d, n, m),
                supersede=True,
            )
            self._inflight[slot] = (key, t)
            self._busy()

    def _solved(self, slot: str, key: Any, plan: Any) -> None:
        self.plans.put(key, plan)
        if self._want.get(slot) == key:  # else a newer request wants another plan
            setattr(self, slot, plan)
            say(self.solve_status, f"{plan.algo}: solved in {plan.solve_seconds:.2f} s", "ok")

    def _solve_failed(self, slot: str, key: Any, e: BaseException) -> None:
        if self._want.get(slot) != key:
            return
        fig, label = draw.slot_figure(self, slot)
        msg = str(e) if isinstance(e, HetlabError) else f"{type(e).__name__}: {e}"
        if isinstance(e, Cancelled):
            msg = "solve cancelled"
        fig.message(f"{label}: {msg}")
        say(self.solve_status, f"{label}: {msg}", "warn")

    def _solve_progress(self, label: str, done: int, total: int, msg: str) -> None:
        with self._ui:
            say(self.solve_status, f"{label}: {msg or f'step {done}/{total}'}")
