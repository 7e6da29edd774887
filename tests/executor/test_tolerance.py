"""The check's tolerance per precision: fp32 keeps its rule (no value, fails only on a value
that is not finite), another precision's is a multiple of its unit roundoff, the coarsest
precision among the devices that ran a node applies, and float16 outputs get the fp16 rule."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from hetlab.devices.precision import UNIT_ROUNDOFF
from hetlab.executor import run
from hetlab.executor.check import check_line
from hetlab.executor.check_verdict import failure
from hetlab.executor.report_text import format_report
from hetlab.executor.tolerance import TOLERANCE_U, tolerance
from hetlab.graph.onnx_io import load
from tests.precision_fakes import Tf32Device, chain_model
from tests.profiling.cost_helpers import OrtTestDevice, save_model, vi


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return load(chain_model(tmp_path_factory.mktemp("tol") / "chain.onnx"))


def test_fp32_keeps_todays_rule(chain):
    dev = Tf32Device("gpu", err=1e-2)
    rep = run(chain, "gpu", [dev], check=True).to_json()
    assert rep["tolerance"]["precision"] == "fp32" and rep["tolerance"]["value"] is None
    assert rep["precision"] == {"gpu": "fp32"}
    assert failure(rep) is None


@pytest.mark.parametrize(("err", "fails"), [(1e-3, False), (1e-2, True)])
def test_tf32_declares_its_tolerance_and_fails_above_it(chain, err, fails):
    dev = Tf32Device("gpu", err=err).with_precision("tf32")
    rep = run(chain, "gpu", [dev], check=True).to_json()
    tol = rep["tolerance"]
    assert tol["precision"] == "tf32" and tol["value"] == TOLERANCE_U * UNIT_ROUNDOFF["tf32"]
    assert tol["why"].startswith("gpu ran at tf32: 8 u of tf32 (u = 2^-11)")
    assert rep["precision"] == {"gpu": "tf32"}
    assert rep["max_rel_err"] == pytest.approx(err, rel=1e-3)
    assert (failure(rep) is not None) == fails
    assert "gpu 3 nodes at tf32" in format_report(rep)
    line = check_line(rep)
    assert ("FAILED: max_rel_err" in line) if fails else ("within the tf32 tolerance" in line)


def test_the_coarsest_precision_of_the_devices_that_ran_applies(chain):
    fp16 = Tf32Device("b")
    object.__setattr__(fp16, "precision", "fp16")  # as a device that declares fp16 runs
    devs = {"a": Tf32Device("a").with_precision("tf32"), "b": fp16, "c": OrtTestDevice("c")}
    both = {"mm1": "a", "relu": "a", "mm2": "b"}
    assert tolerance(chain, both, devs)["precision"] == "fp16"
    assert tolerance(chain, dict.fromkeys(both, "c"), devs)["precision"] == "fp32"
    assert tolerance(chain, {**both, "mm2": "a"}, devs)["why"].startswith("a ran at tf32")


def test_a_model_with_float16_outputs_uses_the_fp16_rule(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    half = [vi("x", [1, 4], TensorProto.FLOAT16)], [vi("y", [1, 4], TensorProto.FLOAT16)]
    g = load(save_model(tmp_path / "half.onnx", nodes, *half))
    tol = tolerance(g, {"relu": "c"}, {"c": OrtTestDevice("c")})
    assert tol["precision"] == "fp16" and "the model's outputs are float16 (y)" in tol["why"]


def test_the_public_run_takes_precision_as_the_cli_does(chain):
    import hetlab
    from hetlab.errors import HetlabError

    dev = Tf32Device("gpu", err=1e-3)
    rep = hetlab.run(chain, "gpu", [dev], precision="gpu=tf32", check=True).to_json()
    assert rep["precision"] == {"gpu": "tf32"} and dev.precision == "fp32"  # never mutated
    with pytest.raises(HetlabError, match="c cannot run at tf32"):
        hetlab.run(chain, "c", [OrtTestDevice("c")], precision={"c": "tf32"})
