"""Chapter 6 exercises: the start times and the critical path of a plan on ``small_dag``.

``critical_path`` walks a simulated plan (spec §3) back from the node that finishes last: each
step goes to whatever made the node start when it did, the predecessor whose result it waited
for or the node before it on its device. The chain it finds sets the makespan; a node off it
has slack.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from hetlab.cost.problem import Problem
from hetlab.course.examples import small_dag
from hetlab.course.exercise import Exercise, Step, Table, register
from hetlab.course.wrong import early_or_late
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import simulate
from hetlab.timeline import Interval
from hetlab.timeline import critical_path as timeline_path

# the plan of the exercise: the cpu runs A, C, D and F, the gpu B and E, in this order
PLAN = {"A": "cpu", "B": "gpu", "C": "cpu", "D": "cpu", "E": "gpu", "F": "cpu"}
ORDER = ["A", "B", "C", "D", "E", "F"]
EPS = 1e-9


def critical_path(problem: Problem, plan: Plan) -> list[str]:
    """The nodes of the chain that sets ``plan``'s makespan on ``problem``, first node first
    (fused groups are not followed). A node that waited for its device is preceded by the
    node before it there; one that waited for data by the predecessor that finished last."""
    device_of, order = plan.device_of, plan.order
    t = simulate(problem, device_of, order)
    spans = {v: Interval("node", device_of[v], v, t.start[v], t.finish[v]) for v in order}
    pos = {v: i for i, v in enumerate(order)}
    waits: dict[str, list[str]] = {v: [] for v in order}
    for e in problem.edges:
        waits[e.dst].append(e.src)
    for ws in waits.values():  # of two inputs ready at once, the later in the plan's order
        ws.sort(key=pos.__getitem__, reverse=True)
    return timeline_path(spans, waits, EPS)


def slack(problem: Problem, plan: Plan) -> dict[str, float]:
    """How much later each node could finish without delaying the makespan, keeping ``plan``
    (its devices and order): the latest finish minus the simulated finish. A node's input
    transfers are part of its own time (spec §3), so a successor needs it at its start."""
    device_of, order = plan.device_of, plan.order
    t = simulate(problem, device_of, order)
    succ: dict[str, list[str]] = {v: [] for v in order}
    for e in problem.edges:
        succ[e.src].append(e.dst)
    nxt: dict[str, str] = {}
    last: dict[str, str] = {}
    for v in order:
        if device_of[v] in last:
            nxt[last[device_of[v]]] = v
        last[device_of[v]] = v
    latest_start: dict[str, float] = {}
    latest_finish: dict[str, float] = {}
    for v in reversed(order):
        bounds = [latest_start[s] for s in succ[v]]
        if v in nxt:
            bounds.append(latest_start[nxt[v]])
        latest_finish[v] = min(bounds, default=t.makespan)
        latest_start[v] = latest_finish[v] - (t.finish[v] - t.start[v])
    return {v: round(latest_finish[v] - t.finish[v], 9) for v in order}


def hand_gantt(
    problem: Problem,
    plan: Plan,
    title: str = "",
    critical: bool = True,
) -> go.Figure:
    """A small plan's Gantt, one row per device: each node's receives (grey, its inputs from
    the other device) then its compute (labelled with its name); with ``critical``, the
    critical path's nodes are outlined in red."""
    device_of, order = plan.device_of, plan.order
    t = simulate(problem, device_of, order)
    on_path = set(critical_path(problem, plan)) if critical else set()
    recv = dict.fromkeys(order, 0.0)
    for e in problem.edges:
        recv[e.dst] += problem.comm_cost(e.src, e.dst, device_of[e.src], device_of[e.dst])
    fig = go.Figure()
    rows = {"receive": ([], [], [], []), "compute": ([], [], [], [])}
    for v in order:
        s, f, r = t.start[v], t.finish[v], recv[v]
        for part, base, length in (("receive", s, r), ("compute", s + r, f - s - r)):
            if length > 0:
                xs, bases, ys, names = rows[part]
                xs.append(length)
                bases.append(base)
                ys.append(device_of[v])
                names.append(v)
    for part, (xs, bases, ys, names) in rows.items():
        fig.add_bar(
            x=xs,
            base=bases,
            y=ys,
            orientation="h",
            name=part,
            text=names if part == "compute" else None,
            textposition="inside",
            insidetextanchor="middle",
            marker={
                "color": "#4C78A8" if part == "compute" else "#ccc",
                "line": {
                    "width": [3 if n in on_path else 1 for n in names],
                    "color": ["#d62728" if n in on_path else "white" for n in names],
                },
            },
        )
    path = " → ".join(v for v in order if v in on_path)
    sub = f"makespan {t.makespan:g} {problem.units}" + (f"; critical path {path}" if path else "")
    fig.update_layout(
        barmode="overlay",
        height=90 + 50 * len(problem.devices),
        title=(title + "<br>" if title else "") + f"<sup>{sub}</sup>",
        xaxis_title=f"time ({problem.units})",
        yaxis={"categoryorder": "array", "categoryarray": problem.devices[::-1]},
        margin={"l": 20, "r": 20, "t": 60, "b": 40},
        plot_bgcolor="white",
    )
    return fig


def _start_test(answer: Any) -> str | None:
    want = simulate(small_dag(), PLAN, ORDER).start
    got = answer["start"]
    wrong = Table(want, order=ORDER).first_wrong(got)
    if wrong is None:
        return None
    return f"{wrong}: a start at {got.get(wrong)} is {early_or_late(got.get(wrong), want[wrong])}"


def _path_test(answer: Any) -> str | None:
    want = critical_path(small_dag(), Plan.of(PLAN, ORDER))
    got = list(answer["critical"])
    if got == want:
        return None
    if got and got[-1] != want[-1]:
        return f"the path ends at the node that finishes last, not at {got[-1]}"
    for a, b in zip(got, want, strict=False):
        if a != b:
            return f"{a} is not where the chain goes there"
    return "the chain is too short or too long: follow it back to a node that starts at 0"


def _critical_exercise() -> Exercise:
    return Exercise(
        key="ch06.critical",
        title="the critical path of a plan on the small DAG",
        hints=(
            (
                "Simulate by hand in the order A..F: a node starts when its device is free and "
                "its inputs are ready; it then occupies its device for its cost plus 1 ms per "
                "input that comes from the other device."
            ),
            (
                "Start at the node that finishes last. Ask what it waited for: an input (the "
                "predecessor that finished at its start) or its device (the node before it "
                "there). Step to that node and repeat until a node starts at 0."
            ),
            (
                "At each step of the walk back, compare the node's start with the finish of each "
                "of its inputs and of the node before it on its device: the one that ends exactly "
                "at its start is the next (a transfer is part of the receiving node's time)."
            ),
        ),
        steps=(Step("the start times", _start_test), Step("the critical path", _path_test)),
        skeleton=(
            "answer = {\n"
            '    "start": {"A": ..., "B": ..., "C": ..., "D": ..., "E": ..., "F": ...},\n'
            '    "critical": [...],  # node names, first to last, e.g. ["A", "B", ...]\n'
            "}"
        ),
        done="Shortening a node off this chain (D, B) leaves the makespan as it is.",
    )


register(_critical_exercise())
