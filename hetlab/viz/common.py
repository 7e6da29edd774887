"""Shared helpers of the figure functions: palettes, number formats, plan/run normalization."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Any

from hetlab.errors import HetlabError
from hetlab.timeline import Interval
from hetlab.viz.measured import get, measured

PALETTE = [
    "#4C78A8",
    "#F58518",
    "#54A24B",
    "#E45756",
    "#72B7B2",
    "#EECA3B",
    "#B279A2",
    "#FF9DA6",
    "#9D755D",
    "#BAB0AC",
    "#1B9E77",
    "#7570B3",
    "#D95F02",
    "#66A61E",
]
FONT = {"family": "DejaVu Sans, Arial, sans-serif", "size": 12}


def color_of(key: str, fixed: dict[str, str] | None = None) -> str:
    """A stable colour for a category (same op type -> same colour in every figure)."""
    if fixed and key in fixed:
        return fixed[key]
    return PALETTE[zlib.crc32(key.encode()) % len(PALETTE)]


def device_colors(devices: list[str]) -> dict[str, str]:
    return {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(devices)}


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "n/a"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 1:
        return f"{v:.2f} ms"
    return f"{v:.3g} ms"


@dataclass
class Bars:
    """A timeline in ms: ``rows``, one interval per bar (a node's, or a unit's measured as a
    whole, named ``"unit K"``), and what titles show."""

    rows: list[Interval]
    makespan: float
    label: str
    solve_seconds: float | None = None
    predicted: float | None = None
    measured: bool = False
    devices: list[str] | None = None
    subgraphs: list[list[str]] | None = None  # a plan's ``extra["subgraphs"]``
    # a measured run (``viz.measured``): a unit row's nodes, the estimated per-node shares
    # inside those units, the rows whose end is approximate, the copies (None: unknown), and
    # the report's ``critical_path`` terms
    members: dict[str, list[str]] = field(default_factory=dict)
    shares: list[Interval] = field(default_factory=list)
    approx: set[str] = field(default_factory=set)
    moves: list[Interval] | None = None
    breakdown: dict[str, Any] | None = None
    replay: dict[str, Any] | None = None  # a replay's report key (spec §5): not a measurement

    def nodes_of(self, key: str) -> list[str]:
        """The nodes of row ``key``: a unit's members, else the node itself."""
        return self.members.get(key, [key])


def _subgraphs(groups: Any) -> list[list[str]] | None:
    if not groups:
        return None
    return [[str(v) for v in g] for g in groups]


def _row(node: Any, device: Any, start: Any, finish: Any) -> Interval:
    """A plan's bar: a node's predicted interval."""
    return Interval("node", str(device), str(node), float(start), float(finish))


def as_bars(item: Any, label: str | None = None) -> Bars:
    """Normalize a ``Plan``, a plan JSON dict, or a run report (object or spec §5 dict)."""
    if hasattr(item, "assignments") and not isinstance(item, dict):
        rows = [_row(a.node, a.device, a.start, a.finish) for a in item.assignments]
        b = Bars(rows, float(item.makespan), label or item.algo, float(item.solve_seconds or 0.0))
        b.subgraphs = _subgraphs((getattr(item, "extra", None) or {}).get("subgraphs"))
        return b
    doc, events = item, None
    if not isinstance(doc, dict):
        tl = get(item, "timeline")
        events = get(item, "events") or None
        if tl is None and hasattr(item, "to_json"):
            doc = item.to_json()
        else:
            doc = {
                "timeline": tl,
                "latency_ms": get(item, "latency_ms"),
                "predicted_ms": get(item, "predicted_ms"),
                "devices": get(item, "devices"),
                "critical_path": (get(item, "extra") or {}).get("critical_path"),
                "replay": (get(item, "extra") or {}).get("replay"),
            }
    if "assignments" in doc:
        rows = [_row(a["node"], a["device"], a["start"], a["finish"]) for a in doc["assignments"]]
        mk = float(doc.get("makespan", max((r.finish for r in rows), default=0.0)))
        b = Bars(rows, mk, label or str(doc.get("algo", "plan")), doc.get("solve_seconds"))
        b.subgraphs = _subgraphs(doc.get("subgraphs"))
        return b
    if doc.get("timeline") is None:
        raise HetlabError(
            "cannot draw this object: expected a Plan, a plan JSON or a run report with a timeline"
        )
    return run_bars(doc, label, events)


def run_bars(doc: dict[str, Any], label: str | None, events: list[Any] | None = None) -> Bars:
    """The ``Bars`` of a run report: what was measured (``viz.measured``), from the first
    thing measured (t = 0)."""
    m = measured(doc["timeline"], events)
    t0 = min([r.start for r in m.rows] + [t.start for t in m.moves or []], default=0.0)

    def shift(rows: list[Interval]) -> list[Interval]:
        return [replace(r, start=r.start - t0, finish=r.finish - t0) for r in rows]

    lat = doc.get("latency_ms")
    mk = max((r.finish for r in m.rows), default=t0) - t0
    if isinstance(lat, dict) and lat.get("median") is not None:
        mk = float(lat["median"])
    b = Bars(shift(m.rows), mk, label or "measured", None, doc.get("predicted_ms"), True)
    b.devices = list(doc.get("devices") or {}) or None
    b.members, b.shares, b.approx = m.members, shift(m.shares), m.approx
    b.moves = None if m.moves is None else shift(m.moves)
    b.breakdown = doc.get("critical_path") or None
    b.replay = doc.get("replay") or None
    return b
