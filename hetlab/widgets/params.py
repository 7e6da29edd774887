"""Controls built from the scheduler registry's ``Param`` specs, one panel per algorithm.

Every parameter gets a control, and its default from the registry (``defaults``) alone: a
slider where the range is small and bounded, a number box otherwise, a checkbox for a bool, a
dropdown for a choice. A parameter whose default is ``None`` (the algorithm decides, e.g.
greedy's K from the device count) gets an "auto" checkbox beside its number: ticked, the
algorithm's own choice is used, and shown once a problem is loaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ipywidgets as W
import traitlets

from hetlab.cost.problem import Problem
from hetlab.schedulers.base import Param, algorithm, defaults

SYMBOLS = {"epsilon": "ε", "nt": "NT", "k": "K"}  # the paper's names, in labels and titles
# the unit of each parameter that has one, in its label (the registry's help says the same)
UNITS = {
    "time_limit": "s per window",
    "node_limit": "B&B nodes per window",
    "nt": "ops",
    "merge_threshold": "ms",
    "gap": "share of the work",
}
STYLE = {"description_width": "initial"}
SLIDER_SPAN = 100  # a wider range gets a number box: a slider step would skip most values
TRACK_PX = 300  # a slider's track: at 100 steps, 3 px a step
READOUT_PX = 70  # the slider's readout, which takes a typed value too


def label(p: Param) -> str:
    """``ε (epsilon)``, ``time_limit (s per window)``: the paper's symbol and the unit."""
    sym, unit = SYMBOLS.get(p.name), UNITS.get(p.name)
    inner = ", ".join(x for x in (p.name if sym else None, unit) if x)
    head = sym or p.name
    return f"{head} ({inner})" if inner else head


def _choices(p: Param) -> list[Any] | None:
    return list(getattr(p, "choices", None) or []) or None


def _numeric(p: Param, value: Any) -> W.ValueWidget:
    lo = p.low if p.low is not None else (0 if p.kind == "int" else 0.0)
    bounded = p.low is not None and p.high is not None and p.high - p.low <= SLIDER_SPAN
    text = 7 * len(label(p)) + 20  # the label, at about 7 px a character
    width = text + TRACK_PX + READOUT_PX if bounded else max(250, text + 90)  # label and box
    common = {
        "description": label(p),
        "style": STYLE,
        "continuous_update": False,
        "layout": W.Layout(width=f"{width}px"),
    }
    if p.kind == "int":
        hi = int(p.high) if p.high is not None else 2**31 - 1
        if bounded:
            return W.IntSlider(value=value, min=int(lo), max=hi, step=1, **common)
        return W.BoundedIntText(value=value, min=int(lo), max=hi, **common)
    hi = float(p.high) if p.high is not None else 1e12
    if bounded:
        step = (hi - lo) / 100
        return W.FloatSlider(value=value, min=lo, max=hi, step=step, readout_format=".3g", **common)
    return W.BoundedFloatText(value=value, min=lo, max=hi, **common)


class Auto(W.HBox):
    """A number that may be left to the algorithm: ``value`` is None while "auto" is ticked."""

    value = traitlets.Any(None, allow_none=True)

    def __init__(self, inner: W.ValueWidget) -> None:
        self.inner = inner
        self._setting = False
        self.auto = W.Checkbox(value=True, description="auto", indent=False)
        self.auto.layout.width = "60px"
        inner.disabled = True
        super().__init__([inner, self.auto])
        self.auto.observe(self._sync, "value")
        inner.observe(self._sync, "value")

    def show_default(self, value: Any) -> None:
        """Name the algorithm's own choice beside "auto" (and show it while ticked)."""
        self.auto.description = "auto" if value is None else f"auto ({value})"
        self.auto.layout.width = "60px" if value is None else "90px"
        if value is not None and self.auto.value:
            self._setting = True
            try:
                self.inner.value = value
            finally:
                self._setting = False

    @property
    def continuous_update(self) -> bool:
        return bool(self.inner.continuous_update)

    def _sync(self, _: Any = None) -> None:
        if self._setting:
            return
        self.inner.disabled = self.auto.value
        self.value = None if self.auto.value else self.inner.value

    @traitlets.observe("value")
    def _set(self, change: dict) -> None:
        v = change["new"]
        self._setting = True
        try:
            if v is not None:
                self.inner.value = v
            self.auto.value = v is None
            self.inner.disabled = v is None
        finally:
            self._setting = False


def control(p: Param, default: Any) -> W.DOMWidget:
    """The control of one parameter, showing ``default`` (the registry's)."""
    choices = _choices(p)
    tip = p.help or p.name
    if choices:
        w: W.DOMWidget = W.Dropdown(
            options=choices, value=default, description=label(p), style=STYLE
        )
    elif p.kind == "bool":
        w = W.Checkbox(value=bool(default), description=label(p), indent=False)
    elif default is None:
        w = Auto(_numeric(p, p.low if p.low is not None else 0))
    else:
        w = _numeric(p, default)
    if isinstance(w, W.IntSlider | W.FloatSlider):
        tip += " (drag, or click the number and type a value)"
    # a Box's tooltip breaks its view in ipywidgets 8.1 (updateTooltip): the inner control's
    (w.inner if isinstance(w, Auto) else w).tooltip = tip
    return w


def _tidy(v: Any) -> Any:
    return float(f"{v:.10g}") if isinstance(v, float) else v


class ParamPanel(W.HBox):
    """The controls of one algorithm's parameters; ``values()`` reads them."""

    def __init__(self, algo: str, skip: tuple[str, ...] = ()) -> None:
        self.algo = algo
        self.params = [p for p in algorithm(algo).params if p.name not in skip]
        given = defaults(algo)
        # what a value is reset to when it does not fit a model (the workbench may change it)
        self.defaults = {p.name: given[p.name] for p in self.params}
        self.controls = {p.name: control(p, given[p.name]) for p in self.params}
        self._quiet = 0
        super().__init__(
            list(self.controls.values()) or [W.HTML(f"<i>{algo} has no parameters</i>")],
            layout=W.Layout(flex_flow="row wrap"),
        )

    def values(self) -> dict[str, Any]:
        """The chosen values; floats to 10 significant digits, so that a slider moved back to
        a value gives the same parameters (and the cached plan) despite binary rounding."""
        return {name: _tidy(w.value) for name, w in self.controls.items()}

    def resolve(self, problem: Problem | None) -> None:
        """Show, beside each "auto", what the algorithm chooses for ``problem``."""
        resolved = defaults(self.algo, problem)
        for name, w in self.controls.items():
            if isinstance(w, Auto):
                w.show_default(resolved.get(name))

    def observe_values(self, callback: Any) -> None:
        """Call ``callback`` when a value changes (not while ``quiet``)."""
        for w in self.controls.values():
            w.observe(lambda _: None if self._quiet else callback(), "value")

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Set values without calling the ``observe_values`` callbacks (a reset whose solve
        the caller asks for itself)."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1
