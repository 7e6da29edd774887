"""What a stretch plan (``transform``) is made of, and what it is made under: the
``CostModel`` it is estimated with, the paper's ``Constraints`` (NN-Stretch, Wei et al.
MobiSys'23, §4.2-4.3: ``alpha`` eq. 4, ``beta`` eq. 5, ``share_tol`` eq. 6, the capacity
bounds), and the ``StretchPlan`` of ``BranchedSegment``s, one ``Branch`` per device. Times in
ms, FLOPs as in ``hetlab.graph.flops``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hetlab.stretch.segments import Layout


@dataclass
class CostModel:
    """Per device: ``throughput`` (FLOPs per ms) and ``overhead`` (ms per node); one
    ``link`` (latency ms, bandwidth bytes/ms) between any two devices."""

    throughput: dict[str, float]
    overhead: dict[str, float] = field(default_factory=dict)
    link: tuple[float, float] = (0.05, 5e6)

    def node_ms(self, device: str, flops: float) -> float:
        return self.overhead.get(device, 0.0) + flops / self.throughput[device]

    def comm_ms(self, nbytes: float) -> float:
        return self.link[0] + nbytes / self.link[1]


@dataclass
class Constraints:
    alpha: float = 0.1
    beta: float = 1.1
    min_depth: float = 0.5
    min_width: float = 0.5
    capacity: float = 1.0
    capacity_tol: float = 0.1
    share_tol: float = 0.1


@dataclass
class Branch:
    device: str
    layout: Layout
    restore: int  # output channels its 1x1 conv restores
    flops: float  # with the restore conv
    latency_ms: float


@dataclass
class BranchedSegment:
    """Consecutive segments ``segs`` branched into ``branches`` (meeting points: ``input``
    where they fork, ``output`` where they are concatenated)."""

    segs: list[int]
    nodes: list[str]
    input: str
    output: str
    flops: float
    latency_ms: dict[str, float]  # the original segment on each device
    comm_ms: float
    branches: list[Branch]

    def summary(self) -> dict[str, Any]:
        return {
            "segments": self.segs,
            "input": self.input,
            "output": self.output,
            "flops": self.flops,
            "comm_ms": round(self.comm_ms, 4),
            "latency_ms": {d: round(x, 4) for d, x in self.latency_ms.items()},
            "branches": [
                {
                    "device": b.device,
                    "depth": b.layout.depth,
                    "width": b.layout.width,
                    "restore": b.restore,
                    "flops": b.flops,
                    "latency_ms": round(b.latency_ms, 4),
                }
                for b in self.branches
            ],
        }


@dataclass
class StretchPlan:
    devices: list[str]
    constraints: Constraints
    strategy: str
    meeting: str
    parts: list[BranchedSegment]
    predicted_ms: float | None = None

    def summary(self) -> dict[str, Any]:
        c = self.constraints
        return {
            "devices": self.devices,
            "strategy": self.strategy,
            "meeting": self.meeting,
            "alpha": c.alpha,
            "beta": c.beta,
            "min_depth": c.min_depth,
            "min_width": c.min_width,
            "capacity": c.capacity,
            "predicted_ms": self.predicted_ms,
            "parts": [p.summary() for p in self.parts],
        }
