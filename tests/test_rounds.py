"""Interleaved rounds (benchmarks.rounds): the identical-plan key and the round-robin
measurement, each round of a plan one ``hetlab.run``."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from test_hope_fig4 import fake_problem

import hetlab
from benchmarks import rounds as F
from hetlab.devices.replay import graph_from_problem
from hetlab.errors import HetlabError
from hetlab.executor import RunReport
from hetlab.schedulers.plan import Plan


def _plan(p, device_of, order, sequential=False, fused=()):
    plan = Plan.build(p, "x", device_of, order, sequential=sequential)
    plan.fused = [list(f) for f in fused]  # the executor does not read it (no group costs here)
    return plan


def test_one_device_plans_share_a_key_whatever_their_order_and_flags():
    p = fake_problem()
    g = graph_from_problem(p)
    topo = g.topo_order()
    on_cpu = dict.fromkeys(topo, "cpu0")
    # another topological order: branch by branch instead of the graph's own
    by_branch = ["in"] + [f"b{b}k{k}" for b in (2, 0, 1) for k in range(4)] + ["out"]
    keys = {
        F.program_key(g, _plan(p, on_cpu, topo)),
        F.program_key(g, _plan(p, on_cpu, by_branch, sequential=True)),
        F.program_key(g, _plan(p, on_cpu, topo, fused=[["b0k0", "b0k1"]])),
    }
    assert keys == {("one-device", "cpu0")}
    assert F.program_key(g, _plan(p, dict.fromkeys(topo, "cpu1"), topo)) != ("one-device", "cpu0")


def test_multi_device_keys_follow_units_per_device():
    p = fake_problem()
    g = graph_from_problem(p)
    # gpu0: branch 0 and the tail of branch 1 (two units: they wait for different cpu0 units)
    dev = {
        v: ("gpu0" if v.startswith("b0") or v in ("b1k2", "b1k3") else "cpu0")
        for v in g.topo_order()
    }
    b0, b2 = [f"b0k{k}" for k in range(4)], [f"b2k{k}" for k in range(4)]
    a = ["in", *b0, "b1k0", "b1k1", "b1k2", "b1k3", *b2, "out"]
    # interleaved differently across devices, same order on each device: same program
    b = ["in", "b1k0", "b1k1", *b0, *b2, "b1k2", "b1k3", "out"]
    # gpu0 runs branch 1's tail before branch 0: its units come in another order
    c = ["in", "b1k0", "b1k1", "b1k2", "b1k3", *b0, *b2, "out"]
    ka, kb, kc = (F.program_key(g, _plan(p, dev, o)) for o in (a, b, c))
    assert ka[0] == "parallel" and ka == kb and ka != kc
    assert dict(ka[1])["gpu0"] == (tuple(b0), ("b1k2", "b1k3"))
    # inside one unit the order is the device's own (re-sorted when built): not part of the key
    # (branch 0 alone on gpu0: branches 1 and 2 form one cpu0 unit, in either order)
    dev0 = {v: ("gpu0" if v.startswith("b0") else "cpu0") for v in g.topo_order()}
    b1 = [f"b1k{k}" for k in range(4)]
    x = F.program_key(g, _plan(p, dev0, ["in", *b0, *b1, *b2, "out"]))
    y = F.program_key(g, _plan(p, dev0, ["in", *b0, *b2, *b1, "out"]))
    assert x == y and dict(x[1])["cpu0"] == (("in",), tuple(b1 + b2), ("out",))
    # sequential: units take turns in global order, so the interleaving is part of the key
    sa, sb = (
        F.program_key(g, _plan(p, dev, a, sequential=True)),
        F.program_key(g, _plan(p, dev, b, sequential=True)),
    )
    assert sa[0] == "sequential" and sa != ka and sa != sb
    # moving one node to another device changes the key
    assert F.program_key(g, _plan(p, dict(dev, b2k3="gpu0"), a)) != ka


def test_round_order_is_a_seeded_latin_square_per_block():
    n = 5
    rounds = [F.round_order(n, r, seed=3) for r in range(3 * n)]
    assert all(sorted(o) == list(range(n)) for o in rounds)  # every plan once per round
    for blk in range(3):
        block = rounds[blk * n : (blk + 1) * n]
        for pos in range(n):  # every plan once in every position inside a block
            assert sorted(o[pos] for o in block) == list(range(n))
    assert rounds == [F.round_order(n, r, seed=3) for r in range(3 * n)]  # deterministic
    assert [rounds[0], rounds[n], rounds[2 * n]] != [rounds[0]] * 3  # new shuffle per block
    assert F.round_order(0, 4) == [] and F.round_order(1, 7) == [0]


def test_more_rounds_budget():
    assert F.more_rounds(0, 99.0, 0.0, 20) and F.more_rounds(2, 99.0, 0.0, 20)  # at least 3
    assert not F.more_rounds(3, 1.0, 1.0, 20)  # 1.1 s needed
    assert F.more_rounds(3, 1.0, 1.2, 20) and F.more_rounds(19, 1.0, None, 20)
    assert not F.more_rounds(20, 0.0, None, 20) and not F.more_rounds(3, 0.0, None, 3)


@pytest.fixture
def drifting_run(monkeypatch):
    """``hetlab.run`` replaced by runs whose time grows with every call on a shared clock
    (host drift); a plan named in ``fail`` raises from that clock tick on. Returns the log of
    the plans run, in order, and the ``fail`` table to fill."""
    clock, log, fail = [0], [], {}

    def run(graph, plan, devices, repeat=1, warmup=None, inputs=None):
        clock[0] += 1
        log.append(plan)
        if plan in fail and clock[0] >= fail[plan]:
            raise HetlabError(f"{plan} broke")
        return SimpleNamespace(
            samples_ms=[10.0 + clock[0]] * repeat,
            outputs={"y": np.array([1.0, float(clock[0] - 1)])},
            events=[clock[0]],
        )

    monkeypatch.setattr(hetlab, "run", run, raising=False)
    return log, fail


def test_interleaved_rounds_spread_drift_over_all_plans(drifting_run):
    log, _ = drifting_run
    plans = [F.Timed(n) for n in "ABCD"]
    done = F.measure(plans, None, [], {}, most=12, seconds_left=lambda: None, seed=1)
    assert done == 12 and all(len(p.rounds_ms) == 12 for p in plans)
    # every round runs each plan exactly once, one hetlab.run each, in changing orders
    rounds = [log[i : i + 4] for i in range(0, len(log), 4)]
    assert len(rounds) == 12 and all(sorted(r) == list("ABCD") for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1
    # identical plans under linear drift: medians within one round of each other, whereas
    # one plan after another would put them 12 runs (x 3 plans) apart
    med = [float(np.median(p.rounds_ms)) for p in plans]
    assert max(med) - min(med) <= 4


def test_rounds_stop_at_the_budget_but_not_before_three_and_a_broken_plan_leaves(drifting_run):
    _, fail = drifting_run
    plans = [F.Timed(n) for n in "AB"]
    assert F.measure(plans, None, [], {}, most=50, seconds_left=lambda: 0.0) == 3
    fail["B"] = 6 + 6  # six runs were spent above
    plans = [F.Timed(n) for n in "ABC"]
    done = F.measure(plans, None, [], {}, most=5, seconds_left=lambda: None)
    assert done == 5 and plans[1].error and "B broke" in plans[1].error
    assert len(plans[0].rounds_ms) == len(plans[2].rounds_ms) == 5
    assert len(plans[1].rounds_ms) < 3


def test_only_the_first_round_is_checked_and_the_check_run_is_no_round(drifting_run):
    # the fake's second output is off by one more on every call: only the first is exact
    ref = {"y": np.array([1.0, 0.0])}
    t = F.Timed("A")
    assert F.measure([t], None, [], {}, most=4, seconds_left=lambda: None, ref=ref) == 4
    assert t.max_rel_err == 0.0 and all(r.outputs == {} for r in t.reports)
    c = F.Timed("B")
    F.check(c, None, [], {}, {"y": np.array([1.0, 4.0])})
    assert c.max_rel_err == 0.0 and c.rounds_ms == [] and c.spent_s > 0


def test_the_report_is_the_median_rounds_with_the_latency_over_rounds():
    t = F.Timed("A")
    for ms in (5.0, 1.0, 3.0, 9.0, 2.0):
        rep = RunReport("m.onnx", {"median": ms}, 1.0, None, {}, [], events=[ms], repeat=7)
        t.rounds_ms.append(ms)
        t.reports.append(rep)
    t.max_rel_err = 1e-7
    rep = t.report()
    assert rep.latency_ms["median"] == 3.0 and rep.events == [3.0]
    assert rep.repeat == 5 and rep.samples_ms == t.rounds_ms and rep.max_rel_err == 1e-7
    assert rep.latency_ms["p10"] <= 3.0 <= rep.latency_ms["p90"]


def test_same_as_names_the_first_name_of_each_key():
    got = F.same_as({"recommended": "k1", "ilp": "k2", "heft": "k1", "single:cl0": "k1"})
    assert got == {"recommended": "", "ilp": "", "heft": "recommended", "single:cl0": "recommended"}
