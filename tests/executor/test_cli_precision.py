"""``--precision`` from the command line: a device that does not declare what it is asked
for refuses in one line (exit 2, no traceback); one precision for all runs the devices that
do not declare it at fp32 and says so; the run report carries the precision and the check's
tolerance; ``schedule`` refuses a precision its profile was not measured at."""

from __future__ import annotations

import json

import pytest

from hetlab.cli import main as cli_main
from hetlab.devices import platform_devices, select
from hetlab.errors import HetlabError
from tests.executor.models import two_branch


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    return two_branch(tmp_path_factory.mktemp("cliprec") / "two.onnx")


def _one_line_refusal(capsys, argv, pattern):
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and pattern in err[0], err


def test_cpu_groups_refuse_tf32_in_one_line(model, tmp_path, capsys):
    out = str(tmp_path / "p.json")
    want = "hetlab: error: cpu0 cannot run at tf32: it declares fp32 only"
    argv = ["profile", model, "--devices", "cpu0", "--precision", "cpu0=tf32", "--out", out]
    _one_line_refusal(capsys, [*argv, "--quiet"], want)
    _one_line_refusal(capsys, ["run", model, "--device", "cpu0", "--precision", "cpu0=tf32"], want)
    _one_line_refusal(capsys, ["run", model, "--device", "cpu0", "--precision", "fp8"], "fp8")


def test_pocl_refuses_fp16_in_one_line(model, capsys):
    try:
        select("cl0")
    except HetlabError:
        pytest.skip("no cl0 here")
    argv = ["run", model, "--device", "cl0", "--precision", "cl0=fp16", "--repeat", "1"]
    _one_line_refusal(capsys, argv, "cl0 cannot run at fp16: it declares fp32 only")


def test_one_precision_for_all_that_no_device_declares_is_refused(model, capsys):
    if any("tf32" in d.capabilities().precisions for d in platform_devices()):
        pytest.skip("a device here declares tf32")
    argv = ["run", model, "--device", "cpu0", "--precision", "tf32", "--repeat", "1"]
    _one_line_refusal(capsys, argv, "--precision tf32: no device here declares it")


def test_fp32_for_all_runs_and_reports_its_precision_and_rule(model, capsys):
    argv = ["run", model, "--device", "cpu0", "--precision", "fp32", "--check", "--json"]
    assert cli_main([*argv, "--repeat", "1", "--warmup", "0"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["precision"] == {"cpu0": "fp32"}
    assert doc["tolerance"]["precision"] == "fp32" and doc["tolerance"]["value"] is None


def test_schedule_refuses_a_precision_its_profile_was_not_measured_at(tmp_path, capsys):
    problem = {
        "name": "p",
        "units": "ms",
        "devices": ["cpu0", "gpu0"],
        "nodes": [{"id": "v1", "cost": {"cpu0": 1.0, "gpu0": 0.5}}],
        "edges": [],
        "precision": {"gpu0": "tf32"},  # spec §2's extra.precision: a top-level key
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(problem))
    base = ["schedule", str(path), "--algo", "heft", "--quiet", "--out", str(tmp_path / "x.json")]
    _one_line_refusal(capsys, [*base, "--precision", "gpu0=fp16"], "measured gpu0 at tf32")
    _one_line_refusal(capsys, [*base, "--precision", "fp16"], "not fp16")
    assert cli_main([*base, "--precision", "tf32"]) == 0
    plan = json.loads((tmp_path / "x.json").read_text())
    assert plan["precision"] == {"gpu0": "tf32"}
