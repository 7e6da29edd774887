"""Properties of what-if platforms (``hetlab.cost.whatif``)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from hetlab.cost.problem import Problem
from hetlab.cost.whatif import LABEL, is_what_if, what_if
from hetlab.errors import HetlabError
from hetlab.schedulers.sim import simulate

DEVS = ["cpu", "gpu"]


def problem(seed: int, n: int = 12, links: bool = True) -> Problem:
    """A random DAG on cpu+gpu: half of the edges carry their own transfer times, a fused
    group, and (with ``links``) a link model with latency and bandwidth per device pair."""
    rng = random.Random(seed)
    nodes = [
        {"id": f"n{i}", "cost": {d: round(rng.uniform(0.1, 5.0), 3) for d in DEVS}}
        for i in range(n)
    ]
    nodes[-1]["cost"]["gpu"] = None
    edges = []
    for j in range(1, n):
        for i in {rng.randrange(j), j - 1}:
            e = {"src": f"n{i}", "dst": f"n{j}", "bytes": float(rng.randint(1000, 10**6))}
            if rng.random() < 0.5:
                e["comm"] = {"cpu->gpu": rng.uniform(0.2, 3.0), "gpu->cpu": rng.uniform(0.2, 3)}
            edges.append(e)
    doc = {
        "name": f"rand{seed}",
        "devices": DEVS,
        "nodes": nodes,
        "edges": edges,
        "groups": [{"nodes": ["n0", "n1"], "cost": {"cpu": 1.0, "gpu": 0.5}}],
    }
    if links:
        doc["comm"] = {
            "cpu->gpu": {"latency": 0.1, "bandwidth": 1e6},
            "gpu->cpu": {"latency": 0.15, "bandwidth": 2e6},
        }
    return Problem.from_json(doc)


def order(p: Problem) -> list[str]:
    return [p.nodes[i].id for i in p.topo]


def single(p: Problem, device: str) -> float:
    """The makespan of everything on one device (the last node falls back to cpu)."""
    devs = {n.id: device if n.cost.get(device) is not None else "cpu" for n in p.nodes}
    return simulate(p, devs, order(p)).makespan


@pytest.mark.parametrize("seed", range(5))
def test_unit_factors_are_the_identity(seed):
    p = problem(seed)
    q = what_if(p, {"cpu": 1.0, "gpu": 1.0}, bandwidth=1.0, latency=1.0)
    assert np.array_equal(q.cost_matrix, p.cost_matrix)
    assert np.allclose(q.comm_tensor, p.comm_tensor, rtol=1e-12, atol=1e-12)
    assert [g.cost for g in q.groups] == [g.cost for g in p.groups]
    assert q is not p and q.name.endswith(LABEL) and is_what_if(q) and not is_what_if(p)


@pytest.mark.parametrize("seed", range(5))
def test_doubling_every_speed_halves_each_single_device_makespan(seed):
    p = problem(seed)
    q = what_if(p, {"cpu": 2.0, "gpu": 2.0}, bandwidth=2.0, latency=0.5)
    for d in DEVS:
        assert single(q, d) == pytest.approx(single(p, d) / 2, rel=1e-9)
    assert q.groups[0].cost == {"cpu": 0.5, "gpu": 0.25}


@pytest.mark.parametrize("seed", range(5))
def test_speed_scales_only_the_named_device(seed):
    p = problem(seed)
    q = what_if(p, {"gpu": 4.0})
    assert np.array_equal(q.cost_matrix[:, 0], p.cost_matrix[:, 0])
    assert np.allclose(q.cost_matrix[:, 1], p.cost_matrix[:, 1] / 4)
    assert np.allclose(q.comm_tensor, p.comm_tensor)


@pytest.mark.parametrize("links", [True, False])
def test_infinite_bandwidth_and_no_latency_remove_every_transfer(links):
    p = problem(3, links=links)
    q = what_if(p, bandwidth=math.inf, latency=0.0)
    assert not q.comm_tensor.any()
    # then any placement runs at least as fast as with transfers
    rng = random.Random(0)
    for _ in range(10):
        devs = {n.id: rng.choice([d for d in DEVS if n.cost[d] is not None]) for n in p.nodes}
        assert simulate(q, devs, order(q)).makespan <= simulate(p, devs, order(p)).makespan + 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_transfers_shrink_as_bandwidth_grows_down_to_their_latency(seed):
    p = problem(seed)
    prev = p.comm_tensor
    for bw in (2.0, 10.0, 1e3, math.inf):
        t = what_if(p, bandwidth=bw).comm_tensor
        assert (t <= prev + 1e-12).all()
        prev = t
    assert (prev <= what_if(p, bandwidth=math.inf, latency=1.0).comm_tensor + 1e-12).all()
    lat = what_if(p, bandwidth=math.inf, latency=2.0).comm_tensor
    assert np.allclose(lat, 2 * prev)


@pytest.mark.parametrize("seed", range(3))
def test_link_model_scales_latency_and_bandwidth(seed):
    p = problem(seed)
    q = what_if(p, bandwidth=4.0, latency=3.0)
    for k, link in p.comm.items():
        assert q.comm[k].latency == pytest.approx(3 * link.latency)
        assert q.comm[k].bandwidth == pytest.approx(4 * link.bandwidth)
    # an edge without its own times follows the link: latency x3, bytes/bandwidth /4
    e = next(k for k, e in enumerate(p.edges) if not e.comm)
    link = p.comm["cpu->gpu"]
    want = 3 * link.latency + p.edges[e].bytes / link.bandwidth / 4
    assert q.comm_tensor[e, 0, 1] == pytest.approx(want)


def test_factors_compose_and_the_input_is_unchanged():
    p = problem(1)
    before = p.to_json()
    q = what_if(what_if(p, {"gpu": 2.0}, bandwidth=3.0), {"gpu": 5.0}, latency=0.5)
    assert p.to_json() == before
    assert q.extra["what_if"]["speed"] == {"cpu": 1.0, "gpu": 10.0}
    assert q.extra["what_if"]["bandwidth"] == 3.0 and q.extra["what_if"]["latency"] == 0.5
    assert q.extra["what_if"]["measured"] == p.name
    assert q.name.count(LABEL) == 1
    direct = what_if(p, {"gpu": 10.0}, bandwidth=3.0, latency=0.5)
    assert np.allclose(q.cost_matrix, direct.cost_matrix)
    assert np.allclose(q.comm_tensor, direct.comm_tensor)


def test_a_what_if_saves_and_loads(tmp_path):
    q = what_if(problem(2), {"gpu": 3.0}, bandwidth=math.inf)
    again = Problem.load(q.save(tmp_path / "w.json"))
    assert is_what_if(again) and np.allclose(again.comm_tensor, q.comm_tensor)


@pytest.mark.parametrize(
    "kw",
    [
        {"speed": {"npu": 2.0}},
        {"speed": {"gpu": 0.0}},
        {"speed": {"gpu": math.inf}},
        {"speed": {"gpu": "fast"}},
        {"bandwidth": 0.0},
        {"bandwidth": -1.0},
        {"latency": -0.5},
        {"latency": math.nan},
    ],
)
def test_bad_factors_are_one_clear_error(kw):
    with pytest.raises(HetlabError, match="what-if"):
        what_if(problem(0), **kw)


def test_queue_views_follow_their_device():
    from hetlab.cost.queues import with_queues

    p = with_queues(problem(4), {"gpu": ["gpu.q1"]}, latency=0.01, slowdown=1.5)
    q = what_if(p, {"gpu": 2.0})
    j, k = p.dev_index["gpu"], p.dev_index["gpu.q1"]
    assert np.allclose(q.cost_matrix[:, [j, k]], p.cost_matrix[:, [j, k]] / 2, equal_nan=True)
    own = what_if(p, {"gpu": 2.0, "gpu.q1": 1.0})
    assert np.array_equal(own.cost_matrix[:, k], p.cost_matrix[:, k])
