"""Spec §2 and §4's precision keys: a problem and a plan read and write them unchanged, a
document without them reads and writes as before (absent = fp32), and a plan records what
its problem's devices were measured at."""

from __future__ import annotations

import pytest

from hetlab.cost.problem import Problem
from hetlab.schedulers import schedule
from hetlab.schedulers.plan import Plan


def _doc(precision=None) -> dict:
    doc = {
        "name": "p",
        "units": "ms",
        "devices": ["cpu0", "gpu0", "gpu0.q1"],
        "nodes": [
            {"id": "v1", "cost": {"cpu0": 1.0, "gpu0": 0.5, "gpu0.q1": 0.5}},
            {"id": "v2", "cost": {"cpu0": 1.0, "gpu0": 0.5, "gpu0.q1": 0.5}},
        ],
        "edges": [{"src": "v1", "dst": "v2", "bytes": 4.0}],
    }
    if precision is not None:
        doc["precision"] = precision
    return doc


@pytest.mark.parametrize("precision", [None, {"gpu0": "tf32", "gpu0.q1": "tf32"}])
def test_problem_and_plan_round_trip_with_and_without_precision(precision):
    p = Problem.from_json(_doc(precision))
    doc = p.to_json()
    assert doc.get("precision") == precision
    assert Problem.from_json(doc).to_json() == doc
    plan = schedule(p, "heft")
    assert plan.extra.get("precision") == precision
    back = Plan.from_json(plan.to_json())
    assert back.to_json() == plan.to_json() and back.extra.get("precision") == precision


def test_a_plan_records_only_the_devices_its_problem_has():
    p = Problem.from_json(_doc({"gpu0": "fp16", "elsewhere": "tf32"}))
    assert schedule(p, "single:cpu0").extra["precision"] == {"gpu0": "fp16"}
