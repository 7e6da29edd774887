"""Whether the parameters chosen for one model fit the next, and what a slider move costs.

The parameter panels outlive a model: on a model switch a value set for the previous model is
kept where it fits the new one and reset to its default where it does not, and the workbench
says which in one line (``refit``). A value does not fit when it lies outside its parameter's
bounds, when it counts operators (NT, K) beyond the new model's operator count where the
default does not, or when the ILP's estimate (``estimate``) says that with it one move would
take more than ``MOVE_BUDGET_S`` where the default would not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hetlab.widgets.params import SYMBOLS, ParamPanel

MOVE_BUDGET_S = 3.0  # what one slider move may take on two cores
OP_COUNTS = ("nt", "k")  # parameters that count operators


@dataclass(frozen=True)
class Estimate:
    """What one solve of an ILP scheduler may take: its longest window and its windows."""

    window_s: float
    windows: int
    total: float | None = None  # the whole solve, where the scheduler estimates it apart

    @property
    def total_s(self) -> float:
        return self.window_s * self.windows if self.total is None else self.total


def estimate(problem: Any, algo: str, params: dict[str, Any]) -> Estimate | None:
    """How long ``algo`` with ``params`` may take on ``problem`` on this machine, as the
    scheduler estimates it from its work budget; None where it gives no estimate (an
    algorithm that solves no ILP, or no estimate known). The workbench's budget line and
    the reset of an NT that cannot meet ``MOVE_BUDGET_S`` read it; this body is the one place
    that asks the schedulers."""
    from hetlab.schedulers.ilp_work import SECONDS_PER_ROW2
    from hetlab.schedulers.ilp_work import estimate as ilp_estimate

    if algo not in ("ilp", "ilp+") or "nt" not in params:
        return None
    passes = int(params.get("passes") or 0) if algo == "ilp+" else 0
    e = ilp_estimate(problem, int(params["nt"]), params.get("epsilon"), passes)
    window = (1 + passes) * SECONDS_PER_ROW2 * e.rows_max**2
    return Estimate(window_s=window, windows=e.windows, total=e.seconds)


def _name(p_name: str) -> str:
    return SYMBOLS.get(p_name, p_name)


def budget_line(problem: Any, algo: str, params: dict[str, Any]) -> str:
    """One line when ``params`` make a move of ``algo`` on ``problem`` slower than the
    budget (else ""), e.g. "NT=20 on this model: each ILP window may take up to ~8 s"."""
    if problem is None:
        return ""
    e = estimate(problem, algo, params)
    if e is None or e.total_s <= MOVE_BUDGET_S:
        return ""
    knob = f"NT={params['nt']} on this model" if "nt" in params else f"{algo} on this model"
    return (
        f"{knob}: each ILP window may take up to ~{e.window_s:.2g} s, ~{e.total_s:.2g} s for "
        f"its {e.windows} windows, more than the {MOVE_BUDGET_S:g} s a move should take: "
        "a smaller NT answers sooner"
    )


def _slow(problem: Any, algo: str, params: dict[str, Any]) -> Estimate | None:
    e = estimate(problem, algo, params)
    return e if e is not None and e.total_s > MOVE_BUDGET_S else None


def misfit(panel: ParamPanel, problem: Any, name: str, value: Any) -> str | None:
    """Why ``value`` of parameter ``name`` of ``panel`` does not fit ``problem`` (None: it
    fits, or it is the default)."""
    default = panel.defaults[name]
    if value is None or value == default:
        return None
    p = next(q for q in panel.params if q.name == name)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if p.low is not None and value < p.low:
            return f"below its least, {p.low:g}"
        if p.high is not None and value > p.high:
            return f"above its most, {p.high:g}"
        ops = len(problem.nodes)
        if name in OP_COUNTS and value > ops and (default is None or default <= ops):
            return f"more than the model's {ops} ops"
    params = panel.values()
    slow = _slow(problem, panel.algo, {**params, name: value})
    if slow and not _slow(problem, panel.algo, {**params, name: default}):
        return f"each ILP window may take up to ~{slow.window_s:.2g} s on this model"
    return None


def refit(panels: list[ParamPanel], problem: Any) -> tuple[list[str], list[str]]:
    """Reset each value of ``panels`` that does not fit ``problem`` to its default; the
    resets ("NT 20 → 12 (why)") and the values kept ("ε=0.3"), by the names users see."""
    resets: list[str] = []
    kept: list[str] = []
    for panel in panels:
        for name, w in panel.controls.items():
            value, default = w.value, panel.defaults[name]
            why = misfit(panel, problem, name, value)
            if why:
                with panel.quiet():
                    w.value = default
                shown = "auto" if default is None else default
                resets.append(f"{_name(name)} {value} → {shown} ({why})")
            elif value is not None and value != default:
                kept.append(f"{_name(name)}={value}")
    return sorted(set(resets)), sorted(set(kept))


def refit_line(resets: list[str], kept: list[str], model: str) -> tuple[str, str]:
    """The one line that says what ``refit`` did for ``model``, and its kind."""
    parts = []
    if resets:
        parts.append(f"reset for {model}, as they do not fit it: " + "; ".join(resets))
    if kept:
        parts.append("kept from the previous model: " + ", ".join(kept))
    return " · ".join(parts), "warn" if resets else "info"
