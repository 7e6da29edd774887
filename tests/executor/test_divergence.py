"""The per-node divergence finder: a device that computes one op differently is named, with
its attributes, shapes and error; a faithful device gives no finding."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from hetlab.cli import main as cli_main
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.devices.unit import RunResult
from hetlab.executor.check import load_inputs, reference_spread
from hetlab.executor.divergence import compare, first_divergence, format_scan, scan
from hetlab.graph.onnx_io import load
from tests.executor.models import two_branch

CORE = [min(os.sched_getaffinity(0))]


class Skewed(OrtCpuDevice):
    """onnxruntime, except that every output of ``op`` nodes is scaled by ``1 + skew``."""

    def __init__(self, op: str, skew: float) -> None:
        super().__init__("skewed", CORE)
        self.op, self.skew = op, skew
        self.graph = None

    def prepare(self, graph, nodes, outputs=None):
        self.graph = graph
        return super().prepare(graph, nodes, outputs)

    def run(self, unit, inputs):
        res = super().run(unit, inputs)
        if any(self.graph.node(v).op_type == self.op for v in unit.nodes):
            outs = {k: np.asarray(v) * np.float32(1 + self.skew) for k, v in res.outputs.items()}
            return RunResult(outs, res.start, res.finish, res.node_times)
        return res


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = two_branch(tmp_path_factory.mktemp("m") / "tb.onnx")
    g = load(path)
    return path, g, load_inputs(g, {}, 0)


def test_faithful_device_has_no_divergence(model):
    _, g, feed = model
    s = scan(g, OrtCpuDevice("cpu0", CORE), feed)
    assert s.divergences == [] and s.compared == len(g.nodes) and not s.not_run
    assert s.worst is not None and s.worst[1] < 1e-6
    assert first_divergence(g, OrtCpuDevice("cpu0", CORE), feed) is None


def test_skewed_op_is_named_with_attrs_shapes_and_error(model):
    _, g, feed = model
    d = first_divergence(g, Skewed("Conv", 1e-2), feed)
    assert d is not None and d.node == "stem" and d.op_type == "Conv"
    assert d.attrs["pads"] == [1, 1, 1, 1]
    assert d.input_shapes == [[1, 8, 16, 16], [8, 8, 3, 3], [8]]
    assert d.output_shapes == [[1, 8, 16, 16]] and d.output == "s0"
    assert d.rel_err == pytest.approx(1e-2, rel=1e-3)
    assert d.got == pytest.approx(d.want * (1 + 1e-2), rel=1e-5)
    line = d.line()
    assert "\n" not in line and "'stem'" in line and "pads=" in line and "[1,8,16,16]" in line
    doc = d.to_json()
    assert json.loads(json.dumps(doc))["op_type"] == "Conv"


def test_isolated_finds_only_the_skewed_op_chained_finds_its_consumers(model):
    _, g, feed = model
    iso = scan(g, Skewed("Sigmoid", 1e-3), feed)
    assert [d.node for d in iso.divergences] == ["b_sig"]
    chained = scan(g, Skewed("Sigmoid", 1e-3), feed, chained=True)
    names = [d.node for d in chained.divergences]
    assert names[0] == "b_sig" and "b_conv2" in names
    assert [d.position for d in chained.divergences] == sorted(
        d.position for d in chained.divergences
    )


def test_tolerance_separates_rounding_from_a_finding(model):
    _, g, feed = model
    assert scan(g, Skewed("Sigmoid", 1e-6), feed, rtol=1e-4).divergences == []
    assert len(scan(g, Skewed("Sigmoid", 1e-3), feed, rtol=1e-4).divergences) == 1


def test_compare_shapes_nan_and_zero_reference():
    assert compare(np.zeros(3), np.zeros(4))[0] == float("inf")
    assert compare(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))[0] == 0.0
    rel, mabs, at, got, want = compare(np.array([0.0, 2e-7]), np.zeros(2))
    assert (
        rel == pytest.approx(2e-7) == mabs
        and at == [1]
        and got == pytest.approx(2e-7)
        and want == 0
    )
    assert compare(np.array(["a"]), np.array(["b"]))[0] == 1.0


def test_reference_spread_is_small_on_a_well_conditioned_model(model):
    path, g, feed = model
    assert 0 <= reference_spread(path, feed, list(g.outputs)) < 1e-5


def test_format_scan_one_line_per_finding(model):
    _, g, feed = model
    s = scan(g, Skewed("Conv", 1e-2), feed)
    text = format_scan(s, g)
    lines = text.splitlines()
    assert lines[0].startswith("per-node") and len(lines) == 1 + len(s.divergences)
    assert all(ln.startswith("diverges") for ln in lines[1:])


def test_cli_per_node_json(model, capsys):
    path, g, _ = model
    assert cli_main(["run", path, "--device", "cpu0", "--check", "--per-node", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["device"] == "cpu0" and doc["nodes_compared"] == len(g.nodes)
    assert doc["divergences"] == [] and doc["rtol"] == 1e-4
    assert doc["reference_spread"] is not None and doc["reference_spread"] < 1e-5


def test_cli_per_node_text_and_tolerance(model, capsys):
    path, _, _ = model
    assert cli_main(["run", path, "--device", "cpu0", "--check", "--per-node", "1e-3"]) == 0
    out = capsys.readouterr().out
    assert "tolerance 1e-03" in out and "agrees" in out


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--device", "cpu0", "--per-node"], "--per-node needs --device NAME and --check"),
        (["--device", "cpu0", "--check", "--per-node", "0"], "must be positive"),
    ],
)
def test_cli_per_node_bad_use_is_one_line(model, capsys, args, msg):
    path, _, _ = model
    assert cli_main(["run", path, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and err.count("\n") == 0
