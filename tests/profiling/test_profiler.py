"""Profiler: ids, costs, unsupported ops, signature dedup, cache, interruption, groups."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cost_helpers import OrtTestDevice

from hetlab.cost.cache import cache_root
from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.graph.onnx_io import load
from hetlab.profiling.groups import find_groups, parse_patterns
from hetlab.profiling.profiler import profile
from hetlab.schedulers.plan import Plan

FAST = {"repeat": 5, "warmup": 1, "seconds": 0.02, "context": 0}


def test_node_ids_costs_and_problem_roundtrip(chain_model):
    g = load(chain_model)
    devs = [OrtTestDevice("a"), OrtTestDevice("b", tag="other")]
    p = profile(g, devs, **FAST)
    assert [n.id for n in p.nodes] == [n.id for n in g.nodes]
    assert [(e.src, e.dst) for e in p.edges] == [(e.src, e.dst) for e in g.edges]
    for n in p.nodes:
        for d in ("a", "b"):
            assert n.cost[d] is not None and n.cost[d] > 0
            st = n.extra["stats"][d]
            assert st["p10"] <= st["median"] <= st["p90"] and st["n"] >= 1
    doc = json.loads(json.dumps(p.to_json()))
    again = Problem.from_json(doc)
    assert again.devices == ["a", "b"]
    assert set(doc["comm"]) == {"a->b", "b->a"}
    assert doc["platform"]["cpu_model"] and doc["model"]["sha256"] and doc["date"]
    for e in doc["edges"]:  # host-memory devices: measured transfers exist and are small
        assert set(e["comm"]) == {"a->b", "b->a"} and all(v < 5.0 for v in e["comm"].values())


def test_unsupported_is_null(chain_model):
    g = load(chain_model)
    p = profile(g, [OrtTestDevice("a"), OrtTestDevice("b", refuse=["Sigmoid"])], comm=False, **FAST)
    sig = next(n for n in p.nodes if n.op_type == "Sigmoid")
    assert sig.cost["b"] is None and sig.cost["a"] is not None
    assert "b" in sig.extra["unsupported"]
    assert p.to_json()["nodes"][-1]["cost"]["b"] is None


def test_no_device_can_run_a_node(chain_model):
    with pytest.raises(HetlabError, match="no device"):
        profile(load(chain_model), [OrtTestDevice("a", refuse=["Reshape"])], comm=False, **FAST)


def test_one_gpu_through_two_drivers_is_refused_with_the_devices_to_keep(chain_model):
    """An NVIDIA GPU as an OpenCL and as a CUDA device is one GPU: a plan over both would
    run it as two. A queue view shares its device's hardware and is no second device."""

    class View(OrtTestDevice):
        def __init__(self, name: str, of: OrtTestDevice) -> None:
            super().__init__(name)
            self.of = of

        @property
        def root(self) -> OrtTestDevice:
            return self.of

    gpu_cl, gpu_cuda, other = OrtTestDevice("g"), OrtTestDevice("c"), OrtTestDevice("h")
    view = View("g.q1", gpu_cl)
    for d, hw in ((gpu_cl, "pci:0000:1a"), (view, "pci:0000:1a"), (gpu_cuda, "pci:0000:1a")):
        d.hardware_id = lambda hw=hw: hw
    other.hardware_id = lambda: "pci:0000:2b"
    cpu = OrtTestDevice("a")
    with pytest.raises(HetlabError, match=r"g and c are one GPU .*--devices a,c,h$"):
        profile(load(chain_model), [cpu, gpu_cl, view, gpu_cuda, other], comm=False, **FAST)
    p = profile(load(chain_model), [cpu, gpu_cl, view, other], comm=False, **FAST)
    assert p.devices == ["a", "g", "g.q1", "h"]


def test_signature_dedup_measures_once(chain_model):
    g = load(chain_model)
    dev = OrtTestDevice("a")
    p = profile(g, [dev], comm=False, cache=False, **FAST)
    relus = [n for n in p.nodes if n.op_type == "Relu"]
    assert len(relus) == 3 and len({n.extra["signature"] for n in relus}) == 1
    assert len({n.cost["a"] for n in relus}) == 1
    probes = {("probe",), tuple(f"relu{i}" for i in range(16))}  # probe.onnx, probe_chain.onnx
    measured = [u for u in dev.prepared if u not in probes]
    assert len(measured) == 3  # Relu once, Reshape, Sigmoid
    assert p.extra["profile"]["signatures"] == 3


def test_cache_hit_then_shape_change_invalidates(chain_model):
    g = load(chain_model)
    dev = OrtTestDevice("a")
    profile(g, [dev], comm=False, **FAST)
    n_first = len(dev.prepared)
    p2 = profile(g, [dev], comm=False, **FAST)
    assert len(dev.prepared) == n_first  # nothing measured again
    assert p2.extra["profile"]["measured"] == 0
    g2 = load(chain_model, {"x": (2, 4, 8, 8)})
    profile(g2, [dev], comm=False, **FAST)
    assert len(dev.prepared) > n_first  # new shapes: measured again
    # another repeat setting is another cache entry
    n = len(dev.prepared)
    profile(g, [dev], comm=False, repeat=6, warmup=1, seconds=0.02)
    assert len(dev.prepared) > n


def test_interrupt_keeps_finished_measurements(chain_model):
    g = load(chain_model)
    dev = OrtTestDevice("a")
    calls = []

    def stop_after_two(done, total, msg):
        calls.append(msg)
        if len(calls) == 6:  # overhead probe, round 1 of 3 ops, round 2 of 2 ops
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        profile(g, [dev], comm=False, progress=stop_after_two, **FAST)
    files = list(cache_root().rglob("*.json"))
    assert files and not list(cache_root().rglob("*.tmp"))
    for f in files:
        json.loads(f.read_text())  # every cache file is whole
    n_before = len(dev.prepared)
    p = profile(g, [dev], comm=False, **FAST)
    assert p.extra["profile"]["measured"] == 1  # only the op not finished before Ctrl-C
    assert len(dev.prepared) == n_before + 1


def test_groups_default_patterns(group_model):
    g = load(group_model)
    chains = find_groups(g)
    assert chains == [["conv1", "relu1"], ["conv2", "bn2", "relu2"], ["mm", "bias_add"]]
    # conv3's output is also read by add3: not a chain
    assert find_groups(g, parse_patterns(["Relu->Add"])) == [["relu3", "add3"]]
    with pytest.raises(HetlabError):
        parse_patterns(["Conv"])
    p = profile(
        g,
        [OrtTestDevice("a"), OrtTestDevice("b", refuse=["BatchNormalization"])],
        groups=True,
        comm=False,
        **FAST,
    )
    doc = p.to_json()
    assert [gr["nodes"] for gr in doc["groups"]] == chains
    by = {tuple(gr["nodes"]): gr["cost"] for gr in doc["groups"]}
    assert by[("conv2", "bn2", "relu2")]["b"] is None
    assert by[("conv1", "relu1")]["a"] > 0


def test_context_windows_rescale_isolated_costs(chain_model):
    g = load(chain_model)
    p = profile(g, [OrtTestDevice("a")], comm=False, **{**FAST, "context": 3})
    wins = p.extra["context_windows"]
    assert [w["nodes"] for w in wins] == [["r1", "r2", "r3"], ["reshape", "sig"]]
    by = {n.id: n for n in p.nodes}
    ov = p.extra["profile"]["overhead_ms"]["a"]
    f = {v: by[v].extra["context"]["a"] for v in by}
    assert f["r1"] == f["r2"] == f["r3"]  # one factor per op type: equal ops stay equal
    assert len({by[v].cost["a"] for v in ("r1", "r2", "r3")}) == 1
    for v, n in by.items():
        iso = max(n.extra["stats"]["a"]["median"] - ov, 1e-4)
        assert n.cost["a"] == pytest.approx(max(f[v] * iso, 1e-4), rel=1e-3, abs=1e-5)
    c0 = p.extra["profile"]["unit_overhead_ms"]["a"]  # per-unit cost, from the whole model's run
    whole = p.extra["profile"]["whole_model_ms"]["a"]["median"] - ov
    assert c0 >= 0
    total = sum(n.cost["a"] for n in p.nodes)
    if all(0.2 < x < 5.0 for x in f.values()):  # not clamped: the ops add up to the whole model
        # these ops take microseconds: a sum of medians differs from the whole model's median
        # by a few microseconds of timer and scheduling noise on a shared machine
        assert total == pytest.approx(max(whole - c0, 1e-4), rel=0.02, abs=1e-2)


def test_unit_overhead_is_what_each_extra_unit_costs():
    from hetlab.profiling.in_context import unit_overhead

    # 4 units of 1 ms of work each plus 0.2 ms per unit; the whole model pays 0.2 once
    assert unit_overhead([1.2] * 4, 4.2) == pytest.approx(0.2)
    assert unit_overhead([1.2, 0.3], 0.5) == pytest.approx(0.375)  # at most half the median unit
    assert unit_overhead([1.0, 1.0], 3.0) == 0.0  # never negative
    assert unit_overhead([1.0, None], 1.5) == 0.0 and unit_overhead([1.0], 0.5) == 0.0


def test_type_factors_recover_known_factors():
    from hetlab.profiling.in_context import type_factors

    # three types; windows mix them; true factors Conv 0.5, Relu 0.2 (clamped floor), Pool 1.5
    members = [
        [("Conv", 4.0), ("Relu", 1.0)],
        [("Conv", 2.0), ("Pool", 1.0)],
        [("Pool", 2.0), ("Relu", 1.0)],
        [("Conv", 1.0), ("Relu", 1.0), ("Pool", 1.0)],
    ]
    true = {"Conv": 0.5, "Relu": 0.2, "Pool": 1.5}
    win = [sum(true[t] * c for t, c in m) for m in members]
    f = type_factors(win, members, ridge=1e-4)  # exact data: the fit recovers the factors
    for t, v in true.items():
        assert f[t] == pytest.approx(v, abs=0.05)
    g = type_factors(win, members)  # the default pull towards 1; the windows' total still holds
    assert sum(g[t] * c for m in members for t, c in m) == pytest.approx(sum(win), rel=1e-6)
    assert max(g, key=g.get) == "Pool"
    assert type_factors([None], [[("Conv", 1.0)]]) == {}


def test_generic_device_timer_keeps_unit_outputs(chain_model):
    from cost_helpers import OwnedOutputsDevice

    p = profile(load(chain_model), [OwnedOutputsDevice("o")], comm=False, **FAST)
    assert all(n.extra["stats"]["o"]["timer"] == "device.run" for n in p.nodes)
    assert all(n.cost["o"] > 0 for n in p.nodes)


def test_boundary_latency_is_kept_apart_from_the_links_and_reproduces_the_measurement():
    from hetlab.calibrate.boundary import fit_latency
    from hetlab.cost.calibration import Calibration
    from hetlab.cost.problem import Link, PEdge, PNode, Problem
    from hetlab.schedulers.sim import simulate

    nodes = [PNode(id=x, op_type="Relu", cost={"a": 1.0, "b": 1.0}) for x in ("x", "y", "z")]
    edges = [
        PEdge(src="x", dst="y", bytes=4.0, comm={"a->b": 0.5}),
        PEdge(src="y", dst="z", bytes=4.0),
    ]
    p = Problem(
        name="t", devices=["a", "b"], nodes=nodes, edges=edges, comm={"a->b": Link(0.1, None)}
    )
    plan, order = {"x": "a", "y": "b", "z": "a"}, ["x", "y", "z"]
    base = simulate(p, plan, order).makespan  # 3 ms of work + 0.5 (measured edge) + 0.1 (link)
    ms = fit_latency(p, Plan.of(plan, order), base + 1.0, ("a", "b"))
    assert ms == pytest.approx(0.5, abs=1e-4)  # two boundaries share the extra millisecond
    assert fit_latency(p, Plan.of(plan, order), base - 0.5, ("a", "b")) == 0.0  # never negative
    before = p.comm_tensor.copy()
    p.calibration = Calibration.of({"a->b": {"ms": ms}, "b->a": {"ms": ms}})
    assert p.comm["a->b"].latency == 0.1 and p.edges[0].comm["a->b"] == 0.5  # links untouched
    assert simulate(p, plan, order).makespan == pytest.approx(base + 1.0, abs=1e-3)
    # a document written with the latency added into its links reads to the same costs
    old = p.to_json()
    del old["boundary"]["links"]
    old["comm"]["a->b"]["latency"] += ms
    old["edges"][0]["comm"]["a->b"] += ms
    back = Problem.from_json(old)
    assert back.comm["a->b"].latency == pytest.approx(0.1) and back.to_json()["boundary"]["links"]
    assert back.comm_tensor == pytest.approx(p.comm_tensor)
    assert (p.comm_tensor - before).max() == pytest.approx(ms)


def test_cheap_units_get_more_samples():
    from hetlab.profiling.measure import CHEAP_MORE, Budget, plan_repeats

    b = Budget(repeat=20, min_repeat=5, seconds=0.25)
    assert plan_repeats([1e-5], b) == 20 * CHEAP_MORE  # 10 us: 100 samples take 1 ms
    assert plan_repeats([2e-3], b) == 20  # 2 ms: 100 samples would take 0.2 s
    assert plan_repeats([0.1], b) == 5  # slow: cut to the time budget, at least min_repeat


def test_device_context_makes_ops_add_up_to_the_whole_model():
    from hetlab.profiling.in_context import device_context

    # two windows of Conv+Relu; isolated times overstate both; the whole model took 3.2 ms
    members = [
        [("c1", "Conv", 2.0), ("r1", "Relu", 0.5)],
        [("c2", "Conv", 1.0), ("r2", "Relu", 0.5)],
    ]
    everything = [m for w in members for m in w]
    fac, c0, _ = device_context([2.0, 1.4], [], 3.2, members, everything)
    assert c0 == pytest.approx(0.2)  # (2.0 + 1.4 - 3.2) / (2 - 1)
    assert sum(fac[v] * c for v, _, c in everything) == pytest.approx(3.2 - c0, rel=1e-3)
    assert fac["c1"] == fac["c2"] and fac["r1"] == fac["r2"]  # one factor per type
    fac2, c02, _ = device_context([2.0, 1.4], [], None, members, everything)  # no whole model
    assert c02 == 0.0 and sum(fac2[v] * c for v, _, c in everything) == pytest.approx(3.4, rel=1e-3)


def test_alternating_windows_plan():
    from hetlab import zoo
    from hetlab.calibrate.boundary import alternating
    from hetlab.devices.platform import devices
    from hetlab.graph.onnx_io import load
    from hetlab.profiling.in_context import windows

    g = load(str(zoo.path("squeezenet")))
    a, b = (
        [d for d in devices() if d.kind == "onnxruntime-cpu"][:2]
        if len(devices()) > 1
        else (None, None)
    )
    if a is None or b is None:
        pytest.skip("needs two CPU groups")
    wins = windows(g, 8)
    plan = alternating(g, wins, a, b)
    assert plan is not None and set(plan) == {n.id for n in g.nodes}
    assert [plan[w[0]] for w in wins] == [(a if i % 2 == 0 else b).name for i in range(len(wins))]
    assert alternating(g, wins[:3], a, b) is None  # too few boundaries to say anything


def test_scale_setting_units_are_timed_with_their_inputs_written_first():
    """Windows and the whole model are timed on a device that ``writes_inputs`` (OpenCL) with
    the inputs written before each run, as the executor runs a unit; ops and CPU groups not."""
    import numpy as np

    from hetlab.devices.capabilities import Capabilities
    from hetlab.devices.unit import RunResult, Unit
    from hetlab.profiling.device_pass import written
    from hetlab.profiling.measure import make_runner

    class Writable(OrtTestDevice):
        def __init__(self) -> None:
            super().__init__("w")
            self.log: list[str] = []

        def capabilities(self) -> Capabilities:
            return Capabilities(writes_inputs=True)

        def copy_in(self, a):
            return np.array(a)

        def write(self, buf, a) -> None:
            self.log.append("write")
            buf[...] = a

        def run(self, unit, bufs):
            self.log.append("run")
            return RunResult(outputs={}, start=0.0, finish=0.001)

    dev = Writable()
    unit = Unit("w", ["n"], ["x"], ["y"])
    once, timer = make_runner(dev, unit, {"x": np.ones(2, np.float32)}, written=True)
    assert once() == pytest.approx(0.001) and timer == "device.run after write"
    once()
    assert dev.log == ["write", "run", "write", "run"]
    dev.log.clear()
    once, timer = make_runner(dev, unit, {"x": np.ones(2, np.float32)})
    once()
    assert dev.log == ["run"] and timer == "device.run"
    assert written(dev, "whole") and written(dev, "windows") and not written(dev, "ops")
    assert not written(OrtTestDevice("cpu"), "whole")


def test_a_device_without_the_whole_model_is_scaled_to_its_longest_span(chain_model):
    from hetlab.profiling.in_context import runnable_span

    order = ["r1", "r2", "r3", "reshape", "sig"]
    wins = [["r1", "r2"], ["r3", "reshape"]]
    assert runnable_span(order, wins, lambda v: v != "sig") == order[:4]
    assert runnable_span(order, wins, lambda v: v != "r3") is None  # no two windows inside
    g = load(chain_model)
    devs = [OrtTestDevice("a", refuse=["Sigmoid"]), OrtTestDevice("b")]
    p = profile(g, devs, comm=False, **{**FAST, "context": 2})
    prof = p.extra["profile"]
    assert "a" not in prof["whole_model_ms"] and prof["span_ms"]["a"]["nodes"] == 4
    assert "b" in prof["whole_model_ms"] and "b" not in prof["span_ms"]
    span = prof["span_ms"]["a"]["median"] - prof["overhead_ms"]["a"]
    by = {n.id: n for n in p.nodes}
    f = {v: by[v].extra["context"]["a"] for v in order[:4]}
    if all(0.2 < x < 5.0 for x in f.values()):  # not clamped: the span's ops add up to it
        total = sum(by[v].cost["a"] for v in order[:4])
        c0 = prof["unit_overhead_ms"]["a"]
        assert total == pytest.approx(max(span - c0, 1e-4), rel=0.02, abs=1e-3)
    assert by["sig"].cost["a"] is None


class _FailsAlone(OrtTestDevice):
    """Runs every unit but a one-node Reshape, as a session over a shape-path node fails."""

    def prepare(self, graph, nodes):
        if list(nodes) == ["reshape"]:
            raise RuntimeError("Invalid rank for output")
        return super().prepare(graph, nodes)


def test_a_node_whose_measurement_fails_gets_an_estimate_from_its_work(chain_model):
    import numpy as np

    from hetlab.commands.profile import estimated_summary
    from hetlab.profiling.assemble import node_work

    g = load(chain_model)
    p = profile(g, [_FailsAlone("a")], comm=False, **FAST)
    by = {n.id: n for n in p.nodes}
    work = node_work(g)
    # a Reshape counts no FLOPs and no other Reshape was measured: the device's median ms
    # per byte over the measured nodes, times the bytes the Reshape reads and writes
    per_byte = np.median([by[v].cost["a"] / work[v].bytes for v in by if v != "reshape"])
    assert by["reshape"].cost["a"] == pytest.approx(per_byte * work["reshape"].bytes, abs=2e-6)
    assert by["reshape"].extra["estimated"] is True
    assert "per byte" in by["reshape"].extra["no_measure"]["a"]
    assert "Invalid rank for output" in by["reshape"].extra["estimate_reason"]["a"]
    prof = p.extra["profile"]
    assert prof["no_measure"] == 1 and prof["estimated_costs"] == 1 and prof["costs"] == 5
    assert all("estimated" not in n.extra for n in p.nodes if n.id != "reshape")
    line = estimated_summary(p)
    assert line.startswith("1 of 5 costs estimated") and "reshape (Reshape) on a" in line
    assert estimated_summary(profile(g, [OrtTestDevice("a")], comm=False, **FAST)) is None


class _FailsAll(OrtTestDevice):
    """Runs no unit at all, as a device out of memory for every tensor."""

    def prepare(self, graph, nodes):
        raise RuntimeError("Failed to allocate memory")


def test_a_device_that_measured_nothing_is_refused_not_given_made_up_costs(chain_model):
    g = load(chain_model)
    with pytest.raises(HetlabError) as e:
        profile(g, [OrtTestDevice("a"), _FailsAll("b", tag="oom")], comm=False, **FAST)
    msg = str(e.value)
    assert msg.startswith("b measured none of the 5 nodes it supports")
    assert "Failed to allocate memory" in msg and "\n" not in msg


def test_an_estimate_scales_with_the_work_of_the_node():
    from hetlab.profiling.unmeasured import Work, fill_unmeasured

    work = {
        "r1": Work("Relu", 100, 800),
        "r2": Work("Relu", 200, 1600),
        "small": Work("Relu", 50, 400),
        "big": Work("Relu", 10**9, 8 * 10**9),
        "shape": Work("Shape", 0, 40),
        "conv": Work("Conv", 10**6, 4000),
    }
    iso = {v: {"a": None, "b": None} for v in work}
    iso["r1"]["a"], iso["r2"]["a"], iso["r2"]["b"] = 1.0, 2.0, 4.0
    iso["conv"]["a"] = 0.5
    filled = fill_unmeasured(iso, work, lambda v, d: (v, d) != ("r1", "b"), 1e-4)
    # the measured Relus run at 0.01 ms per FLOP: other Relus get their FLOPs at that rate
    assert iso["small"]["a"] == 0.5 and iso["big"]["a"] == pytest.approx(1e7)
    assert iso["small"]["b"] == 1.0  # per device: b measured its Relu at 0.02 ms per FLOP
    assert iso["r1"]["b"] is None  # not supported there: stays unrunnable
    # no Shape measured: bytes at the device's median ms per byte, not its least cost
    per_byte = sorted([1.0 / 800, 2.0 / 1600, 0.5 / 4000])[1]
    assert iso["shape"]["a"] == pytest.approx(per_byte * 40, abs=1e-6)
    # an op type never measured on b: the device's throughput (its one Relu) on the Conv's FLOPs
    assert iso["conv"]["b"] == pytest.approx(0.02 * 10**6)
    assert set(filled) == {"small", "big", "shape", "conv"}
    again = {v: {"a": None, "b": None} for v in work}
    again["r1"]["a"], again["r2"]["a"], again["r2"]["b"] = 1.0, 2.0, 4.0
    again["conv"]["a"] = 0.5
    fill_unmeasured(again, work, lambda v, d: (v, d) != ("r1", "b"), 1e-4)
    assert again == iso  # deterministic


def test_options_object_and_keywords_are_one_and_the_same(chain_model):
    import dataclasses

    from hetlab.profiling.options import ProfileOptions, options_of

    opts = ProfileOptions(comm=False, **FAST)
    assert options_of(None, {"comm": False, **FAST}) == opts
    assert options_of(opts, {"repeat": 7}) == dataclasses.replace(opts, repeat=7)
    with pytest.raises(TypeError, match="repeats"):
        options_of(None, {"repeats": 3})
    with pytest.raises(HetlabError, match="repeat and rounds"):
        options_of(opts, {"rounds": 0})
    g = load(chain_model)
    p = profile(g, [OrtTestDevice("a")], options=opts, name="by-options")
    assert p.name == "by-options" and p.extra["profile"]["repeat"] == FAST["repeat"]


def test_cli_defaults_are_the_options_defaults():
    import argparse

    from hetlab.commands.profile import configure
    from hetlab.profiling.options import ProfileOptions

    ap = argparse.ArgumentParser()
    configure(ap)
    a = ap.parse_args(["m.onnx", "--devices", "cpu0", "--out", "p.json"])
    o = ProfileOptions()
    assert (a.repeat, a.warmup, a.seconds, a.rounds, a.context) == (
        o.repeat,
        o.warmup,
        o.seconds,
        o.rounds,
        o.context,
    )


def test_a_scalar_input_is_timed_as_a_scalar(tmp_path):
    """A shape-path Unsqueeze of a 0-d int64 tensor: the timer binds it 0-d (a 1-d binding
    made onnxruntime reject the output's rank from the second run on)."""
    from cost_helpers import init, save_model, vi
    from onnx import TensorProto, helper

    from hetlab.devices.ort_cpu import OrtCpuDevice
    from hetlab.profiling.measure import make_runner

    path = save_model(
        tmp_path / "unsq.onnx",
        [helper.make_node("Unsqueeze", ["s", "axes"], ["y"], name="u")],
        [vi("s", [], TensorProto.INT64)],
        [vi("y", [1], TensorProto.INT64)],
        [init("axes", np.array([0], np.int64))],
    )
    g = load(path)
    dev = OrtCpuDevice("c", [0], threads=1, pin=False)
    run_once, timer = make_runner(dev, dev.prepare(g, ["u"]), {"s": np.array(3, np.int64)})
    assert timer == "iobinding" and all(run_once() >= 0 for _ in range(3))
    p = profile(g, [dev], comm=False, cache=False, **FAST)
    assert p.nodes[0].cost["c"] is not None and p.extra["profile"]["no_measure"] == 0
