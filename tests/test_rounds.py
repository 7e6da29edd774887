"""Interleaved rounds (benchmarks.rounds): the identical-plan key and the round-robin measurement."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from test_hope_fig4 import fake_problem

from benchmarks import rounds as F
from hetlab.devices.replay import graph_from_problem
from hetlab.errors import HetlabError
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
        F.plan_key(g, _plan(p, on_cpu, topo)),
        F.plan_key(g, _plan(p, on_cpu, by_branch, sequential=True)),
        F.plan_key(g, _plan(p, on_cpu, topo, fused=[["b0k0", "b0k1"]])),
    }
    assert keys == {("one-device", "cpu0")}
    assert F.plan_key(g, _plan(p, dict.fromkeys(topo, "cpu1"), topo)) != ("one-device", "cpu0")


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
    ka, kb, kc = (F.plan_key(g, _plan(p, dev, o)) for o in (a, b, c))
    assert ka[0] == "parallel" and ka == kb and ka != kc
    assert dict(ka[1])["gpu0"] == (tuple(b0), ("b1k2", "b1k3"))
    # inside one unit the order is the device's own (re-sorted when built): not part of the key
    # (branch 0 alone on gpu0: branches 1 and 2 form one cpu0 unit, in either order)
    dev0 = {v: ("gpu0" if v.startswith("b0") else "cpu0") for v in g.topo_order()}
    b1 = [f"b1k{k}" for k in range(4)]
    x = F.plan_key(g, _plan(p, dev0, ["in", *b0, *b1, *b2, "out"]))
    y = F.plan_key(g, _plan(p, dev0, ["in", *b0, *b2, *b1, "out"]))
    assert x == y and dict(x[1])["cpu0"] == (("in",), tuple(b1 + b2), ("out",))
    # sequential: units take turns in global order, so the interleaving is part of the key
    sa, sb = (
        F.plan_key(g, _plan(p, dev, a, sequential=True)),
        F.plan_key(g, _plan(p, dev, b, sequential=True)),
    )
    assert sa[0] == "sequential" and sa != ka and sa != sb
    # moving one node to another device changes the key
    assert F.plan_key(g, _plan(p, dict(dev, b2k3="gpu0"), a)) != ka


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


class DriftingExecutor:
    """run_once returns a wall time that grows with every call on a shared clock (host drift)."""

    def __init__(
        self, clock: list[int], name: str, log: list[str], fail_at: int | None = None
    ) -> None:
        self.clock, self.name, self.log, self.fail_at = clock, name, log, fail_at

    def run_once(self, feed):
        self.clock[0] += 1
        self.log.append(self.name)
        if self.fail_at is not None and self.clock[0] >= self.fail_at:
            raise HetlabError(f"{self.name} broke")
        return SimpleNamespace(wall_ms=10.0 + self.clock[0], events=[])


def _prepared(names, clock, log, fail=None):
    return [
        F.Prepared(("k", n), None, DriftingExecutor(clock, n, log, (fail or {}).get(n)))
        for n in names
    ]


def test_interleaved_rounds_spread_drift_over_all_plans():
    clock, log = [0], []
    plans = _prepared("ABCD", clock, log)
    done = F.measure(plans, {}, most=12, seconds_left=lambda: None, seed=1)
    assert done == 12 and all(len(p.walls) == 12 for p in plans)
    # one untimed warm-up round, then every round runs each plan exactly once
    rounds = [log[i : i + 4] for i in range(0, len(log), 4)]
    assert len(rounds) == 13 and all(sorted(r) == list("ABCD") for r in rounds)
    assert len({tuple(r) for r in rounds[1:]}) > 1  # the order changes
    # identical plans under linear drift: medians within one round of each other, whereas
    # one plan after another would put them 12 runs (x 3 plans) apart
    med = [float(np.median(p.walls)) for p in plans]
    assert max(med) - min(med) <= 4
    rep_like = sorted(plans[0].walls)
    assert rep_like[0] > 10 + 4  # the warm-up round is not timed


def test_rounds_stop_at_the_budget_but_not_before_three_and_a_broken_plan_leaves():
    clock, log = [0], []
    plans = _prepared("AB", clock, log)
    assert F.measure(plans, {}, most=50, seconds_left=lambda: 0.0, warmup=0) == 3
    clock, log = [0], []
    plans = _prepared("ABC", clock, log, fail={"B": 6})
    done = F.measure(plans, {}, most=5, seconds_left=lambda: None, warmup=0)
    assert done == 5 and plans[1].error and "B broke" in plans[1].error
    assert len(plans[0].walls) == len(plans[2].walls) == 5 and len(plans[1].walls) < 3


def test_same_as_names_the_first_name_of_each_key():
    got = F.same_as({"recommended": "k1", "ilp": "k2", "heft": "k1", "single:cl0": "k1"})
    assert got == {"recommended": "", "ilp": "", "heft": "recommended", "single:cl0": "recommended"}


def test_one_alive_rounds_give_each_plan_one_time_per_round_in_changing_orders():
    clock, log = [0], []

    def time_once(i, round_no):  # host drift: every call is slower than the one before
        clock[0] += 1
        log.append((round_no, i))
        return 10.0 + clock[0]

    times, errors, done = F.measure_one_alive(4, time_once, 12, lambda: None, seed=1)
    assert done == 12 and not errors and all(len(t) == 12 for t in times)
    rounds = [[i for r, i in log if r == n] for n in range(12)]
    assert all(sorted(r) == [0, 1, 2, 3] for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1
    med = [float(np.median(t)) for t in times]
    assert max(med) - min(med) <= 4  # one after another would put them 12 runs apart


def test_one_alive_rounds_a_failing_plan_leaves_and_least_rounds_hold():
    def time_once(i, round_no):
        if i == 1 and round_no == 1:
            raise HetlabError("plan 1 broke")
        return 1.0

    times, errors, done = F.measure_one_alive(3, time_once, 5, lambda: None)
    assert done == 5 and set(errors) == {1} and "plan 1 broke" in errors[1]
    assert [len(t) for t in times] == [5, 1, 5]
    _, _, done = F.measure_one_alive(2, lambda i, r: 1.0, 50, lambda: 0.0)
    assert done == 3  # no time left, yet the least rounds run


def test_time_fresh_keeps_one_executor_alive_and_takes_the_median(monkeypatch):
    alive, opened = [0], []

    class Fake:
        def __init__(self):
            alive[0] += 1
            opened.append(self)
            self.walls = iter([50.0, 9.0, 1.0, 2.0, 3.0])  # warm-up, then three timed runs

        def run_once(self, feed):
            assert alive[0] == 1
            return SimpleNamespace(wall_ms=next(self.walls), events=[])

        def close(self):
            alive[0] -= 1

    def prepare(graph, plan, key, devmap, feed, ref):
        p = F.Prepared(key, plan, Fake())
        p.run(feed, keep=False)  # prepare's own checked run
        p.max_rel_err = None if ref is None else 1e-7
        return p

    monkeypatch.setattr(F, "prepare", prepare)
    for ref in ({"y": 0}, None):
        ms, p = F.time_fresh(None, None, {}, {}, ref, repeat=3)
        assert ms == 2.0 and alive[0] == 0
        assert p.max_rel_err == (None if ref is None else 1e-7)
    assert len(opened) == 2
