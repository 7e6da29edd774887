"""A plan is bound to a model and its devices once: checked there, immutable after, and what
the executor takes; an untimed plan has no makespan, and a run of it predicts nothing."""

from __future__ import annotations

import dataclasses

import pytest

from hetlab.cost.problem import Problem
from hetlab.devices import BoundPlan, bind
from hetlab.devices.bound import build_units
from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.errors import HetlabError
from hetlab.executor import run
from hetlab.schedulers.base import schedule
from hetlab.schedulers.plan import Plan

PROBLEM = {
    "name": "pair",
    "devices": ["a", "b"],
    "nodes": [
        {"id": "u", "cost": {"a": 0.2, "b": 0.2}},
        {"id": "v", "cost": {"a": 0.2, "b": 0.2}},
        {"id": "w", "cost": {"a": 0.2, "b": 0.2}},
    ],
    "edges": [{"src": "u", "dst": "v", "bytes": 64}, {"src": "v", "dst": "w", "bytes": 64}],
}
SPLIT = {"u": "a", "v": "b", "w": "a"}


@pytest.fixture
def setup():
    p = Problem.from_json(PROBLEM)
    return p, graph_from_problem(p), replay_devices(p)


def test_a_bound_plan_carries_its_placement_orders_and_units_and_is_frozen(setup):
    _, g, devs = setup
    bound = bind(Plan.of(SPLIT, g.topo_order()), g, devs)
    assert dict(bound.device_of) == SPLIT and bound.order == tuple(g.topo_order())
    assert {d: list(v) for d, v in bound.device_order.items()} == {"a": ["u", "w"], "b": ["v"]}
    assert list(bound.units) == build_units(g, bound.plan) and bound.used() == ["a", "b"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        bound.order = ()
    with pytest.raises(TypeError):
        bound.device_of["u"] = "b"
    assert bind(bound, g, devs) is bound  # bound once: binding it again changes nothing


def test_an_untimed_plan_has_no_makespan_and_its_run_predicts_nothing(setup):
    p, g, devs = setup
    untimed = Plan.of(SPLIT, g.topo_order())
    assert untimed.makespan is None and bind(untimed, g, devs).makespan is None
    assert Plan.from_json(untimed.to_json()).makespan is None
    assert run(g, untimed, devs, repeat=1, warmup=0).predicted_ms is None
    timed = schedule(p, "heft")
    assert bind(timed, g, devs).makespan == timed.makespan
    doc = run(g, SPLIT, devs, repeat=1, warmup=0).to_json()  # the executor predicts nothing
    assert doc["predicted_ms"] is None and doc["algo"] is None


def test_a_plan_that_does_not_fit_is_refused_when_bound(setup):
    _, g, devs = setup
    with pytest.raises(HetlabError, match="not in model"):
        bind({**SPLIT, "ghost": "a"}, g, devs)
    with pytest.raises(HetlabError, match="unknown device 'c'"):
        bind({**SPLIT, "v": "c"}, g, devs)
    with pytest.raises(HetlabError, match="before its predecessor"):
        bind(Plan.of(SPLIT, ["w", "v", "u"]), g, devs)
    bound = bind("a", g, devs)  # a device name: every node it supports there
    assert isinstance(bound, BoundPlan) and bound.by_device == "a" and bound.algo is None
