"""Folding what is constant once the shapes are fixed (spec §1): shape subgraphs go, outputs
stay onnxruntime's on the original model, every vertex maps back to the vertices it stands for,
what depends on input values stays, control flow keeps working, and ``--no-fold`` gives the
graph of the model as given."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from hetlab.cli import main
from hetlab.graph import onnx_fold
from hetlab.graph.onnx_io import load
from tests.graph.models import save

F, I64 = TensorProto.FLOAT, TensorProto.INT64
OPSET = [helper.make_opsetid("", 17)]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """A fresh folding cache per test."""
    monkeypatch.setenv("HETLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "fold"


def _i64(name: str, *values: int):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _shape_chain(tmp_path, name: str = "chain.onnx") -> str:
    """x -> Shape -> Gather(0) -> Unsqueeze -> Concat([b, -1]) -> Reshape(x) -> Relu."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
        helper.make_node("Unsqueeze", ["b", "axes"], ["b1"]),
        helper.make_node("Concat", ["b1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Relu", ["r"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        _i64("axes", 0),
        _i64("minus1", -1),
    ]
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", F, ["batch", 3, 4, 4])],
        [helper.make_tensor_value_info("y", F, None)],
        inits,
    )
    return save(helper.make_model(g, opset_imports=OPSET), tmp_path / name)


def _ort(path: str, feed: dict) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feed)


def _same_outputs(g, feed: dict) -> None:
    for a, b in zip(_ort(g.model_path, feed), _ort(g.source_path, feed), strict=True):
        np.testing.assert_array_equal(a, b)


def _partition(g, before: list[str]) -> None:
    """Each original vertex is in exactly one vertex's origin, or dropped."""
    credited = [v for n in g.nodes for v in n.origin] + g.fold.get("dropped", [])
    assert sorted(credited) == sorted(before)


def test_shape_subgraph_folds_into_the_reshape(tmp_path):
    path = _shape_chain(tmp_path)
    g = load(path, {"x": (2, 3, 4, 4)})
    assert [(n.id, n.op_type) for n in g.nodes] == [("Reshape_4", "Reshape"), ("Relu_5", "Relu")]
    assert g.node("Reshape_4").origin == ["Shape_0", "Gather_1", "Unsqueeze_2", "Concat_3"] + [
        "Reshape_4"
    ]
    assert g.node("Relu_5").origin == ["Relu_5"]
    assert g.source_path == path and g.model_path != path
    assert g.fold == {
        "enabled": True,
        "folded": True,
        "nodes_before": 6,
        "folder": onnx_fold.folder_name(),
        "dropped": [],
    }
    assert "shape" in g.consts and g.tensors["shape"].shape == (2,)
    assert [(e.src, e.dst) for e in g.edges] == [("Reshape_4", "Relu_5")]
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    _same_outputs(g, {"x": x})


def test_no_fold_gives_the_graph_of_the_model_as_given(tmp_path, cache):
    path = _shape_chain(tmp_path)
    g = load(path, {"x": (2, 3, 4, 4)}, fold=False)
    assert [n.id for n in g.nodes] == [
        "Shape_0",
        "Gather_1",
        "Unsqueeze_2",
        "Concat_3",
        "Reshape_4",
        "Relu_5",
    ]
    assert all(n.origin == [n.id] for n in g.nodes)
    assert g.model_path == g.source_path == path and not cache.exists()
    assert g.fold == {"enabled": False, "folded": False, "nodes_before": 6}


def test_folding_is_deterministic_and_cached(tmp_path, cache, monkeypatch):
    path = _shape_chain(tmp_path)
    first = load(path, {"x": (1, 3, 4, 4)})
    again = load(path, {"x": (1, 3, 4, 4)})
    assert again.model_path == first.model_path
    monkeypatch.setenv("HETLAB_CACHE", str(tmp_path / "other"))
    fresh = load(path, {"x": (1, 3, 4, 4)})
    assert Path(fresh.model_path).read_bytes() == Path(first.model_path).read_bytes()
    assert [(n.id, n.origin) for n in fresh.nodes] == [(n.id, n.origin) for n in first.nodes]

    def boom(*a, **k):
        raise AssertionError("folded again")

    monkeypatch.setattr(onnx_fold, "_run_folder", boom)
    assert [n.id for n in load(path, {"x": (1, 3, 4, 4)}).nodes] == [n.id for n in first.nodes]
    other = load(path, {"x": (3, 3, 4, 4)}, fold=False)  # other shapes: another key
    assert len(other.nodes) == 6


def test_nothing_to_fold_keeps_the_file_and_the_ids(diamond, cache):
    g = load(diamond, {"x": (1, 3, 8, 8)})
    plain = load(diamond, {"x": (1, 3, 8, 8)}, fold=False)
    assert [n.id for n in g.nodes] == [n.id for n in plain.nodes]
    assert g.model_path == g.source_path == diamond
    assert g.fold == {"enabled": True, "folded": False, "nodes_before": 6}
    assert not cache.exists(), "nothing constant: the folder never ran"


def test_values_keep_what_depends_on_them(tmp_path):
    """A reshape by an input's values and everything after it stay; the folded model still
    runs other values than those the graph was loaded with."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sx"]),  # static: folds
        helper.make_node(
            "ConstantOfShape", ["sx"], ["ones"], value=helper.make_tensor("", F, [1], [1.0])
        ),
        helper.make_node("Add", ["x", "ones"], ["x1"]),
        helper.make_node("Concat", ["n", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x1", "shape"], ["r"]),
        helper.make_node("Shape", ["r"], ["sr"]),  # depends on n's value: stays
        helper.make_node(
            "ConstantOfShape", ["sr"], ["z"], value=helper.make_tensor("", F, [1], [2.0])
        ),
        helper.make_node("Mul", ["r", "z"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "values",
        [
            helper.make_tensor_value_info("x", F, [2, 6]),
            helper.make_tensor_value_info("n", I64, [1]),
        ],
        [helper.make_tensor_value_info("y", F, None)],
        [_i64("minus1", -1)],
    )
    path = save(helper.make_model(g, opset_imports=OPSET), tmp_path / "v.onnx")
    graph = load(path, values={"n": np.array([3], np.int64)})
    assert [n.id for n in graph.nodes] == [
        "Add_2",
        "Concat_3",
        "Reshape_4",
        "Shape_5",
        "ConstantOfShape_6",
        "Mul_7",
    ]
    assert graph.node("Add_2").origin == ["Shape_0", "ConstantOfShape_1", "Add_2"]
    _partition(graph, [f"{n.op_type}_{i}" for i, n in enumerate(nodes)])
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for n in (3, 4, 2):  # other values, other shapes: the folded model computes them all
        _same_outputs(graph, {"x": x, "n": np.array([n], np.int64)})


def _if_model(tmp_path) -> str:
    """An If whose then-branch reshapes by a shape computed outside it (constant once x's
    shape is fixed); the condition is an input, so the If stays."""
    then = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", F, None)],
    )
    other = helper.make_graph(
        [
            helper.make_node("Neg", ["x"], ["e0"]),
            helper.make_node("Reshape", ["e0", "shape"], ["e"]),
        ],
        "else",
        [],
        [helper.make_tensor_value_info("e", F, None)],
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ReduceProd", ["s"], ["p"], keepdims=1),
        helper.make_node("Identity", ["p"], ["shape"]),
        helper.make_node("If", ["c"], ["o"], then_branch=then, else_branch=other),
        helper.make_node("Relu", ["o"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "if",
        [
            helper.make_tensor_value_info("x", F, [2, 3]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", F, None)],
    )
    return save(helper.make_model(g, opset_imports=OPSET), tmp_path / "if.onnx")


def test_control_flow_stays_and_reads_the_folded_constant(tmp_path):
    path = _if_model(tmp_path)
    g = load(path)
    assert [n.id for n in g.nodes] == ["If_3", "Relu_4"]
    (cf,) = [n for n in g.nodes if n.op_type == "If"]
    assert cf.origin == ["Shape_0", "ReduceProd_1", "Identity_2", "If_3"]
    assert "shape" in g.consts and cf.outer_inputs == ["x", "shape"]
    body = onnx.load(g.model_path).graph.node[-2].attribute
    assert {a.name for a in body} == {"then_branch", "else_branch"}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for c in (True, False):
        _same_outputs(g, {"x": x, "c": np.array(c)})


def test_a_constant_model_output_stays_a_vertex_output(tmp_path):
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "out",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [
            helper.make_tensor_value_info("s", I64, None),
            helper.make_tensor_value_info("y", F, None),
        ],
    )
    path = save(helper.make_model(g, opset_imports=OPSET), tmp_path / "o.onnx")
    graph = load(path)
    producer = graph.producer()
    assert set(graph.outputs) <= set(producer)
    _partition(graph, ["Shape_0", "Relu_1"])
    _same_outputs(graph, {"x": np.ones((2, 3), np.float32)})


def test_cli_prints_the_vertices_before_folding(tmp_path, capsys):
    path = _shape_chain(tmp_path)
    assert main(["graph", path, "--shape", "x=2x3x4x4"]) == 0
    assert "vertices   2 (6 before folding)" in capsys.readouterr().out
    assert main(["graph", path, "--shape", "x=2x3x4x4", "--no-fold"]) == 0
    assert "vertices   6 (not folded: --no-fold)" in capsys.readouterr().out
    assert main(["graph", path, "--shape", "x=2x3x4x4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source_path"] == path and doc["fold"]["nodes_before"] == 6
    assert doc["nodes"][0]["origin"][-1] == doc["nodes"][0]["id"] == "Reshape_4"


def test_a_failing_folder_keeps_the_model_as_given(tmp_path, monkeypatch, capsys):
    def broken(*a, **k):
        raise RuntimeError("the folder broke\nsecond line")

    path = _shape_chain(tmp_path)
    with monkeypatch.context() as mp:
        mp.setattr(onnx_fold, "_run_folder", broken)
        g = load(path, {"x": (2, 3, 4, 4)})
    assert len(g.nodes) == 6 and g.model_path == path
    assert g.fold["note"] == "folding failed, kept as given: the folder broke"
    # the note is cached with the model: the folder is not tried again
    assert load(path, {"x": (2, 3, 4, 4)}).fold["note"] == g.fold["note"]
    assert main(["graph", path, "--shape", "x=2x3x4x4"]) == 0
    assert (
        "(not folded: folding failed, kept as given: the folder broke)" in capsys.readouterr().out
    )
