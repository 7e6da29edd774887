"""What colours a DAG's nodes in ``dag_figure``, and the scale or legend that reads it.

Each choice returns the marker settings, the title's note, a hover suffix per node, and the
layout shapes and annotations of its key (a colour strip for a continuous colour, a line of
swatches for categories). None uses a trace's colour bar (see ``viz.scale``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.errors import HetlabError
from hetlab.viz.common import PALETTE, color_of, device_colors, fmt_ms
from hetlab.viz.layout import DagLayout
from hetlab.viz.scale import colour_strip, nice_ticks, swatch_annotation

COLOURS = "op, best, cost:DEVICE, level, subgraph or a plan"
MIXED = "#555555"  # a scope whose members lie on several devices or subgraphs
NONE = "#bbbbbb"


@dataclass
class Colouring:
    marker: dict[str, Any]
    note: str
    suffix: list[str]
    shapes: list[dict] = field(default_factory=list)
    annotations: list[dict] = field(default_factory=list)

    @property
    def strip(self) -> bool:
        return bool(self.shapes)


def lift(values: dict[str, str], members: dict[str, list[str]] | None) -> dict[str, str]:
    """``values`` (op -> device or subgraph) for the nodes of a collapsed graph: a scope
    takes its members' value when they all share one, else ``"mixed"``."""
    if members is None:
        return values
    out = {}
    for sid, ms in members.items():
        got = {values[m] for m in ms if m in values}
        out[sid] = got.pop() if len(got) == 1 else "mixed" if got else "?"
    return out


def _categories(lay: DagLayout, of: dict[str, str], pal: dict[str, str], what: str) -> Colouring:
    counts = Counter(of.get(v, "?") for v in lay.ids)
    keys = sorted(counts, key=lambda k: (-counts[k], k))
    pal = {**pal, "mixed": MIXED, "?": NONE}
    items = [(f"{k} ({counts[k]})", pal.get(k, NONE)) for k in keys]
    marker = {"color": [pal.get(of.get(v, "?"), NONE) for v in lay.ids]}
    suffix = [f"<br>{what}: {of.get(v, '?')}" for v in lay.ids]
    return Colouring(marker, f" — colour: {what}", suffix, [], [swatch_annotation(items)])


def by_op(lay: DagLayout) -> Colouring:
    of = dict(zip(lay.ids, lay.op_types, strict=True))
    pal = {o: color_of(o) for o in set(lay.op_types)}
    return _categories(lay, of, pal, "op type")


def by_best(lay: DagLayout, costs: tuple[list[str], np.ndarray] | None) -> Colouring:
    """Each node in the colour of the device that runs it fastest (grey: none can)."""
    if costs is None:
        raise HetlabError("colour by fastest device needs costs: pass a problem")
    devs, cm = costs
    ok = np.isfinite(cm).any(axis=1)
    best = np.argmin(np.where(np.isfinite(cm), cm, np.inf), axis=1)
    of = {v: devs[int(best[i])] if ok[i] else "?" for i, v in enumerate(lay.ids)}
    return _categories(lay, of, device_colors(devs), "fastest device")


def by_devices(lay: DagLayout, dmap: dict[str, str], members) -> Colouring:
    of = lift(dmap, members)
    devs = sorted(set(dmap.values()))
    return _categories(lay, of, device_colors(devs), "device")


def by_subgraph(lay: DagLayout, groups: list[list[str]], members) -> Colouring:
    of = lift({v: f"subgraph {k}" for k, g in enumerate(groups) for v in g}, members)
    pal = {f"subgraph {k}": PALETTE[k % len(PALETTE)] for k in range(len(groups))}
    c = _categories(lay, of, pal, "subgraph")
    c.note = f" — colour: {len(groups)} subgraphs"
    return c


def by_level(lay: DagLayout) -> Colouring:
    """HOPE's level (``graph/levels.py``), Viridis."""
    r = lay.level.astype(float)
    lo, hi = float(r.min(initial=1)), float(r.max(initial=1))
    shapes, ann = colour_strip(lo, hi, "Viridis", "level", nice_ticks(lo, hi), _int)
    marker = {"color": r.tolist(), "colorscale": "Viridis", "cmin": lo, "cmax": hi}
    note = " — colour: level"
    return Colouring({**marker, "showscale": False}, note, [""] * len(lay.ids), shapes, ann)


def by_cost(lay: DagLayout, costs, dev: str) -> Colouring:
    """log10 of the cost on ``dev``, Plasma; an x marks a node the device cannot run."""
    if costs is None or dev not in costs[0]:
        raise HetlabError(f"no costs for device {dev!r}: pass a problem profiled on it")
    c = costs[1][:, costs[0].index(dev)]
    ok = np.isfinite(c)
    pos = c[ok & (c > 0)]
    floor = float(pos.min()) if pos.size else 1e-3
    z = np.log10(np.where(ok, np.maximum(c, floor), floor))
    lo, hi = float(z.min(initial=0.0)), float(z.max(initial=0.0))
    ticks = [float(e) for e in range(int(np.ceil(lo)), int(np.floor(hi)) + 1)] or [lo]
    shapes, ann = colour_strip(lo, hi, "Plasma", f"{dev}<br>ms (log)", ticks, _ms)
    marker = {
        "color": z.tolist(),
        "colorscale": "Plasma",
        "cmin": lo,
        "cmax": hi,
        "showscale": False,
        "symbol": np.where(ok, "circle", "x").tolist(),
    }
    note = f" — colour: cost on {dev} (x = cannot run)"
    return Colouring(marker, note, [""] * len(lay.ids), shapes, ann)


def colouring(lay, color: Any, costs, groups, members) -> Colouring:
    """The ``Colouring`` named by ``color`` (see ``dag_figure``)."""
    if isinstance(color, str):
        if color == "op":
            return by_op(lay)
        if color == "best":
            return by_best(lay, costs)
        if color in ("level", "uprank"):  # "uprank": HOPE's name, kept as an alias
            return by_level(lay)
        if color.startswith("cost:"):
            return by_cost(lay, costs, color[5:])
        if color == "subgraph":
            if not groups:
                raise HetlabError("colour by subgraph needs a plan with subgraphs (subgraphs=plan)")
            return by_subgraph(lay, groups, members)
        raise HetlabError(f"unknown colour {color!r}: use {COLOURS}")
    dmap = color.device_of if hasattr(color, "device_of") else _device_map(color)
    return by_devices(lay, dmap, members)


def _device_map(obj: Any) -> dict[str, str]:
    if isinstance(obj, dict) and "assignments" in obj:
        return {str(a["node"]): str(a["device"]) for a in obj["assignments"]}
    try:
        return {str(k): str(v) for k, v in dict(obj).items()}
    except (TypeError, ValueError):
        raise HetlabError(
            f"cannot colour by a {type(obj).__name__}: use {COLOURS} or a node -> device map"
        ) from None


def _int(v: float) -> str:
    return f"{v:.0f}"


def _ms(e: float) -> str:
    return fmt_ms(10**e)
