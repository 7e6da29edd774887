from __future__ import annotations

import numpy as np
import pytest

from hetlab.cost.problem import Problem
from hetlab.devices.replay import DeviceFailure, ReplayDevice, graph_from_problem
from hetlab.devices.unit import now
from hetlab.errors import HetlabError

DOC = {
    "name": "tiny",
    "devices": ["a", "b"],
    "nodes": [
        {"id": "u", "cost": {"a": 4.0, "b": 2.0}},
        {"id": "v", "cost": {"a": 6.0, "b": None}},
    ],
    "edges": [{"src": "u", "dst": "v", "bytes": 4096}],
    "groups": [{"nodes": ["u", "v"], "cost": {"a": 7.0}}],
}


def test_graph_from_problem_carries_edges_and_bytes():
    g = graph_from_problem(Problem.from_json(DOC))
    g.lint()
    assert [n.id for n in g.nodes] == ["u", "v"] and g.outputs == ["v:out"]
    assert g.tensors["u:out"].nbytes == 4096 and g.node("v").inputs == ["u:out"]


def test_fake_replays_costs_and_returns_zero_arrays():
    p = Problem.from_json(DOC)
    g = graph_from_problem(p)
    b = ReplayDevice("b", p)
    assert b.supports(g.node("u"), g) and not b.supports(g.node("v"), g)
    unit = b.prepare(g, ["u"])
    assert unit.inputs == ["input"] and unit.outputs == ["u:out"]
    t0 = now()
    res = b.run(unit, {"input": np.zeros(1, np.float32)})
    took = (now() - t0) * 1000
    assert 2.0 <= took < 12.0
    assert res.outputs["u:out"].shape == (1024,) and not res.outputs["u:out"].any()


def test_fake_uses_group_cost_and_can_fail():
    p = Problem.from_json(DOC)
    g = graph_from_problem(p)
    a = ReplayDevice("a", p, fail_on=["v"])
    assert a.cost_ms(["u", "v"]) == 7.0 and a.cost_ms(["u"]) == 4.0
    with pytest.raises(DeviceFailure):
        a.run(a.prepare(g, ["v"]), {"u:out": np.zeros(1024, np.float32)})
    with pytest.raises(HetlabError, match="no device 'c'"):
        ReplayDevice("c", p)
