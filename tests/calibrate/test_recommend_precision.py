"""``recommend`` under an error budget, over the precisions each device declares: a fake
device whose tf32 runs are faster and off by a known amount (``precision_fakes``)."""

from __future__ import annotations

import pytest

from hetlab.calibrate import profile, run
from hetlab.calibrate.recommend_precision import combinations, label, recommend_within
from hetlab.commands.recommend import format_within
from hetlab.errors import HetlabError
from hetlab.graph.onnx_io import load
from tests.precision_fakes import ERR, FAST, SlowDevice, Tf32Device, chain_model
from tests.profiling.cost_helpers import OrtTestDevice


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return load(chain_model(tmp_path_factory.mktemp("rp") / "chain.onnx"))


def test_combinations_pick_one_declared_precision_per_device_fp32_first():
    gpu, cpu = Tf32Device("g"), OrtTestDevice("c")
    assert combinations([cpu, gpu, gpu.queue_view(1)]) == [{}, {"g": "tf32"}]
    assert combinations([cpu, gpu.with_precision("tf32")]) == [{"g": "tf32"}]  # fixed by choice
    assert label({}) == "fp32" and label({"g": "tf32"}) == "g=tf32"


@pytest.mark.parametrize("budget", [1e-2, 1e-3])
def test_the_fastest_candidate_within_the_budget_wins(chain, budget):
    devs = [SlowDevice("c"), Tf32Device("g", err=ERR, pause_s=0.005)]
    plan = recommend_within(chain, devs, budget, measure=2, profile_options=FAST)
    rec = plan.extra["recommended"]
    rows = {f"{r['precision']} {r['candidate']}": r for r in rec["candidates"]}
    assert {r["precision"] for r in rows.values()} == {"fp32", "g=tf32"}
    ok = {k: r for k, r in rows.items() if r["max_rel_err"] is not None}
    assert rows["g=tf32 single:g"]["max_rel_err"] == pytest.approx(ERR, rel=1e-2)
    assert rows["fp32 single:g"]["max_rel_err"] < 1e-5
    chosen = rows[rec["chosen"]]
    assert chosen["max_rel_err"] <= budget
    within = [r["measured"] for r in ok.values() if r["max_rel_err"] <= budget and r["measured"]]
    assert chosen["measured"] == min(within)
    if budget > ERR:  # the fast tf32 device is allowed, and it is the only fast one
        assert rec["chosen"].startswith("g=tf32") and plan.extra["precision"] == {"g": "tf32"}
        rep = run(chain, plan, devs, check=True).to_json()  # the plan brings its precision
        assert rep["precision"].get("g") == "tf32" and rep["tolerance"]["precision"] == "tf32"
    else:
        assert "g" not in set(plan.device_of.values()) or "precision" not in plan.extra
    table = format_within(rec)
    assert "max_rel_err" in table and " *" in table and ("over" in table) == (budget < ERR)


def test_a_budget_nothing_meets_is_one_line(chain):
    devs = [Tf32Device("g", err=ERR).with_precision("tf32")]
    with pytest.raises(HetlabError, match="no candidate ran within the error budget"):
        recommend_within(chain, devs, 1e-4, measure=1, profile_options=FAST)


def test_a_profile_records_its_devices_precisions(chain):
    gpu = Tf32Device("g")
    p = profile(chain, [OrtTestDevice("c"), gpu], precision="tf32", **FAST)
    assert p.extra["precision"] == {"g": "tf32"} and p.to_json()["precision"] == {"g": "tf32"}
    assert "precision" not in profile(chain, [gpu], **FAST).extra  # absent: fp32


def test_the_table_marks_the_budget_the_choice_and_a_failed_run():
    rows = [
        {"precision": "fp32", "candidate": "single:g", "measured": 2.0, "max_rel_err": 0.0},
        {"precision": "g=tf32", "candidate": "single:g", "measured": 1.0, "max_rel_err": 3e-3},
        {"precision": "g=tf32", "candidate": "heft", "measured": None, "max_rel_err": None}
        | {"error": "boom"},
    ]
    rec = {"chosen": "fp32 single:g", "error_budget": 1e-3, "candidates": rows}
    lines = format_within(rec).splitlines()
    assert lines[1].split() == ["g=tf32", "single:g", "1.000", "3.0e-03", "over"]
    assert lines[2].split() == ["fp32", "single:g", "2.000", "0.0e+00", "ok", "*"]
    assert lines[3].split()[2] == "failed" and lines[-1] == "g=tf32 heft failed: boom"
