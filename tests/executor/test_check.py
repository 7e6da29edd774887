"""The correctness check: onnxruntime's own spread beside max_rel_err, and selection outputs
(TopK, ArgMax, NonMaxSuppression) compared by what they select, so that a tie broken the
other way is no error and a wrong choice still is."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from hetlab.cli import main as cli_main
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.executor import run
from hetlab.executor.check import Reference, check_line, max_rel_err, reference
from hetlab.executor.selection import selections
from hetlab.graph.onnx_io import load
from tests.executor.models import save

CORES = sorted(os.sched_getaffinity(0))


def _model(path, nodes, inputs, outputs, inits=()) -> str:
    g = helper.make_graph(nodes, "sel", inputs, outputs, list(inits))
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def _vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


@pytest.fixture(scope="module")
def topk(tmp_path_factory) -> str:
    """x[2, 8] -> Floor -> f (ties by construction) -> TopK(k=3) -> vals, idx; ArgMax(f) -> am
    (keepdims 0). TopK's and ArgMax's input is an intermediate tensor."""
    k = numpy_helper.from_array(np.array([3], np.int64), "k")
    nodes = [
        helper.make_node("Floor", ["x"], ["f"], name="floor"),
        helper.make_node("TopK", ["f", "k"], ["vals", "idx"], name="topk", axis=1),
        helper.make_node("ArgMax", ["f"], ["am"], name="argmax", axis=1, keepdims=0),
    ]
    outs = [
        _vi("vals", [2, 3]),
        _vi("idx", [2, 3], TensorProto.INT64),
        _vi("am", [2], TensorProto.INT64),
    ]
    return _model(tmp_path_factory.mktemp("c") / "topk.onnx", nodes, [_vi("x", [2, 8])], outs, [k])


FEED = {"x": np.array([[3.2, 1.0, 3.7, 0.5, 3.1, 2.0, 1.5, 0.1], [1.0] * 8], np.float32)}


def _other_ties(ref: Reference) -> dict:
    """The reference's outputs with every tie broken another way: floor(FEED) is
    [3, 1, 3, 0, 3, 2, 1, 0] (three 3s at 0, 2, 4) and all 1s."""
    out = {k: np.array(v) for k, v in ref.outputs.items()}
    out["idx"] = np.array([[4, 0, 2], [7, 5, 1]], np.int64)
    out["am"] = np.array([2, 6], np.int64)
    return out


def test_selection_outputs_are_found_with_their_sources(topk):
    sel = selections(load(topk))
    assert {k: (s.op, s.role, s.source) for k, s in sel.items()} == {
        "vals": ("TopK", "values", "f"),
        "idx": ("TopK", "indices", "f"),
        "am": ("ArgMax", "indices", "f"),
    }


def test_a_tie_broken_another_way_is_no_error_a_wrong_choice_is(topk):
    ref = reference(load(topk), FEED)
    assert ref.spread == 0.0 and set(ref.sources) == {"f"}  # the intermediate was exposed
    other = _other_ties(ref)
    assert max_rel_err(other, ref.outputs) > 0.5  # elementwise, the indices differ
    doc = ref.report(other)
    assert doc["max_rel_err"] == 0.0 and doc["elementwise_max_rel_err"] > 0.5
    assert sorted(doc["tie_aware"]) == ["am", "idx", "vals"]
    wrong = dict(other, idx=np.array([[4, 0, 5], [7, 5, 1]], np.int64))  # a 2 among the 3s
    assert ref.report(wrong)["rel_err"]["idx"] == pytest.approx(1 / np.sqrt(27 + 3))
    assert ref.report(dict(other, am=np.array([1, 6], np.int64)))["rel_err"]["am"] > 0
    bad = dict(other, am=np.array([8, 6], np.int64))  # outside the axis
    assert ref.report(bad)["max_rel_err"] == float("inf")


def test_topk_values_are_compared_sorted(topk):
    ref = reference(load(topk), FEED)
    swapped = dict(ref.outputs, vals=ref.outputs["vals"][:, ::-1].copy())
    assert ref.report(swapped)["rel_err"]["vals"] == 0.0
    off = dict(ref.outputs, vals=ref.outputs["vals"] + 0.01)
    assert ref.report(off)["rel_err"]["vals"] > 0


def test_nms_is_compared_by_the_scores_of_the_selected_boxes(tmp_path):
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m"], ["sel"], name="nms")]
    m = numpy_helper.from_array(np.array([2], np.int64), "m")
    path = _model(
        tmp_path / "nms.onnx",
        nodes,
        [_vi("boxes", [1, 4, 4]), _vi("scores", [1, 1, 4])],
        [_vi("sel", [2, 3], TensorProto.INT64)],
        [m],
    )
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5], [6, 6, 7, 7]]], np.float32)
    scores = np.array([[[0.9, 0.5, 0.5, 0.1]]], np.float32)  # boxes 1 and 2 tie
    ref = reference(load(path), {"boxes": boxes, "scores": scores})
    assert ref.outputs["sel"][:, 2].tolist() == [0, 1]
    tied = {"sel": np.array([[0, 0, 0], [0, 0, 2]], np.int64)}
    assert ref.report(tied)["max_rel_err"] == 0.0 and ref.report(tied)["tie_aware"] == ["sel"]
    low = {"sel": np.array([[0, 0, 0], [0, 0, 3]], np.int64)}
    assert ref.report(low)["max_rel_err"] > 0.3
    assert ref.report({"sel": np.zeros((1, 3), np.int64)})["max_rel_err"] == float("inf")


def test_the_summary_says_where_the_error_stands_against_onnxruntimes_spread():
    ref = Reference({"y": np.array([1.0, 0.0])}, spread=2.7e-3)
    within = ref.report({"y": np.array([1.0, 2.7e-3])})
    assert within["within_reference_spread"] and within["tie_aware"] == []
    assert check_line(within) == (
        "max_rel_err 2.70e-03 against plain onnxruntime (within onnxruntime's own spread "
        "2.70e-03: graph optimisations off vs on, same inputs)"
    )
    above = ref.report({"y": np.array([1.0, 0.1])})
    assert not above["within_reference_spread"]
    assert "(onnxruntime's own spread 2.70e-03" in check_line(above)
    assert check_line({"max_rel_err": None}) is None


def test_a_run_report_carries_the_spread_and_the_tie_aware_outputs(topk):
    g = load(topk)
    rep = run(g, "c", [OrtCpuDevice("c", CORES[:1], threads=1)], check=True, inputs=FEED)
    doc = rep.to_json()
    assert doc["max_rel_err"] == 0.0 and doc["reference_spread"] == 0.0
    assert doc["within_reference_spread"] is True
    assert sorted(doc["tie_aware"]) == ["am", "idx", "vals"]
    assert set(doc["rel_err"]) == {"vals", "idx", "am"}


def test_cli_check_prints_the_spread_and_the_json_has_it(topk, capsys):
    assert cli_main(["run", topk, "--device", "cpu0", "--check", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("check"))
    assert "onnxruntime's own spread" in line and "compared tie-aware: " in line
    args = ["run", topk, "--device", "cpu0", "--check", "--repeat", "1", "--json"]
    assert cli_main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"max_rel_err", "reference_spread", "tie_aware"} <= set(doc)


def test_an_output_gathered_by_a_selections_indices_is_named_as_dependent(tmp_path):
    k = numpy_helper.from_array(np.array([2], np.int64), "k")
    nodes = [
        helper.make_node("TopK", ["s", "k"], ["v", "i"], name="topk", axis=0),
        helper.make_node("Gather", ["boxes", "i"], ["g"], name="gather", axis=0),
        helper.make_node("Relu", ["g"], ["top"], name="relu"),
    ]
    path = _model(
        tmp_path / "gather.onnx",
        nodes,
        [_vi("s", [6]), _vi("boxes", [6, 4])],
        [_vi("v", [2]), _vi("top", [2, 4])],
        [k],
    )
    g = load(path)
    assert set(selections(g)) == {"v"}
    feed = {"s": np.ones(6, np.float32), "boxes": np.arange(24, dtype=np.float32).reshape(6, 4)}
    ref = reference(g, feed)
    doc = ref.report(ref.outputs)
    assert doc["tie_aware"] == ["v"] and doc["selection_dependent"] == ["top"]
    assert "moved by ties: top" in check_line(doc)
