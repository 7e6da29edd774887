"""Real runs on onnxruntime CPU groups of a small two-branch ONNX model."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from hetlab.cli import main as cli_main
from hetlab.cost.problem import Problem
from hetlab.devices.binding import bind
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.executor import run
from hetlab.graph.onnx_io import load
from hetlab.schedulers.plan import Plan
from tests.executor.models import scalar_edge, two_branch

CORES = sorted(os.sched_getaffinity(0))
BRANCH_B = ("b_conv1", "b_sig", "b_conv2")
# the CLI uses this machine's default groups: cpu0 and cpu1 exist from 2 cores on
two_groups = pytest.mark.skipif(
    len(CORES) < 2, reason="needs 2 cores for default groups cpu0, cpu1"
)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = two_branch(tmp_path_factory.mktemp("m") / "tb.onnx")
    return path, load(path)


@pytest.fixture(scope="module")
def groups():
    return [OrtCpuDevice("cpu0", CORES[:1]), OrtCpuDevice("cpu1", CORES[-1:])]


def split_plan(g) -> Plan:
    devs = ["cpu0", "cpu1"]
    prob = Problem.from_json(
        {
            "name": g.name,
            "devices": devs,
            "nodes": [
                {"id": n.id, "op_type": n.op_type, "cost": dict.fromkeys(devs, 0.1)}
                for n in g.nodes
            ],
            "edges": [{"src": e.src, "dst": e.dst, "bytes": e.bytes} for e in g.edges],
        }
    )
    device_of = {n.id: "cpu1" if n.id in BRANCH_B else "cpu0" for n in g.nodes}
    return Plan.build(prob, "manual", device_of, g.topo_order())


def test_two_groups_match_plain_onnxruntime(model, groups):
    _, g = model
    rep = run(g, split_plan(g), groups, repeat=3, check=True)
    assert rep.max_rel_err is not None and rep.max_rel_err < 1e-5
    assert rep.devices == {"cpu0": 10, "cpu1": 3} and rep.units >= 3
    doc = rep.to_json()
    assert {
        "model_path",
        "latency_ms",
        "predicted_ms",
        "max_rel_err",
        "devices",
        "timeline",
    } <= set(doc)
    assert doc["model_path"] == os.path.abspath(g.model_path)
    assert set(doc["latency_ms"]) == {"median", "p10", "p90"}
    assert doc["latency_ms"]["p10"] <= doc["latency_ms"]["median"] <= doc["latency_ms"]["p90"]
    assert {r["node"] for r in doc["timeline"]} == {n.id for n in g.nodes}
    assert all(
        r["device"] == ("cpu1" if r["node"] in BRANCH_B else "cpu0") for r in doc["timeline"]
    )
    json.dumps(doc)


def test_outputs_equal_the_reference_values(model, groups):
    path, g = model
    import onnxruntime as ort

    x = np.random.default_rng(7).standard_normal((1, 8, 16, 16)).astype(np.float32)
    rep = run(g, split_plan(g), groups, inputs={"x": x}, warmup=0)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(rep.outputs["y"], ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rep.outputs["z"], ref[1], rtol=1e-5, atol=1e-6)


def test_cli_run_device_check_trace_and_input(model, tmp_path, capsys):
    path, _ = model
    x = tmp_path / "x.npy"
    np.save(x, np.ones((1, 8, 16, 16), np.float32))
    trace = tmp_path / "trace.json"
    rc = cli_main(
        [
            "run",
            path,
            "--device",
            "cpu0",
            "--repeat",
            "2",
            "--check",
            "--json",
            "--trace",
            str(trace),
            "--input",
            f"x={x}",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert (
        doc["max_rel_err"] < 1e-5 and doc["devices"] == {"cpu0": 13} and doc["predicted_ms"] is None
    )
    tr = json.loads(trace.read_text())
    assert [e["args"]["name"] for e in tr["traceEvents"] if e["name"] == "thread_name"] == ["cpu0"]


@two_groups
def test_cli_run_plan_file(model, tmp_path, capsys):
    path, g = model
    plan = split_plan(g)
    f = tmp_path / "plan.json"
    plan.save(f)
    assert cli_main(["run", path, "--plan", str(f), "--check", "--repeat", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (
        doc["predicted_ms"] == pytest.approx(plan.makespan, abs=1e-3) and doc["max_rel_err"] < 1e-5
    )


@pytest.mark.parametrize(
    "edit,msg",
    [
        (lambda a: a + [{"node": "ghost", "device": "cpu0"}], "not in model"),
        (lambda a: a[1:], "without a device"),
        (
            lambda a: [{**x, "device": "gpu7"} if i == 0 else x for i, x in enumerate(a)],
            "unknown device 'gpu7'",
        ),
    ],
)
@two_groups
def test_cli_refuses_plans_that_do_not_match(model, tmp_path, capsys, edit, msg):
    path, g = model
    doc = split_plan(g).to_json()
    doc["assignments"] = edit(doc["assignments"])
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    assert cli_main(["run", path, "--plan", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and err.count("\n") == 0


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--device", "nope"], "unknown device 'nope'"),
        (["--device", "cpu0", "--input", "x"], "malformed --input"),
        (["--device", "cpu0", "--input", "x=3", "--input", "x=abc"], "malformed --input"),
        (["--device", "cpu0", "--input", "q=2"], "--input q: the model has no input 'q'"),
        (["--device", "cpu0", "--repeat", "0"], "--repeat"),
    ],
)
def test_cli_bad_arguments_are_one_line(model, capsys, args, msg):
    path, _ = model
    assert cli_main(["run", path, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and err.count("\n") == 0


def test_cli_a_number_fills_the_input(model, capsys):
    path, _ = model
    assert cli_main(["run", path, "--device", "cpu0", "--input", "x=3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["latency_ms"]["median"] > 0


def test_scalar_tensors_stay_scalar_across_devices(tmp_path, groups):
    g = load(scalar_edge(tmp_path / "s.onnx"))
    rep = run(g, {"sum": "cpu0", "unsq": "cpu1", "mul": "cpu1"}, groups, check=True, warmup=0)
    assert rep.max_rel_err < 1e-6 and rep.outputs["u"].shape == (1,)


def test_api_takes_a_model_path_and_a_device_name(model):
    from hetlab import run as lazy_run

    path, _ = model
    rep = lazy_run(path, "cpu0", repeat=2, check=True)
    assert rep.devices == {"cpu0": 13} and rep.units == 1 and rep.max_rel_err < 1e-5
    assert rep.model_path == os.path.abspath(path)


def test_the_calling_thread_stays_pinned_between_runs_and_gets_its_cores_back(model, groups):
    from hetlab.executor import Executor

    _, g = model
    before = os.sched_getaffinity(0)
    plan = split_plan(g)
    with Executor(bind(plan, g, groups)) as ex:
        feed = {t: np.ones(g.tensors[t].shape, np.float32) for t in g.inputs}
        for _ in range(2):
            ex.run_once(feed)
            assert os.sched_getaffinity(0) == {CORES[0]}  # cpu0's core, kept between runs
    assert os.sched_getaffinity(0) == before


def test_executors_on_one_thread_each_keep_their_cores_and_the_last_gives_them_back(model, groups):
    from hetlab.executor import Executor

    _, g = model
    before = os.sched_getaffinity(0)
    feed = {t: np.ones(g.tensors[t].shape, np.float32) for t in g.inputs}
    a = Executor(bind(Plan.of({n.id: "cpu0" for n in g.nodes}, g.topo_order()), g, groups))
    b = Executor(bind(Plan.of({n.id: "cpu1" for n in g.nodes}, g.topo_order()), g, groups))
    a.run_once(feed)
    b.run_once(feed)
    assert os.sched_getaffinity(0) == {CORES[-1]}
    a.run_once(feed)  # pinned again: b had moved the thread
    assert os.sched_getaffinity(0) == {CORES[0]}
    a.close()
    b.close()
    assert os.sched_getaffinity(0) == before


def test_a_bad_switch_interval_is_one_clear_error(model, groups, monkeypatch):
    from hetlab.errors import HetlabError
    from hetlab.executor import Executor

    _, g = model
    monkeypatch.setenv("HETLAB_SWITCH_INTERVAL_US", "fast")
    with pytest.raises(HetlabError, match="HETLAB_SWITCH_INTERVAL_US"):
        Executor(bind(Plan.of({n.id: "cpu0" for n in g.nodes}, g.topo_order()), g, groups))
    monkeypatch.setenv("HETLAB_SWITCH_INTERVAL_US", "20")
    assert Executor(
        bind(Plan.of({n.id: "cpu0" for n in g.nodes}, g.topo_order()), g, groups)
    ).switch_interval_s == pytest.approx(2e-5)
