"""Properties of a plan's critical path and slack (``hetlab.course.ch06``) on random plans."""

from __future__ import annotations

import copy
import itertools
import random

import pytest

from hetlab.course.ch06 import critical_path, hand_gantt, slack
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import simulate
from tests.schedulers.helpers import random_problem


def plan(seed: int):
    p = random_problem(seed, 12, p_unsup=0.0)
    rng = random.Random(seed)
    device_of = {n.id: rng.choice(p.devices) for n in p.nodes}
    return p, device_of, [p.nodes[i].id for i in p.topo]


@pytest.mark.parametrize("seed", range(8))
def test_the_critical_path_is_a_gapless_chain_from_0_to_the_makespan(seed):
    p, dev, order = plan(seed)
    t = simulate(p, dev, order)
    path = critical_path(p, Plan.of(dev, order))
    assert t.start[path[0]] == 0 and t.finish[path[-1]] == pytest.approx(t.makespan)
    for a, b in itertools.pairwise(path):
        assert t.finish[a] == pytest.approx(t.start[b])
        assert (a, b) in p.edge_index or dev[a] == dev[b]


@pytest.mark.parametrize("seed", range(8))
def test_slack_is_exactly_what_a_node_can_lose(seed):
    p, dev, order = plan(seed)
    base = simulate(p, dev, order).makespan
    sl = slack(p, Plan.of(dev, order))
    assert all(sl[v] == pytest.approx(0) for v in critical_path(p, Plan.of(dev, order)))
    for v, s in sl.items():
        assert s >= -1e-9
        for extra, later in ((s, False), (s + 0.5, True)):
            q = copy.deepcopy(p)
            node = q.nodes[q.index[v]]
            node.cost[dev[v]] += extra
            q.__dict__.pop("cost_matrix", None)
            got = simulate(q, dev, order).makespan
            assert (got > base + 1e-6) is later, (v, s, extra)


def test_hand_gantt_draws_receives_and_marks_the_path():
    p, dev, order = plan(0)
    fig = hand_gantt(p, Plan.of(dev, order))
    compute = next(tr for tr in fig.data if tr.name == "compute")
    assert sorted(compute.text) == sorted(order)
    red = {n for n, c in zip(compute.text, compute.marker.line.color, strict=True) if c != "white"}
    assert red == set(critical_path(p, Plan.of(dev, order)))
