"""What-if platform controls: scale each device's speed and the links' bandwidth and latency
of the loaded profile (``hetlab.cost.whatif``), to see when heterogeneity pays. A what-if
problem is no measurement: the workbench labels every figure drawn from it, and only replays
it on fake devices."""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from hetlab.cost.problem import Problem
from hetlab.cost.whatif import what_if

SLIDER = {
    "value": 1.0,
    "base": 10,
    "min": -1.0,  # x0.1
    "max": 1.0,  # x10
    "step": 0.05,
    "readout_format": ".2f",
    "continuous_update": False,
    "style": {"description_width": "initial"},
    "layout": W.Layout(width="260px"),
}


class WhatIf(W.VBox):
    """Log sliders from x0.1 to x10: one speed per device, link bandwidth, link latency."""

    def __init__(self) -> None:
        self.speed: dict[str, W.FloatLogSlider] = {}
        self.bandwidth = W.FloatLogSlider(description="link bandwidth ×", **SLIDER)
        self.latency = W.FloatLogSlider(description="link latency ×", **SLIDER)
        self.reset_button = W.Button(description="measured", icon="undo", tooltip="all x1")
        self.reset_button.on_click(lambda _: self.reset())
        self._callback: Any = None
        self.bandwidth.observe(self._changed, "value")
        self.latency.observe(self._changed, "value")
        self._speeds = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        super().__init__(
            [
                self._speeds,
                W.HBox([self.bandwidth, self.latency, self.reset_button]),
            ]
        )

    def on_change(self, callback: Any) -> None:
        self._callback = callback

    def set_devices(self, devices: list[str]) -> None:
        """One speed slider per device of the loaded profile, all at x1."""
        self.speed = {d: W.FloatLogSlider(description=f"{d} speed ×", **SLIDER) for d in devices}
        for s in self.speed.values():
            s.observe(self._changed, "value")
        self._speeds.children = list(self.speed.values())
        self.reset(notify=False)

    def factors(self) -> dict[str, Any]:
        return {
            "speed": {d: s.value for d, s in self.speed.items() if s.value != 1.0},
            "bandwidth": self.bandwidth.value,
            "latency": self.latency.value,
        }

    def active(self) -> bool:
        f = self.factors()
        return bool(f["speed"]) or f["bandwidth"] != 1.0 or f["latency"] != 1.0

    def apply(self, problem: Problem) -> Problem:
        """``problem`` itself at x1 everywhere, else its what-if copy."""
        return what_if(problem, **self.factors()) if self.active() else problem

    def describe(self) -> str:
        f = self.factors()
        parts = [f"{d} speed ×{v:.2f}" for d, v in f["speed"].items()]
        parts += [f"{k} ×{f[k]:.2f}" for k in ("bandwidth", "latency") if f[k] != 1.0]
        return ", ".join(parts)

    def reset(self, notify: bool = True) -> None:
        cb, self._callback = self._callback, None
        try:
            for s in [*self.speed.values(), self.bandwidth, self.latency]:
                s.value = 1.0
        finally:
            self._callback = cb
        if notify:
            self._changed()

    def _changed(self, _: Any = None) -> None:
        if self._callback is not None:
            self._callback()
