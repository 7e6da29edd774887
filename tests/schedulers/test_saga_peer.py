"""HEFT and PEFT against a peer implementation: the schedules anrg-saga 2.1.0 gives on 14
generated instances with free transfers (data/saga/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hetlab.cost.problem import Problem
from hetlab.schedulers import schedule
from hetlab.schedulers.incremental import GapTimeline
from hetlab.schedulers.peft import peft_timeline
from hetlab.schedulers.ranks import optimistic_cost_table, priority_order, rank_oct

DATA = Path(__file__).parent / "data" / "saga"
NAMES = sorted(p.name.removesuffix(".problem.json") for p in DATA.glob("*.problem.json"))
TOL = 1e-6
# The instances where PEFT's makespan turns on how its rank_oct ties are taken, and saga's
# draw differs from ours: saga orders ties by a topological sort of a graph built from
# frozensets, so its PEFT makespan on each of these changes with PYTHONHASHSEED (README).
PEFT_TIES_DECIDE = {
    "00_diamond_n2_nocomm",
    "04_intree3x3_n2_nocomm",
    "06_layered25_n2_nocomm",
    "10_branch3x2_n3_nocomm",
    "12_layered12_n3_nocomm",
    "14_diamond_n4_nocomm",
    "20_layered25_n4_nocomm",
    "22_branch6x2_n4_nocomm",
    "24_intree5x3_n4_nocomm",
    "26_layered200_n4_nocomm",
}


def load(name: str) -> tuple[Problem, dict]:
    problem = Problem.load(DATA / f"{name}.problem.json")
    saga = json.loads((DATA / f"{name}.saga.json").read_text())["schedules"]
    return problem, saga


def assert_same_schedule(problem: Problem, dev, start, theirs: dict) -> None:
    """Each node on saga's device, starting at saga's time."""
    for v, node in enumerate(problem.nodes):
        d, s, _ = theirs[node.id]
        assert problem.devices[dev[v]] == f"d{d}", node.id
        assert start[v] == pytest.approx(s, abs=TOL), node.id


def test_every_instance_is_here():
    assert len(NAMES) == 14 and PEFT_TIES_DECIDE.issubset(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_heft_is_sagas_heft(name):
    problem, saga = load(name)
    plan = schedule(problem, "heft")
    assert plan.makespan == pytest.approx(saga["HEFT"]["makespan"], abs=TOL)
    dev = [problem.dev_index[plan.device_of[n.id]] for n in problem.nodes]
    start = {a.node: a.start for a in plan.assignments}
    assert_same_schedule(problem, dev, [start[n.id] for n in problem.nodes], saga["HEFT"]["tasks"])
    append = schedule(problem, "heft-append").makespan
    assert append == pytest.approx(saga["HEFT_append_only"]["makespan"], abs=TOL)


def ready_list_ties(problem: Problem, rank: np.ndarray) -> int:
    """How often PEFT's ready list (in our order) holds two nodes of exactly the top rank_oct."""
    order, done, ties = priority_order(problem, rank), set(), 0
    for v in order:
        ready = [
            w
            for w in range(len(problem.nodes))
            if w not in done and all(u in done for u, _ in problem.preds[w])
        ]
        ties += sum(rank[w] == rank[v] for w in ready) > 1
        done.add(v)
    return ties


@pytest.mark.parametrize("name", NAMES)
def test_peft_is_sagas_peft_where_no_tie_decides(name):
    problem, saga = load(name)
    ours, theirs = schedule(problem, "peft").makespan, saga["PEFT"]["makespan"]
    if name not in PEFT_TIES_DECIDE:
        assert ours == pytest.approx(theirs, abs=TOL)
        return
    # the documented reason: our ready list meets rank_oct ties, and (next test) saga's
    # schedule is PEFT's with those ties taken in another order
    assert ready_list_ties(problem, rank_oct(problem)) > 0
    assert abs(ours - theirs) > TOL  # an instance that comes to agree leaves the list


def sagas_order(problem: Problem, theirs: dict) -> list[int] | None:
    """A ready-list order by rank_oct (ties, up to rounding, in any order) in which PEFT's
    O_EFT placement puts every node where saga did; None if there is none."""
    table = optimistic_cost_table(problem)
    rank = rank_oct(problem, table)
    dev = {problem.index[t]: int(x[0]) for t, x in theirs.items()}
    start = {problem.index[t]: x[1] for t, x in theirs.items()}

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-9 * max(1.0, abs(b))

    def extend(tl: GapTimeline, order: list[int]) -> list[int] | None:
        placed = set(order)
        ready = [
            v
            for v in problem.topo
            if v not in placed and all(u in placed for u, _ in problem.preds[v])
        ]
        if not ready:
            return order
        top = max(rank[v] for v in ready)
        for v in (w for w in ready if close(rank[w], top)):
            oeft = tl.eft(v) + table[v]
            if not close(oeft[dev[v]], oeft.min()):
                continue
            nxt = tl.copy()
            if close(nxt.place(v, dev[v])[0], start[v]):
                found = extend(nxt, [*order, v])
                if found is not None:
                    return found
        return None

    return extend(GapTimeline(problem), [])


@pytest.mark.parametrize("name", NAMES)
def test_sagas_peft_is_peft_with_ties_taken_otherwise(name):
    problem, saga = load(name)
    order = sagas_order(problem, saga["PEFT"]["tasks"])
    assert order is not None
    tl = peft_timeline(problem, order)  # the library's placement, in saga's tie order
    assert_same_schedule(problem, tl.dev, tl.start, saga["PEFT"]["tasks"])
    assert tl.makespan == pytest.approx(saga["PEFT"]["makespan"], abs=TOL)
