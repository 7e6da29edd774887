"""``hetlab profile``: a good run writes a valid problem; bad input is one line, exit 2."""

from __future__ import annotations

import json

import pytest
from cost_helpers import OrtTestDevice

from hetlab.cli import main
from hetlab.cost.problem import Problem
from hetlab.devices import platform as machine


@pytest.fixture
def fake_platform(monkeypatch):
    devs = [OrtTestDevice("t0"), OrtTestDevice("t1", refuse=["Sigmoid"], tag="1")]
    monkeypatch.setattr(machine, "devices", lambda platform=None: list(devs))
    monkeypatch.setattr(
        machine, "get", lambda name, platform=None: next(d for d in devs if d.name == name)
    )
    return devs


def run_cli(argv, capsys):
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_profile_writes_problem(fake_platform, chain_model, tmp_path, capsys):
    out = tmp_path / "p.json"
    rc, _, err = run_cli(
        [
            "profile",
            chain_model,
            "--devices",
            "t0,t1",
            "--repeat",
            "3",
            "--seconds",
            "0.01",
            "--groups",
            "--quiet",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert rc == 0, err
    p = Problem.load(out)
    assert p.devices == ["t0", "t1"] and len(p.nodes) == 5
    assert p.nodes[-1].cost["t1"] is None
    assert "t0->t1" in p.comm and p.extra["platform"]["devices"][0]["name"] == "t0"
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (["--devices", "t0,zz"], "unknown device 'zz'; devices here: t0, t1"),
        (["--devices", "t0,t0"], "twice"),
        (["--devices", ","], "names no device"),
        (["--devices", "t0", "--repeat", "0"], "--repeat must be at least 1"),
        (["--devices", "t0", "--pattern", "Conv"], "at least two op types"),
        (["--devices", "t0", "--shape", "x=1xq"], ""),
    ],
)
def test_bad_input_is_one_line(fake_platform, chain_model, tmp_path, capsys, argv, pattern):
    out = tmp_path / "p.json"
    rc, _, err = run_cli(["profile", chain_model, *argv, "--quiet", "--out", str(out)], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert pattern in err
    assert not out.exists()


def test_missing_model_and_missing_out(fake_platform, tmp_path, capsys):
    rc, _, err = run_cli(
        [
            "profile",
            str(tmp_path / "nope.onnx"),
            "--devices",
            "t0",
            "--out",
            str(tmp_path / "p.json"),
        ],
        capsys,
    )
    assert rc == 2 and "not found" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run_cli(["profile", "x.onnx", "--devices", "t0"], capsys)
    assert rc == 2 and "--out" in err


def test_interrupted_cli_leaves_no_output(
    fake_platform, chain_model, tmp_path, capsys, monkeypatch
):
    import hetlab.profiling.profiler as prof

    real = prof.profile

    def interrupted(*a, **k):
        k["progress"] = lambda *x: (_ for _ in ()).throw(KeyboardInterrupt())
        return real(*a, **k)

    monkeypatch.setattr(prof, "profile", interrupted)
    out = tmp_path / "p.json"
    rc, _, _ = run_cli(
        ["profile", chain_model, "--devices", "t0", "--quiet", "--out", str(out)], capsys
    )
    assert rc == 130 and not out.exists()
    assert json.loads(next(iter((tmp_path / "cache").rglob("*.json"))).read_text())["meta"]


def test_no_calibrate_keeps_the_links_without_the_executor_s_calibrations(
    fake_platform, chain_model, tmp_path, capsys
):
    out = tmp_path / "p.json"
    argv = ["profile", chain_model, "--devices", "t0,t1", "--repeat", "3", "--seconds", "0.01"]
    rc, _, err = run_cli([*argv, "--quiet", "--no-calibrate", "--out", str(out)], capsys)
    assert rc == 0, err
    p = Problem.load(out)
    assert "t0->t1" in p.comm
    assert "boundary" not in p.extra and "concurrent" not in p.extra


def test_a_busy_calibration_prints_what_to_do(
    fake_platform, chain_model, tmp_path, capsys, monkeypatch
):
    import importlib
    from dataclasses import replace

    from hetlab.cost.calibration import Calibration

    def busy_calibration(p, graph, devices, cache, options):
        cal = {"ms": 0.1, "method": "alternating windows", "busy": True}
        cal.update(reference_device="t0", reference_ms=31.66, expected_ms=17.0)
        return replace(p, calibration=Calibration.of({"t0->t1": cal, "t1->t0": dict(cal)}))

    flow = importlib.import_module("hetlab.calibrate.profile")
    monkeypatch.setattr(flow, "calibrate", busy_calibration)
    out = tmp_path / "p.json"
    argv = ["profile", chain_model, "--devices", "t0,t1", "--repeat", "3", "--seconds", "0.01"]
    rc, _, err = run_cli([*argv, "--quiet", "--out", str(out)], capsys)
    assert rc == 0, err
    (line,) = [s for s in err.splitlines() if s.startswith("calibration of")]
    assert line.startswith("calibration of t0->t1 ran while the machine was busy")
    assert "(whole model on t0 31.7 ms, expected 17.0)" in line
    assert f"rerun 'hetlab profile {chain_model} --devices t0,t1'" in line
    assert Problem.load(out).calibration.pairs()["t0->t1"]["busy"] is True
