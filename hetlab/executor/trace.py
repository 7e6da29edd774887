"""The measured timeline: events on one clock (ms from the run's start) and Chrome trace JSON.

Chrome trace-event format: complete events (``"ph": "X"``) with ``ts``/``dur`` in
microseconds, one thread row (``tid``) per device, named by ``thread_name`` metadata; the
file opens in Perfetto (ui.perfetto.dev) and chrome://tracing. ``Event`` is defined with
the group runners that make events too (``devices/group.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hetlab.devices.group import Event
from hetlab.fileio import atomic_write_json
from hetlab.timeline import Interval


def node_timeline(
    events: Sequence[Event],
    unit_nodes: dict[int, list[str]],
    node_times: Mapping[int, Sequence[Interval]],
    weights: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Spec §5 ``timeline``: one entry per node, each with its ``unit``. Where a device timed
    each node, its own interval (``"timed": true``); else the unit's interval split over its
    nodes in proportion to ``weights`` (e.g. flops; evenly without): a share, an estimate.
    ``node_times``: per unit, the node intervals its device timed, in ms from the run's start."""
    out: list[dict[str, Any]] = []
    for ev in events:
        if ev.kind != "unit":
            continue
        uid = int(ev.args["unit"])
        timed = node_times.get(uid)
        if timed:
            for nt in timed:
                out.append(
                    {
                        "node": nt.name,
                        "device": ev.device,
                        "start": round(nt.start, 4),
                        "finish": round(nt.finish, 4),
                        "unit": uid,
                        "timed": True,
                    }
                )
            continue
        nodes = unit_nodes[uid]
        w = [1.0] * len(nodes)
        if weights:
            raw = [max(0.0, float(weights.get(v, 0.0))) for v in nodes]
            floor = 0.02 * sum(raw) / max(1, len(raw))  # shape ops still get a sliver
            w = [x + floor for x in raw] if sum(raw) > 0 else w
        total = sum(w)
        t = ev.start
        for node, x in zip(nodes, w, strict=False):
            f = t + (ev.finish - ev.start) * x / total
            out.append(
                {
                    "node": node,
                    "device": ev.device,
                    "start": round(t, 4),
                    "finish": round(f, 4),
                    "unit": uid,
                    **({"approx": True} if ev.args.get("approx") else {}),
                }
            )
            t = f
    out.sort(key=lambda r: (r["start"], r["device"]))
    return out


def chrome_trace(
    events: Sequence[Event], devices: Sequence[str], name: str = "hetlab run"
) -> dict[str, Any]:
    """A Chrome trace-event document with one row per device, in ``devices`` order."""
    tid = {d: i + 1 for i, d in enumerate(devices)}
    trace: list[dict[str, Any]] = [
        {"ph": "M", "pid": 1, "tid": 0, "name": "process_name", "args": {"name": name}}
    ]
    for d, i in tid.items():
        trace.append({"ph": "M", "pid": 1, "tid": i, "name": "thread_name", "args": {"name": d}})
        trace.append(
            {"ph": "M", "pid": 1, "tid": i, "name": "thread_sort_index", "args": {"sort_index": i}}
        )
    for ev in events:
        if ev.device not in tid:
            tid[ev.device] = len(tid) + 1
            trace.append(
                {
                    "ph": "M",
                    "pid": 1,
                    "tid": tid[ev.device],
                    "name": "thread_name",
                    "args": {"name": ev.device},
                }
            )
        trace.append(
            {
                "ph": "X",
                "pid": 1,
                "tid": tid[ev.device],
                "name": ev.name,
                "cat": ev.kind,
                "ts": round(ev.start * 1000.0, 3),
                "dur": round(max(0.0, ev.finish - ev.start) * 1000.0, 3),
                "args": ev.args,
            }
        )
    return {"traceEvents": trace, "displayTimeUnit": "ms"}


def write_trace(
    path: str | Path, events: Sequence[Event], devices: Sequence[str], name: str = "hetlab run"
) -> Path:
    """Write ``chrome_trace`` atomically to ``path``."""
    return atomic_write_json(path, chrome_trace(events, devices, name), indent=None)
