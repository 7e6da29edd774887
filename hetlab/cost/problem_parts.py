"""The parts a problem (spec §2) is made of: its nodes, edges, links and fused groups.

Times are in the problem's ``units``; ``bandwidth`` is in bytes per time unit. A cost of
``None`` means the device cannot run it. Unknown keys of a node or edge are kept in ``extra``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PNode:
    id: str
    cost: dict[str, float | None]
    op_type: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class PEdge:
    src: str
    dst: str
    bytes: float = 0.0
    comm: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Link:
    """Per-transfer ``latency`` (time units) and ``bandwidth`` (bytes per time unit, or None)."""

    latency: float = 0.0
    bandwidth: float | None = None

    def time(self, nbytes: float) -> float:
        return self.latency + (nbytes / self.bandwidth if self.bandwidth else 0.0)


@dataclass
class Group:
    """A chain of adjacent nodes with a measured joint cost when fused on one device."""

    nodes: list[str]
    cost: dict[str, float | None]
