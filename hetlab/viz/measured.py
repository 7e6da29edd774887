"""A run report's timeline as what was measured, and no finer (spec §5).

A timeline entry is a node's own interval where its device timed it (``"timed": true``, or
no ``unit`` field); else the entries of a
unit share the unit's one measured interval, split over its nodes by weight (flops): the
split is an estimate. A unit measured as a whole is therefore one span here, and its per-node
shares are kept apart as estimates. A unit's entries are its shares when they carry its
``unit`` field and tile its interval end to end; entries that leave gaps or overlap (a
device's own timings of its kernels; no split does) and a unit's only entry are each a
node's own interval. ``"approx": true`` marks a unit whose end the host saw only at the end of its
device's work (an OpenCL group enqueued ahead of time, a CUDA graph): such units on one device
that end together were not timed one by one, so they are one span, from the first one's start
to their common end, named ``"units K-L"`` (``"unit K"`` for one unit). A ``RunReport`` object
(not its JSON) also carries its events: the host -> device and device -> host copies are then
drawn as the run's transfers.

Every span here is an ``Interval`` in ms: a node's (kind ``"node"``), a unit's measured as
a whole (``"unit"``, named ``"unit K"``) and a copy's (``"copy"``, on its link).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from hetlab.timeline import Interval

TILE_TOL = 1e-6  # ms: consecutive shares of a unit meet exactly (one value rounded once)


def transfer(src: str, dst: str, link: str, start: float, finish: float) -> Interval:
    """One copy ``src -> dst`` (node or tensor, to node or unit) on ``link`` ("a→b"), in ms:
    an interval of kind ``"copy"`` on the link's row, named ``"src→dst"``."""
    return Interval("copy", link, f"{src}→{dst}", start, finish, {"src": src, "dst": dst})


def get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` of a dict, else its attribute."""
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


@dataclass
class Measured:
    """``rows``: a node's interval, or a unit's (named ``"unit K"``) measured as a whole;
    ``members``: the nodes of each unit row; ``shares``: the estimated per-node rows inside
    those units; ``approx``: the names whose end is approximate; ``moves``: the copies, or
    None when the report does not carry its events."""

    rows: list[Interval]
    members: dict[str, list[str]] = field(default_factory=dict)
    shares: list[Interval] = field(default_factory=list)
    approx: set[str] = field(default_factory=set)
    moves: list[Interval] | None = None


def _entry(e: Any) -> Interval:
    return Interval(
        "node",
        str(get(e, "device")),
        str(get(e, "node")),
        float(get(e, "start")),
        float(get(e, "finish")),
    )


def _tiles(es: list[Any]) -> bool:
    return all(
        abs(float(get(b, "start")) - float(get(a, "finish"))) <= TILE_TOL
        for a, b in itertools.pairwise(es)
    )


def measured(timeline: list[Any], events: list[Any] | None = None) -> Measured:
    """The spans of ``timeline`` (see the module doc), on the run's clock."""
    out = Measured([])
    units: dict[tuple[int, str], list[Any]] = {}
    for e in timeline:
        u = get(e, "unit")
        if u is None or (get(e, "timed") and not get(e, "approx")):
            out.rows.append(_entry(e))
        else:
            units.setdefault((int(u), str(get(e, "device"))), []).append(e)
    together: dict[tuple[str, float], list[tuple[int, list[Any]]]] = {}
    for (u, dev), es in sorted(units.items()):
        es.sort(key=lambda e: (float(get(e, "start")), float(get(e, "finish"))))
        if any(get(e, "approx") for e in es):
            end = round(max(float(get(e, "finish")) for e in es), 3)
            together.setdefault((dev, end), []).append((u, es))
        elif len(es) == 1 or not _tiles(es):
            out.rows += [_entry(e) for e in es]
        else:
            key = f"unit {u}"
            start, finish = float(get(es[0], "start")), max(float(get(e, "finish")) for e in es)
            out.rows.append(Interval("unit", dev, key, start, finish, {"unit": u}))
            out.members[key] = [str(get(e, "node")) for e in es]
            out.shares += [_entry(e) for e in es]
    for (dev, _end), group in sorted(together.items()):
        _untimed(out, dev, group)
    if events is not None:
        out.moves = copies(events)
    return out


def _untimed(out: Measured, dev: str, group: list[tuple[int, list[Any]]]) -> None:
    """Units of ``dev`` that ended together, their ends approximate: one span, from the
    first one's start to that end, with every node of them as its members."""
    first, last = group[0][0], group[-1][0]
    key = f"unit {first}" if first == last else f"units {first}-{last}"
    es = [e for _u, part in group for e in part]
    start = min(float(get(e, "start")) for e in es)
    finish = max(float(get(e, "finish")) for e in es)
    units = [u for u, _part in group]
    out.rows.append(Interval("unit", dev, key, start, finish, {"unit": first, "units": units}))
    out.members[key] = [str(get(e, "node")) for e in es]
    if len(group) == 1 and len(es) > 1 and _tiles(es):
        out.shares += [_entry(e) for e in es]
    out.approx.add(key)


def copies(events: list[Any]) -> list[Interval]:
    """The host -> device (``recv``) and device -> host (``send``) copies of a run's events."""
    out = []
    for ev in events:
        kind, dev = get(ev, "kind"), str(get(ev, "device"))
        if kind not in ("recv", "send"):
            continue
        name = str(get(ev, "name"))
        src, dst = ("host", dev) if kind == "recv" else (dev, "host")
        s, f = float(get(ev, "start")), float(get(ev, "finish"))
        out.append(
            transfer(name, f"unit {get(ev, 'args', {}).get('unit', '?')}", f"{src}→{dst}", s, f)
        )
    return out
