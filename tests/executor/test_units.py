from __future__ import annotations

import random

import pytest

from hetlab.devices.bound import build_units, check_plan
from hetlab.devices.replay import graph_from_problem
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan
from tests.executor.dags import inception_problem, random_problem, random_topo_order


@pytest.mark.parametrize("seed", range(12))
def test_units_partition_device_orders_into_contiguous_chains(seed):
    rng = random.Random(seed)
    g = graph_from_problem(random_problem(60, seed))
    devs = ["a", "b", "c"][: 2 + seed % 2]
    device_of = {n.id: rng.choice(devs) for n in g.nodes}
    order = random_topo_order(g, rng)
    pos = {v: i for i, v in enumerate(order)}
    units = build_units(g, Plan.of(device_of, order))
    # every node in exactly one unit, on its device
    flat = [v for u in units for v in u.nodes]
    assert sorted(flat) == sorted(device_of) and all(
        device_of[v] == u.device for u in units for v in u.nodes
    )
    # each device's units, concatenated in seq order, are exactly its order: contiguous chains
    for d in devs:
        mine = sorted((u for u in units if u.device == d), key=lambda u: u.seq)
        assert [u.seq for u in mine] == list(range(len(mine)))
        assert [v for u in mine for v in u.nodes] == [v for v in order if device_of[v] == d]
    # a unit waits for other devices only before it starts: every cross-device producer's
    # unit is in its deps; and a cross-device reader is never held back by a closing delay:
    # either the producer ends its unit, or the reader waits for a later node of that unit's device
    unit_of = {v: u for u in units for v in u.nodes}
    for e in g.edges:
        if device_of[e.src] != device_of[e.dst]:
            pu, cu = unit_of[e.src], unit_of[e.dst]
            assert pu.index in cu.deps
            if pu.nodes[-1] != e.src:
                later = [
                    p for p in g.preds(e.dst) if device_of[p] == pu.device and pos[p] > pos[e.src]
                ]
                assert later
    # the unit graph is acyclic: deps point to earlier units, indices follow the global order
    assert [pos[u.nodes[0]] for u in units] == sorted(pos[u.nodes[0]] for u in units)
    assert all(p < u.index for u in units for p in u.deps)


def test_a_400_node_two_device_plan_gives_a_few_dozen_units():
    p = inception_problem(blocks=20, branches=4, depth=5)  # 421 nodes
    g = graph_from_problem(p)
    device_of = {
        n.id: ("b" if n.id.startswith("b") and n.id[n.id.index("r") + 1] in "23" else "a")
        for n in g.nodes
    }  # two branches of every block on b
    units = build_units(g, Plan.of(device_of, g.topo_order()))
    assert len(g.nodes) == 421
    assert 20 <= len(units) <= 80, len(units)


def test_single_device_run_is_one_unit():
    g = graph_from_problem(random_problem(50, 3))
    units = build_units(g, Plan.of({n.id: "a" for n in g.nodes}, g.topo_order()))
    assert len(units) == 1 and len(units[0].nodes) == 50 and units[0].deps == ()


def test_bad_plans_are_refused_with_one_line():
    g = graph_from_problem(random_problem(10, 1))
    ok = {n.id: "a" for n in g.nodes}
    topo = g.topo_order()
    with pytest.raises(HetlabError, match="not in model"):
        check_plan(g, Plan.of({**ok, "ghost": "a"}, topo), ["a", "b"])
    with pytest.raises(HetlabError, match="without a device"):
        check_plan(g, Plan.of({k: v for k, v in ok.items() if k != "n3"}, topo), ["a", "b"])
    with pytest.raises(HetlabError, match="unknown device 'gpu'"):
        check_plan(g, Plan.of({**ok, "n2": "gpu"}, topo), ["a", "b"])
    with pytest.raises(HetlabError, match="before its predecessor"):
        check_plan(g, Plan.of(ok, list(reversed(topo))), ["a"])
