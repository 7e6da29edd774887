"""The measured timeline: events on one clock (ms from the run's start) and Chrome trace JSON.

Chrome trace-event format: complete events (``"ph": "X"``) with ``ts``/``dur`` in
microseconds, one thread row (``tid``) per device, named by ``thread_name`` metadata; the
file opens in Perfetto (ui.perfetto.dev) and chrome://tracing. ``Event`` is defined with
the queue runners that make events too (``devices/runner.py``).

A run's trace has one slice per unit on its device's row and, where the device timed each
node (the timeline's ``"timed"`` entries), one slice per node on a row of its own below it
(``"cl0 ops"``): a device's kernel stamps need not nest exactly inside the host's unit
interval. Units whose ends are approximate and that end together on one device (an OpenCL
device's units enqueued ahead of time, a CUDA graph) were not timed one by one: they are one slice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hetlab.devices.runner import Event
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
    events: Sequence[Event],
    devices: Sequence[str],
    name: str = "hetlab run",
    timeline: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A Chrome trace-event document with one row per device, in ``devices`` order, and
    one row of node slices per device that timed its nodes (from ``timeline``; see the
    module doc)."""
    tid: dict[str, int] = {}
    trace: list[dict[str, Any]] = [
        {"ph": "M", "pid": 1, "tid": 0, "name": "process_name", "args": {"name": name}}
    ]

    def row(d: str) -> int:
        if d not in tid:
            tid[d] = i = len(tid) + 1
            trace.append(
                {"ph": "M", "pid": 1, "tid": i, "name": "thread_name", "args": {"name": d}}
            )
            trace.append(
                {
                    "ph": "M",
                    "pid": 1,
                    "tid": i,
                    "name": "thread_sort_index",
                    "args": {"sort_index": i},
                }
            )
        return tid[d]

    timed = [e for e in timeline if e.get("timed")]
    for d in devices:
        row(d)
        if any(e["device"] == d for e in timed):
            row(f"{d} ops")
    for ev in merge_untimed(events):
        trace.append(_slice(row(ev.device), ev.name, ev.kind, ev.start, ev.finish, ev.args))
    for e in timed:
        args = {"node": e["node"], "unit": e.get("unit")}
        trace.append(
            _slice(row(f"{e['device']} ops"), e["node"], "node", e["start"], e["finish"], args)
        )
    return {"traceEvents": trace, "displayTimeUnit": "ms"}


def _slice(
    tid: int, name: str, cat: str, start: float, finish: float, args: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "ph": "X",
        "pid": 1,
        "tid": tid,
        "name": name,
        "cat": cat,
        "ts": round(start * 1000.0, 3),
        "dur": round(max(0.0, finish - start) * 1000.0, 3),
        "args": dict(args),
    }


def merge_untimed(events: Sequence[Event]) -> list[Event]:
    """``events`` with the unit events whose ends are approximate (``"approx"``) merged per
    device and end into one event from the first one's start, named ``"units K-L"``, with
    every unit in ``args["units"]``."""
    out: list[Event] = []
    together: dict[tuple[str, float], list[Event]] = {}
    for ev in events:
        if ev.kind == "unit" and ev.args.get("approx"):
            together.setdefault((ev.device, round(ev.finish, 6)), []).append(ev)
        else:
            out.append(ev)
    for (dev, _end), evs in together.items():
        units = sorted(int(e.args.get("unit", 0)) for e in evs)
        label = f"unit {units[0]}" if len(units) == 1 else f"units {units[0]}-{units[-1]}"
        args = {
            "units": units,
            "nodes": sum(int(e.args.get("nodes", 0)) for e in evs),
            "approx": True,
        }
        start, finish = min(e.start for e in evs), max(e.finish for e in evs)
        out.append(Event("unit", dev, label, start, finish, args))
    out.sort(key=lambda e: (e.start, e.device))
    return out


def write_trace(
    path: str | Path,
    events: Sequence[Event],
    devices: Sequence[str],
    name: str = "hetlab run",
    timeline: Sequence[Mapping[str, Any]] = (),
) -> Path:
    """Write ``chrome_trace`` atomically to ``path``."""
    return atomic_write_json(path, chrome_trace(events, devices, name, timeline), indent=None)
