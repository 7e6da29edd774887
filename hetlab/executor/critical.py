"""Where a measured run's time went: its critical path through the units.

For each unit of the median repetition the timeline gives its receives (host -> device),
its run on the device and its sends (device -> host). A unit is *ready* when the previous
unit on its device and every unit it waits for have sent; what passes between ready and its
first receive is *dispatch*: Python picking it up, a thread waking, the GIL. Walking back
from the unit that ends last, each step to the predecessor that made it ready, splits the
measured latency exactly into

    latency = dispatch + copies + run + tail

(``tail``: from the last send to the end of the run). Beside the profile's cost of the same
units (``predicted_run_ms``), this says whether a run slower than predicted lost the time in
the devices (run > predicted) or between them (dispatch). All times in ms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hetlab.devices.bound import UnitSpec
from hetlab.executor.trace import Event
from hetlab.timeline import Interval
from hetlab.timeline import critical_path as timeline_path


@dataclass
class Step:
    """One unit on the path: when it became ready and what it spent (ms)."""

    unit: int
    device: str
    ready: float
    dispatch: float
    copies: float
    run: float
    cross: bool  # made ready by a unit on another device


def unit_times(events: Sequence[Event]) -> dict[int, tuple[float, float, float, float]]:
    """Unit -> (begin, run start, run finish, end) ms: begin is its first receive (or its
    run), end its last send (or its run's finish)."""
    begin: dict[int, float] = {}
    end: dict[int, float] = {}
    run: dict[int, tuple[float, float]] = {}
    for ev in events:
        i = ev.args.get("unit")
        if i is None or ev.kind not in ("unit", "recv", "send"):
            continue
        begin[i] = min(begin.get(i, ev.start), ev.start)
        end[i] = max(end.get(i, ev.finish), ev.finish)
        if ev.kind == "unit":
            run[i] = (ev.start, ev.finish)
    return {i: (begin[i], *run[i], end[i]) for i in run}


def critical_path(specs: Sequence[UnitSpec], events: Sequence[Event]) -> list[Step]:
    """The chain of units that set the run's latency, first unit first (see module doc):
    ``hetlab.timeline.critical_path`` over each unit's span from its first receive to its
    last send, a unit waiting for the units it depends on."""
    t = unit_times(events)
    if not t or len(t) != len(specs):
        return []
    spans = {
        s.index: Interval("unit", s.device, s.label, t[s.index][0], t[s.index][3]) for s in specs
    }
    chain = timeline_path(spans, {s.index: s.deps for s in specs})
    path: list[Step] = []
    for k, i in enumerate(chain):
        by = chain[k - 1] if k else None
        ready = spans[by].finish if by is not None else 0.0
        cross = by is not None and spans[by].device != spans[i].device
        b, rs, rf, e = t[i]
        path.append(Step(i, spans[i].device, ready, b - ready, (rs - b) + (e - rf), rf - rs, cross))
    return path


def summary(
    specs: Sequence[UnitSpec],
    events: Sequence[Event],
    wall_ms: float,
    predicted_run: Mapping[int, float] | None = None,
) -> dict[str, Any]:
    """The report's ``critical_path``: the sums along the path (ms), how many of its units
    waited for another device, and the median dispatch of such a unit and of one that
    followed its own device's previous unit; ``predicted_run_ms`` when the profile prices
    every unit on the path (``predicted_run``: unit -> ms)."""
    path = critical_path(specs, events)
    if not path:
        return {}
    end = max(ev.finish for ev in events if ev.args.get("unit") is not None)
    cross = sorted(st.dispatch for st in path if st.cross)
    same = sorted(st.dispatch for st in path[1:] if not st.cross)
    out: dict[str, Any] = {
        "units": len(path),
        "cross_device": len(cross),
        "dispatch_ms": round(sum(st.dispatch for st in path), 4),
        "copies_ms": round(sum(st.copies for st in path), 4),
        "run_ms": round(sum(st.run for st in path), 4),
        "tail_ms": round(max(0.0, wall_ms - end), 4),
        "dispatch_after_other_device_ms": round(cross[len(cross) // 2], 4) if cross else None,
        "dispatch_after_same_device_ms": round(same[len(same) // 2], 4) if same else None,
    }
    if predicted_run is not None and all(st.unit in predicted_run for st in path):
        out["predicted_run_ms"] = round(sum(predicted_run[st.unit] for st in path), 4)
    return out
