"""What a Gantt chart shows beyond the bars, computed from a timeline (``common.Bars``):
the transfers of a predicted plan, the idle gaps of each device, the critical path, and the
plan as a Chrome trace (opens in Perfetto)."""

from __future__ import annotations

from typing import Any

from hetlab.executor.trace import Event, chrome_trace
from hetlab.timeline import Interval
from hetlab.timeline import critical_path as timeline_path
from hetlab.viz.common import Bars, as_bars
from hetlab.viz.measured import transfer


def link_name(a: str, b: str) -> str:
    return f"{a}→{b}"


def _tol(b: Bars) -> float:
    return 1e-9 * max(1.0, abs(b.makespan))


def transfers(b: Bars, problem: Any) -> list[Interval]:
    """The transfers of a predicted timeline under the standard timing model: receives are
    blocking, so a unit's inputs from other devices arrive one after another from its start,
    before it computes. Nodes with one device and one interval are one unit (a fused group).
    A measured run has the copies its events recorded (none when the report carries no
    events); a predicted timeline without a problem has none. Each is a ``"copy"`` interval
    on its link (``measured.transfer``)."""
    if b.measured:
        return list(b.moves or [])
    if problem is None:
        return []
    idx, dix = problem.index, problem.dev_index
    comm, preds = problem.comm_tensor, problem.preds
    units: dict[tuple[str, float, float], list[str]] = {}
    dev_of: dict[str, str] = {}
    for r in b.rows:
        units.setdefault((r.device, r.start, r.finish), []).append(r.name)
        dev_of[r.name] = r.device
    out: list[Interval] = []
    for (dev, s, _f), members in units.items():
        inside = set(members)
        t = s
        for v in members:
            if v not in idx or dev not in dix:
                continue
            for u, k in preds[idx[v]]:
                src = problem.nodes[u].id
                du = dev_of.get(src)
                if src in inside or du is None or du == dev or du not in dix:
                    continue
                c = float(comm[k, dix[du], dix[dev]])
                out.append(transfer(src, v, link_name(du, dev), t, t + c))
                t += c
    return out


def idle_gaps(b: Bars, devices: list[str]) -> list[tuple[str, float, float]]:
    """(device, start, finish) of every stretch a device waits, up to the end of the run."""
    end = max((r.finish for r in b.rows), default=0.0)
    tol = _tol(b)
    out = []
    for d in devices:
        t = 0.0
        for r in sorted((r for r in b.rows if r.device == d), key=lambda r: (r.start, r.finish)):
            if r.start > t + tol:
                out.append((d, t, r.start))
            t = max(t, r.finish)
        if end > t + tol:
            out.append((d, t, end))
    return out


def critical_path(b: Any, problem: Any) -> list[str]:
    """The chain of rows that ends last (``hetlab.timeline.critical_path``): each step goes
    to a predecessor, or to the row before on the same device, that finishes exactly when
    the row starts (else the latest that finished before it, in a measured run). In a
    predicted plan the chain is tight, so its durations add up to the makespan. A measured
    unit is one row, whose predecessors are its nodes'. ``b``: a plan, plan JSON or run
    report (or their ``Bars``)."""
    b = b if isinstance(b, Bars) else as_bars(b)
    if problem is None or not b.rows:
        return []
    key_of = {m: k for k, ms in b.members.items() for m in ms}
    spans = {r.name: r for r in b.rows}
    idx = problem.index
    waits = {
        k: [
            key_of.get(problem.nodes[u].id, problem.nodes[u].id)
            for n in b.nodes_of(k)
            for u, _ in preds_of(problem, idx, n)
        ]
        for k in spans
    }
    return timeline_path(spans, waits, _tol(b))


def preds_of(problem: Any, idx: dict[str, int], v: str) -> list[tuple[int, int]]:
    return problem.preds[idx[v]] if v in idx else []


def plan_trace(plan_or_run: Any, problem: Any = None, name: str | None = None) -> dict[str, Any]:
    """A plan's predicted timeline (or a run's) as a Chrome trace-event document: one row
    per device, one per link carrying transfers; it opens in Perfetto and chrome://tracing."""
    b = as_bars(plan_or_run, name)
    events = [Event("node", r.device, r.name, r.start, r.finish, {"node": r.name}) for r in b.rows]
    moves = transfers(b, problem)
    events += [Event("recv", t.device, t.name, t.start, t.finish, t.args) for t in moves]
    devices = list(dict.fromkeys(r.device for r in b.rows))
    links = list(dict.fromkeys(t.device for t in moves))
    return chrome_trace(events, devices + links, name or b.label)
