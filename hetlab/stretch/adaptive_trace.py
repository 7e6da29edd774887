"""What an adaptive loop (``adaptive``) is told and what it records: ``AdaptiveConfig`` (when
to switch away, when back), ``RunPoint`` (one run: its latency, plan, devices, slowdowns) and
``AdaptiveTrace`` (the runs, the calibrated baseline, the switches and marks such as
interference on/off), JSON for ``viz.adaptive`` and ``figure``. Times in ms."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from hetlab.errors import HetlabError


@dataclass
class AdaptiveConfig:
    threshold: float = 1.5
    patience: int = 2
    recover: float = 1.25
    probe_every: int = 4
    calibrate: int = 3
    relative: float = 1.25
    algo: str = "heft"

    def __post_init__(self) -> None:
        if self.threshold <= 1 or self.recover <= 0 or self.recover > self.threshold:
            raise HetlabError("adaptive: need threshold > 1 and 0 < recover <= threshold")
        if self.patience < 1 or self.probe_every < 1 or self.calibrate < 1:
            raise HetlabError("adaptive: patience, probe_every and calibrate must be at least 1")


@dataclass
class RunPoint:
    run: int
    latency_ms: float
    plan: str  # "base" or "without:<device>"
    devices: list[str]
    slowdown: dict[str, float]
    probe: bool = False
    note: str = ""


@dataclass
class AdaptiveTrace:
    config: AdaptiveConfig
    baseline_ms: dict[str, float] = field(default_factory=dict)
    runs: list[RunPoint] = field(default_factory=list)
    switches: list[dict[str, Any]] = field(default_factory=list)
    marks: list[dict[str, Any]] = field(default_factory=list)  # e.g. interference on/off

    @property
    def latencies(self) -> list[float]:
        return [r.latency_ms for r in self.runs]

    def switch(self, run: int, frm: str, to: str, device: str, slowdown: float | None) -> None:
        """Record a switch between plans, before run ``run``."""
        self.switches.append(
            {"run": run, "from": frm, "to": to, "device": device, "slowdown": slowdown}
        )

    def median_ms(self) -> float:
        return float(statistics.median(self.latencies)) if self.runs else float("nan")

    def to_json(self) -> dict[str, Any]:
        return {
            "config": asdict(self.config),
            "baseline_ms": self.baseline_ms,
            "median_ms": self.median_ms(),
            "runs": [asdict(r) for r in self.runs],
            "switches": self.switches,
            "marks": self.marks,
        }
