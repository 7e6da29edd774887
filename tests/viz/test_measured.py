"""What a Gantt chart of a run draws: a unit measured as a whole is one bar, its per-op
split is drawn only on request and hatched as an estimate, nodes timed on their own keep
their bars, and a report's copies are its transfers."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from hetlab.executor.trace import Event, chrome_trace, node_timeline
from hetlab.timeline import Interval
from hetlab.viz import critical_path, gantt_figure, op_scatter_figure
from hetlab.viz.common import as_bars
from hetlab.viz.gantt_parts import breakdown
from tests.tiny import tiny_problem
from tests.viz._random import random_plan, random_problem


def _trace(fig, name):
    found = [t for t in fig.data if t.name == name]
    return found[0] if found else None


def _unit_report(nodes, weights=None, approx=False, timed=None):
    """A run of one unit of ``nodes`` on cpu, 1 ms to 13.49 ms, as the executor writes it."""
    args = {"unit": 0, **({"approx": True} if approx else {})}
    events = [Event("unit", "cpu", "u0", 1.0, 13.49, args)]
    tl = node_timeline(events, {0: nodes}, timed or {}, weights)
    return {"timeline": tl, "latency_ms": {"median": 13.6}}


@pytest.fixture(scope="module")
def big_unit():
    p = random_problem(65, seed=3)
    return p, [n.id for n in p.nodes]


def test_a_unit_measured_as_a_whole_is_one_bar(big_unit):
    p, nodes = big_unit
    doc = _unit_report(nodes, {v: 1.0 + i for i, v in enumerate(nodes)})
    fig = gantt_figure(doc, p)
    units = _trace(fig, "measured units")
    stacked = gantt_figure(random_plan(p), p, measured=doc)
    assert [t.name for t in stacked.data if t.showlegend].count("measured units") == 1
    assert list(units.base) == [0.0] and list(units.x) == [pytest.approx(12.49)]
    assert units.text[0] == "unit 0 · 65 ops" and "was not measured" in units.hovertext[0]
    assert len(fig.data[0].base) == 0  # no op has a bar of its own
    assert _trace(fig, "estimated (not measured)") is None
    assert "1 unit(s) of 65 ops measured as a whole" in fig.layout.title.text


def test_estimates_are_hatched_and_tile_their_unit(big_unit):
    p, nodes = big_unit
    fig = gantt_figure(_unit_report(nodes), p, estimates=True)
    est = _trace(fig, "estimated (not measured)")
    assert len(est.base) == 65 and est.marker.pattern.shape == "/"
    assert all("estimated" in t and "not measured per op" in t for t in est.text)
    ends = sorted(zip(est.base, [b + x for b, x in zip(est.base, est.x, strict=True)], strict=True))
    assert ends[0][0] == pytest.approx(0.0) and ends[-1][1] == pytest.approx(12.49)
    assert all(a[1] == pytest.approx(b[0]) for a, b in itertools.pairwise(ends))


def test_nodes_timed_on_their_own_keep_their_bars(big_unit):
    p, nodes = big_unit
    timed = {
        0: [
            Interval("node", "cpu", v, 1 + 0.19 * i, 1 + 0.19 * i + 0.15)
            for i, v in enumerate(nodes)
        ]
    }
    fig = gantt_figure(_unit_report(nodes, timed=timed), p)  # gaps between kernels
    assert len(fig.data[0].base) == 65 and _trace(fig, "measured units") is None
    doc = _unit_report(nodes)
    for e in doc["timeline"]:
        del e["unit"]  # an entry without a unit is its node's own interval
    assert len(gantt_figure(doc, p).data[0].base) == 65
    one = _unit_report(nodes[:1])
    assert list(gantt_figure(one, p).data[0].customdata) == nodes[:1]


def test_an_approximate_end_is_dotted_and_said(big_unit):
    p, nodes = big_unit
    units = _trace(gantt_figure(_unit_report(nodes, approx=True), p), "measured units")
    assert list(units.marker.pattern.shape) == ["."] and "end approximate" in units.hovertext[0]


def test_measured_units_take_part_in_the_critical_path():
    p = tiny_problem()
    dev = {v: ("gpu" if v in "cde" else "cpu") for v in "abcdefgh"}
    events = [
        Event("unit", "cpu", "u0", 0.0, 2.0, {"unit": 0}),  # a, b
        Event("unit", "gpu", "u1", 2.5, 4.0, {"unit": 1}),  # c, e
        Event("unit", "cpu", "u2", 2.0, 6.0, {"unit": 2}),  # d, f
        Event("unit", "cpu", "u3", 6.0, 7.0, {"unit": 3}),  # g, h
    ]
    units = {0: ["a", "b"], 1: ["c", "e"], 2: ["d", "f"], 3: ["g", "h"]}
    doc = {"timeline": node_timeline(events, units, {})}
    assert critical_path(doc, p) == ["unit 0", "unit 2", "unit 3"]
    assert {r.device for r in as_bars(doc).rows} == set(dev.values())


def test_a_report_with_events_draws_its_copies_and_a_dict_says_it_has_none():
    p = tiny_problem()
    events = [
        Event("recv", "gpu", "t_b", 2.0, 2.4, {"unit": 1}),
        Event("unit", "cpu", "u0", 1.0, 2.0, {"unit": 0}),
        Event("unit", "gpu", "u1", 2.4, 4.0, {"unit": 1}),
        Event("send", "gpu", "t_e", 4.0, 4.3, {"unit": 1}),
    ]
    tl = node_timeline(events, {0: ["a", "b"], 1: ["c", "e"]}, {})

    report = SimpleNamespace(
        timeline=tl, events=events, latency_ms={"median": 3.4}, predicted_ms=3.0, extra={}
    )
    fig = gantt_figure(report, p)
    tx = _trace(fig, "transfers")
    assert sorted(tx.y) == ["gpu→host", "host→gpu"]
    assert sorted(tx.base) == [pytest.approx(1.0), pytest.approx(3.0)]  # from unit 0's start
    assert "copies as measured" in fig.layout.title.text
    assert "copies not in this report" in gantt_figure({"timeline": tl}, p).layout.title.text


def test_prediction_and_measurement_stack_with_transfers_in_both():
    p = tiny_problem()
    plan = random_plan(p, seed=1)
    events = [Event("recv", "gpu", "t", 0.0, 0.5, {"unit": 0})]
    events += [
        Event("unit", a.device, a.node, a.start + 0.5, a.finish + 0.5, {"unit": i})
        for i, a in enumerate(plan.assignments)
    ]
    units = {i: [a.node] for i, a in enumerate(plan.assignments)}

    tl = node_timeline(events, units, {})
    report = SimpleNamespace(timeline=tl, events=events, latency_ms={"median": 9.0})
    fig = gantt_figure(plan, p, measured=report)
    tx = [t for t in fig.data if t.name == "transfers"]
    assert [t.xaxis for t in tx] == ["x", "x2"] and all(len(t.base) for t in tx)
    shown = [t.name for t in fig.data if t.showlegend]
    assert sorted(shown) == sorted(set(shown)) and "transfers" in shown
    assert fig.layout.xaxis.matches == "x2" or fig.layout.xaxis2.matches == "x"


def test_the_breakdown_never_shows_a_negative_term():
    text = breakdown({"run_ms": 10.0, "copies_ms": 1.5, "dispatch_ms": -0.2, "tail_ms": 0.3})
    terms = text.split(": ")[1].split(" (")[0]
    assert "-" not in terms and "dispatch" not in terms and "dispatch below 0" in text
    assert terms == "run 10.00 ms + copies 1.50 ms + tail 0.3 ms"
    assert breakdown({}) == "" and "run 2.00 ms" in breakdown({"run_ms": 2.0})


def test_op_scatter_compares_only_what_was_measured(big_unit):
    p, nodes = big_unit
    plan = random_plan(p, seed=2)
    doc = _unit_report(nodes)
    fig = op_scatter_figure(plan, doc, p)
    pts = [t for t in fig.data if t.mode == "markers"]
    assert sum(len(t.x) for t in pts) == 1 and "unit" in pts[0].name
    pred = sum(a.finish - a.start for a in plan.assignments)
    assert pts[0].x[0] == pytest.approx(pred) and pts[0].y[0] == pytest.approx(12.49)


def _group_report():
    """An OpenCL group enqueued ahead of time, unprofiled, beside a CPU unit: cl0's units
    0, 2, 3 (one op each) and 4 (two ops) each run from their enqueue to the group's end
    as far as the host can tell."""
    approx = {"approx": True, "aot": True}
    events = [
        Event("unit", "cl0", "u0", 0.1, 93.5, {"unit": 0, **approx}),
        Event("unit", "cpu", "u1", 0.0, 40.0, {"unit": 1}),
        Event("unit", "cl0", "u2", 2.0, 93.5, {"unit": 2, **approx}),
        Event("unit", "cl0", "u3", 3.1, 93.5, {"unit": 3, **approx}),
        Event("unit", "cl0", "u4", 4.6, 93.5, {"unit": 4, **approx}),
    ]
    units = {0: ["a"], 1: ["b", "d"], 2: ["c"], 3: ["e"], 4: ["f", "g"]}
    return events, units, node_timeline(events, units, {})


def test_units_that_were_not_timed_one_by_one_are_one_bar():
    p = tiny_problem()
    _events, _units, tl = _group_report()
    b = as_bars({"timeline": tl, "latency_ms": {"median": 94.0}})
    cl = [r for r in b.rows if r.device == "cl0"]
    assert [r.name for r in cl] == ["units 0-4"]  # not four bars stacked up to the end
    assert (cl[0].start, cl[0].finish) == (pytest.approx(0.1), pytest.approx(93.5))
    assert sorted(b.members["units 0-4"]) == ["a", "c", "e", "f", "g"]
    assert b.approx == {"units 0-4"}
    units = _trace(
        gantt_figure({"timeline": tl, "latency_ms": {"median": 94.0}}, p), "measured units"
    )
    assert "end approximate" in " ".join(units.hovertext)


def test_the_trace_slices_per_op_where_timed_and_per_unit_where_not():
    events, _units, tl = _group_report()
    doc = chrome_trace(events, ["cpu", "cl0"], timeline=tl)
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    rows = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert sorted(e["name"] for e in slices) == ["u1", "units 0-4"]
    merged = next(e for e in slices if e["name"] == "units 0-4")
    assert merged["args"]["units"] == [0, 2, 3, 4] and merged["args"]["approx"]
    assert rows[merged["tid"]] == "cl0"
    timed = {0: [Interval("node", "cl0", v, 0.5 + i, 1.0 + i) for i, v in enumerate("xyz")]}
    tl = node_timeline([Event("unit", "cl0", "u0", 0.4, 3.2, {"unit": 0})], {0: list("xyz")}, timed)
    doc = chrome_trace([Event("unit", "cl0", "u0", 0.4, 3.2, {"unit": 0})], ["cl0"], timeline=tl)
    rows = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    ops = [e for e in doc["traceEvents"] if e["ph"] == "X" and rows[e["tid"]] == "cl0 ops"]
    assert [e["name"] for e in ops] == ["x", "y", "z"]  # one slice per op the device timed
    assert [e["ts"] for e in ops] == [500.0, 1500.0, 2500.0]
