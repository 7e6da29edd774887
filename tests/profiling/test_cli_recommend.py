"""``hetlab recommend``: profiles (or reads a profile), times the candidates, writes the
chosen plan and prints one line per candidate; bad input is one line, exit 2."""

from __future__ import annotations

import json

import pytest
from cost_helpers import OrtTestDevice

from hetlab.cli import main
from hetlab.commands.recommend import format_candidates
from hetlab.devices import platform as machine
from hetlab.schedulers.plan import Plan


@pytest.fixture
def two_devices(monkeypatch):
    devs = [OrtTestDevice("t0"), OrtTestDevice("t1", refuse=["Sigmoid"], tag="1")]
    monkeypatch.setattr(machine, "devices", lambda platform=None: list(devs))
    return devs


def run_cli(argv, capsys):
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_recommend_profiles_times_and_writes_the_chosen_plan(
    two_devices, chain_model, tmp_path, capsys
):
    out, prof = tmp_path / "plan.json", tmp_path / "p.json"
    argv = ["recommend", chain_model, "--devices", "t0,t1", "--measure", "1", "--quiet"]
    rc, text, err = run_cli([*argv, "--save-profile", str(prof), "--out", str(out)], capsys)
    assert rc == 0, err
    plan = Plan.load(out)
    rec = plan.extra["recommended"]
    assert rec["basis"] == "measured" and rec["chosen"] in rec["measured"]
    assert set(rec["predicted"]) >= {"ilp+", "single:t0"}
    chosen_line = next(line for line in text.splitlines() if line.endswith(" *"))
    assert chosen_line.split()[0] == rec["chosen"]
    assert prof.exists()
    # from the saved profile, choosing by the prediction alone: nothing runs
    rc, text, err = run_cli(
        [
            "recommend",
            chain_model,
            "--profile",
            str(prof),
            "--measure",
            "0",
            "--json",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert rc == 0, err
    doc = json.loads(text)
    assert doc["basis"] != "measured" and "measured" not in doc


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [
        ([], "name the devices"),
        (["--devices", "t0", "--measure", "-1"], "--measure"),
        (["--devices", "t9"], "unknown device 't9'"),
        (["--devices", "t0", "--queues", "t0=x"], "--queues wants DEVICE=N"),
    ],
)
def test_bad_input_is_one_line(two_devices, chain_model, tmp_path, capsys, extra, pattern):
    out = tmp_path / "plan.json"
    rc, _, err = run_cli(["recommend", chain_model, *extra, "--out", str(out)], capsys)
    assert rc == 2
    assert pattern in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_the_table_marks_the_chosen_candidate_and_the_failed_ones():
    rec = {
        "chosen": "single:a",
        "basis": "measured",
        "margin": 0.1,
        "predicted": {"ilp": 1.0, "single:a": 2.0, "single:b": 4.0},
        "measured": {"ilp": None, "single:a": 2.2, "single:b": 3.9},
        "measure_errors": {"ilp": "boom"},
        "max_rel_err": {"single:a": 1e-7},
    }
    lines = format_candidates(rec).splitlines()
    assert lines[1].startswith("single:a") and lines[1].endswith(" *")
    assert "1.10" in lines[1] and "1.0e-07" in lines[1]
    assert any(line.startswith("ilp") and "failed" in line for line in lines)
    assert lines[-1] == "ilp failed: boom"


def test_recommend_replays_a_profile_measured_elsewhere_and_says_so(tmp_path, capsys):
    from tests.tiny import tiny_problem

    prof, out = tmp_path / "phone.json", tmp_path / "plan.json"
    tiny_problem("phone").save(prof)  # devices cpu and gpu, which this machine lacks
    argv = ["recommend", "phone", "--profile", str(prof), "--replay", "--out", str(out)]
    rc, text, err = run_cli(argv, capsys)
    assert rc == 0, err
    rec = Plan.load(out).extra["recommended"]
    assert "measured" not in rec and rec["basis"] in ("replayed", "prediction")
    lines = text.splitlines()
    assert "replayed" in lines[0] and "virtual clock, not a measurement" in text
    assert ("ranked by prediction" in text) == (rec["basis"] == "prediction")
    rc, _, err = run_cli(
        ["recommend", "phone", "--replay", "--devices", "t0", "--out", str(out)], capsys
    )
    assert rc == 2 and "--replay replays a profile" in err and len(err.strip().splitlines()) == 1
