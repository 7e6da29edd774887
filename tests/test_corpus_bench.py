"""The corpus table's timing (benchmarks.corpus): identical plans timed once, rounds, and the
recommended plan over the best single device, with fake timings and no model files."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import hetlab
from benchmarks import corpus as C
from benchmarks import rounds as F

GRAPH = SimpleNamespace(model_path="m.onnx", outputs={"y": None})


def _plan(ms, **device_of):
    return SimpleNamespace(device_of=device_of, makespan=ms)


@pytest.fixture
def fake_rounds(monkeypatch):
    """Plans keyed by their placement; ``hetlab.run`` of a plan takes its ``base`` ms plus
    drift, and its outputs are 2e-7 off the reference."""
    calls = []
    base = {"cl0": 5.0, "cpu0": 8.0, "mixed": 6.0}

    def run(graph, plan, devices, repeat=1, warmup=None, inputs=None):
        calls.append(plan)
        name = "mixed" if len(set(plan.device_of.values())) > 1 else plan.device_of["a"]
        ms = base[name] + 0.01 * len(calls)
        return SimpleNamespace(samples_ms=[ms] * repeat, outputs={"y": np.array([1.0 + 2e-7])})

    monkeypatch.setattr(hetlab, "run", run, raising=False)
    monkeypatch.setattr(F, "program_key", lambda g, p: tuple(sorted(p.device_of.items())))
    monkeypatch.setattr("hetlab.executor.reference_outputs", lambda *a: {"y": np.array([1.0])})
    return calls


def test_identical_plans_are_timed_once_and_share_their_median(fake_rounds):
    plans = {
        "recommended": _plan(5.0, a="cl0", b="cl0"),
        "ilp": _plan(4.0, a="cl0", b="cpu0"),
        "single:cpu0": _plan(8.0, a="cpu0", b="cpu0"),
        "single:cl0": _plan(5.0, a="cl0", b="cl0"),
    }
    rows = {r["algo"]: r for r in C.plan_rows(GRAPH, plans, [], {}, rounds=4, repeat=3)}
    assert len(fake_rounds) == 3 * 4  # three distinct plans, four rounds
    rec, cl0 = rows["recommended"], rows["single:cl0"]
    assert cl0["same_as"] == "recommended" and rec["same_as"] == ""
    assert cl0["median_ms"] == rec["median_ms"] and cl0["run_s"] == ""
    assert all(r["rounds"] == 4 and r["max_rel_err"] == "2.0e-07" for r in rows.values())
    assert all(r["best_single"] == "single:cl0" for r in rows.values())
    assert all(r["rec_vs_best_single"] == 1.0 for r in rows.values())
    assert rows["ilp"]["predicted_ms"] == 4.0 and 6.0 < rows["ilp"]["median_ms"] < 6.2
    md = C.markdown([{**dict.fromkeys(C.FIELDS[:9], "x"), **r} for r in rows.values()])
    assert "single:cl0 = recommended 2.0e-07" in md and "| 1.00x (single:cl0) |" in md


def test_rec_vs_best_single_and_the_singles_added():
    assert C.vs_best_single({"recommended": 6.0, "single:a": 5.0, "single:b": 4.0}) == (
        "single:b",
        1.5,
    )
    assert C.vs_best_single({"recommended": 6.0, "ilp": 1.0}) == ("", None)
    assert C.vs_best_single({"recommended": None, "single:a": 5.0}) == ("single:a", None)
    assert C.with_singles(["recommended", "single:b", "ilp"], ["a", "b"]) == [
        "recommended",
        "single:b",
        "ilp",
        "single:a",
    ]
    assert C.with_singles(["ilp"], ["a"]) == ["ilp"]


def test_a_plan_that_fails_has_no_median_and_says_why(monkeypatch):
    from hetlab.errors import HetlabError

    def run(graph, plan, devices, repeat=1, warmup=None, inputs=None):
        if plan.makespan == 1.0:
            raise HetlabError("no kernel")
        return SimpleNamespace(samples_ms=[3.0] * repeat, outputs={})

    monkeypatch.setattr(hetlab, "run", run, raising=False)
    monkeypatch.setattr(F, "program_key", lambda g, p: p.makespan)
    monkeypatch.setattr("hetlab.executor.reference_outputs", lambda *a: {})
    plans = {"recommended": _plan(2.0, a="x"), "single:x": _plan(1.0, a="x")}
    rows = {r["algo"]: r for r in C.plan_rows(GRAPH, plans, [], {}, rounds=3, repeat=1)}
    bad = rows["single:x"]
    assert bad["median_ms"] is None and "no kernel" in bad["status"] and bad["max_rel_err"] == ""
    assert rows["recommended"]["median_ms"] == 3.0
    assert rows["recommended"]["best_single"] == "" and bad["rec_vs_best_single"] is None
    assert "single:x (run error: no kernel)" in C.plan_cell(bad)
