"""Whole models in float16 on a kernel device alone, checked as ``hetlab run --device D
--check`` checks them: a model stored in float16 (weights cast to float32 before use) within
the float32 rule, with the graph's constants folded or not; a model computing in float16
within the fp16 tolerance. Squeezenet of the zoo, turned by ``half_models``."""

from __future__ import annotations

import pytest

from hetlab.devices.precision import UNIT_ROUNDOFF
from tests.devices.half_models import computing_in_half, stored_in_half

pytest.importorskip("pyopencl")
zoo = pytest.importorskip("hetlab.zoo", reason="hetlab.zoo (zoo models) is not available yet")

FP32_RULE = 1e-4  # --check's rule for float32 outputs
TOL16 = 4 * UNIT_ROUNDOFF["fp16"]


def checked_on(dev, path, fold: bool):
    """The nodes per device and max_rel_err of one checked run with every node the device
    takes on it (the rest on cpu0)."""
    from hetlab.devices.platform import get
    from hetlab.executor.api import run
    from hetlab.graph import onnx_io

    g = onnx_io.load(str(path), fold=fold)
    refused = {n.op_type: dev.why_not(n, g) for n in g.nodes if not dev.supports(n, g)}
    rep = run(g, dev.name, [get("cpu0"), dev], warmup=0, check=True)
    return g, refused, rep


@pytest.mark.parametrize("fold", [True, False], ids=["folded", "unfolded"])
def test_stored_in_half_runs_on_the_device_alone(dev, tmp_path, fold):
    """Every Cast of a float16 weight, folded into a float32 constant or left a node, runs
    on the device; the float32 computation matches onnxruntime's."""
    path = stored_in_half(zoo.path("squeezenet"), tmp_path / "sq16.onnx")
    g, refused, rep = checked_on(dev, path, fold)
    assert not refused and rep.devices == {dev.name: len(g.nodes)}
    assert fold or sum(n.op_type == "Cast" for n in g.nodes) >= 26  # one per weight
    assert rep.max_rel_err is not None and rep.max_rel_err <= FP32_RULE


def test_stored_in_half_with_half_inputs_and_outputs(dev, tmp_path):
    path = stored_in_half(zoo.path("squeezenet"), tmp_path / "sq16io.onnx", io=True)
    g, refused, rep = checked_on(dev, path, True)
    assert g.tensors[g.inputs[0]].dtype == "float16" == g.tensors[g.outputs[0]].dtype
    assert not refused and rep.devices == {dev.name: len(g.nodes)}
    assert rep.max_rel_err is not None and rep.max_rel_err <= TOL16


def test_computing_in_half_runs_on_the_device_alone(dev, tmp_path):
    """Conv, Relu, MaxPool, Concat, pooling and Softmax on float16 tensors."""
    path = computing_in_half(zoo.path("squeezenet"), tmp_path / "sq16all.onnx")
    g, refused, rep = checked_on(dev, path, True)
    assert all(g.tensors[t].dtype == "float16" for n in g.nodes for t in n.outputs)
    assert not refused and rep.devices == {dev.name: len(g.nodes)}
    assert rep.max_rel_err is not None and rep.max_rel_err <= TOL16
