"""``hetlab stretch`` and ``hetlab run --check`` on its output, end to end; bad input one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hetlab.executor.api import run
from hetlab.schedulers.plan import Plan

ROOT = Path(__file__).parents[2]


def hetlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hetlab", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_stretch_cli_then_run_check(tmp_path):
    out = tmp_path / "sq.onnx"
    r = hetlab(
        "stretch",
        "squeezenet",
        "--devices",
        "cpu0,cpu1",
        "--throughput",
        "cpu0=20,cpu1=20",
        "--out",
        str(out),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert Path(doc["model"]) == out and out.is_file() and Path(doc["plan"]).is_file()
    assert "retraining" in doc["note"] and len(doc["candidates"]) >= 2
    r = hetlab("run", str(out), "--plan", doc["plan"], "--check", "--repeat", "2", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["max_rel_err"] <= 1e-3 and set(rep["devices"]) == {"cpu0", "cpu1"}


def test_resnet50_runs_by_its_branch_plan_with_check(written, graphs):
    from stretch_helpers import DEVICES, cost_model

    from hetlab.graph import load
    from hetlab.stretch.search import branch_plan, estimated_problem

    g = load(str(written["resnet50"]))
    plan = branch_plan(g, estimated_problem(g, cost_model(), DEVICES), DEVICES, "cpu0")
    plan = Plan.from_json(plan.to_json())
    rep = run(g, plan, repeat=1, check=True, warmup=0)
    assert rep.max_rel_err is not None and rep.max_rel_err <= 1e-3
    assert rep.devices["cpu1"] > 50 and rep.units <= 12  # whole branches, few units


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--devices", "cpu0", "--out", "x.onnx"], "at least two devices"),
        (["--devices", "cpu0,cpu1", "--out", "x.txt"], "--out must name an .onnx"),
        (
            ["--devices", "cpu0,cpu1", "--throughput", "cpu0=fast", "--out", "x.onnx"],
            "--throughput",
        ),
        (["--devices", "cpu0,cpu1", "--alpha", "-1", "--out", "x.onnx"], "--alpha"),
        (["--devices", "cpu0,nope", "--out", "x.onnx"], "unknown device"),
    ],
)
def test_stretch_bad_input_is_one_line(tmp_path, args, needle):
    args = [a if a not in ("x.onnx", "x.txt") else str(tmp_path / a) for a in args]
    r = hetlab("stretch", "squeezenet", *args)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_stretch_of_a_model_without_stages_is_one_line(tmp_path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((8, 4), np.float32), "w")
    gr = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [w],
    )
    m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    onnx.save(m, str(tmp_path / "mlp.onnx"))
    r = hetlab(
        "stretch",
        str(tmp_path / "mlp.onnx"),
        "--devices",
        "cpu0,cpu1",
        "--throughput",
        "cpu0=1,cpu1=1",
        "--out",
        str(tmp_path / "o.onnx"),
    )
    assert (
        r.returncode == 2
        and "no stage boundary" in r.stderr
        and len(r.stderr.strip().splitlines()) == 1
    )


def test_stretch_takes_throughputs_from_a_profiled_problem(tmp_path, graphs):
    from stretch_helpers import cost_model

    from hetlab.stretch.search import costs_from_problem, estimated_problem

    g = graphs["squeezenet"]
    cm = cost_model()
    cm.throughput["cpu1"] = 1e7
    prob = estimated_problem(g, cm, ["cpu0", "cpu1"])
    got = costs_from_problem(g, prob, ["cpu0", "cpu1"])
    assert got.throughput["cpu0"] / got.throughput["cpu1"] == pytest.approx(2.0, rel=0.05)
    prob.save(tmp_path / "p.json")
    r = hetlab(
        "stretch",
        "squeezenet",
        "--devices",
        "cpu0,cpu1",
        "--profile",
        str(tmp_path / "p.json"),
        "--out",
        str(tmp_path / "s.onnx"),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    parts = json.loads(r.stdout)["parts"]
    for p in parts:
        f0, f1 = (b["flops"] for b in p["branches"])
        assert f0 > f1  # the faster device gets the bigger branch (eq. 6)
