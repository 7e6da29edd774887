"""Shared helpers of the figure functions: palettes, number formats, plan/run normalization."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from hetlab.errors import HetlabError

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
    """A timeline in ms: ``rows`` of (node, device, start, finish) and what titles show."""

    rows: list[tuple[str, str, float, float]]
    makespan: float
    label: str
    solve_seconds: float | None = None
    predicted: float | None = None
    measured: bool = False
    devices: list[str] | None = None
    subgraphs: list[list[str]] | None = None  # a plan's ``extra["subgraphs"]``


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _subgraphs(groups: Any) -> list[list[str]] | None:
    if not groups:
        return None
    return [[str(v) for v in g] for g in groups]


def as_bars(item: Any, label: str | None = None) -> Bars:
    """Normalize a ``Plan``, a plan JSON dict, or a run report (object or spec §5 dict)."""
    if hasattr(item, "assignments") and not isinstance(item, dict):
        rows = [(a.node, a.device, float(a.start), float(a.finish)) for a in item.assignments]
        b = Bars(rows, float(item.makespan), label or item.algo, float(item.solve_seconds or 0.0))
        b.subgraphs = _subgraphs((getattr(item, "extra", None) or {}).get("subgraphs"))
        return b
    doc = item
    if not isinstance(doc, dict):
        tl = _get(item, "timeline")
        if tl is None and hasattr(item, "to_json"):
            doc = item.to_json()
        else:
            doc = {
                "timeline": tl,
                "latency_ms": _get(item, "latency_ms"),
                "predicted_ms": _get(item, "predicted_ms"),
            }
    if "assignments" in doc:
        rows = [
            (str(a["node"]), str(a["device"]), float(a["start"]), float(a["finish"]))
            for a in doc["assignments"]
        ]
        mk = float(doc.get("makespan", max((r[3] for r in rows), default=0.0)))
        b = Bars(rows, mk, label or str(doc.get("algo", "plan")), doc.get("solve_seconds"))
        b.subgraphs = _subgraphs(doc.get("subgraphs"))
        return b
    tl = doc.get("timeline")
    if tl is None:
        raise HetlabError(
            "cannot draw this object: expected a Plan, a plan JSON or a run report with a timeline"
        )
    rows = []
    for e in tl:
        rows.append(
            (
                str(_get(e, "node")),
                str(_get(e, "device")),
                float(_get(e, "start")),
                float(_get(e, "finish")),
            )
        )
    t0 = min((r[2] for r in rows), default=0.0)
    rows = [(a, b, s - t0, f - t0) for a, b, s, f in rows]
    lat = doc.get("latency_ms")
    mk = max((r[3] for r in rows), default=0.0)
    if isinstance(lat, dict) and lat.get("median") is not None:
        mk_label = float(lat["median"])
    else:
        mk_label = mk
    b = Bars(rows, mk_label, label or "measured", None, doc.get("predicted_ms"), True)
    b.devices = list(doc.get("devices") or {}) or None
    return b
