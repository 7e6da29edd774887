"""Spec §1 on small hand-built models: ids, Constant folding, edges and bytes, levels,
control-flow edges, symbolic dimensions, data-dependent shapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from hetlab.errors import HetlabError
from hetlab.graph.flops import node_flops
from hetlab.graph.inputs import random_inputs
from hetlab.graph.onnx_io import extract, load, unit_io
from tests.graph.models import F, save


def test_ids_constants_edges_levels(diamond):
    g = load(diamond)
    ids = [n.id for n in g.nodes]
    # Constant is folded; unnamed and duplicate-named nodes get {op_type}_{index}
    assert ids == ["conv", "relu", "Sigmoid_2", "Tanh_3", "Add_5", "mul"]
    assert "k" in g.consts and "w" in g.consts
    assert {n.id: n.level for n in g.nodes} == {
        "conv": 1,
        "relu": 2,
        "Sigmoid_2": 3,
        "Tanh_3": 3,
        "Add_5": 4,
        "mul": 5,
    }
    e = {(x.src, x.dst): x for x in g.edges}
    assert set(e) == {
        ("conv", "relu"),
        ("relu", "Sigmoid_2"),
        ("relu", "Tanh_3"),
        ("Sigmoid_2", "Add_5"),
        ("Tanh_3", "Add_5"),
        ("Add_5", "mul"),
    }
    assert all(x.bytes == 1 * 4 * 8 * 8 * 4 for x in g.edges)  # fp32 [1,4,8,8]
    conv = g.node("conv")
    assert conv.flops == 2 * (4 * 8 * 8) * (3 * 3 * 3)
    assert conv.out_bytes == 1024
    g.lint()


def test_one_edge_per_pair_sums_tensors(tmp_path):
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2, name="split"),
        helper.make_node("Add", ["a", "b"], ["y"], name="add"),
    ]
    gr = helper.make_graph(
        nodes,
        "s",
        [helper.make_tensor_value_info("x", F, [1, 6, 5])],
        [helper.make_tensor_value_info("y", F, None)],
    )
    g = load(
        save(
            helper.make_model(gr, opset_imports=[helper.make_opsetid("", 18)]), tmp_path / "s.onnx"
        )
    )
    assert len(g.edges) == 1
    assert g.edges[0].bytes == 2 * (1 * 3 * 5 * 4) and g.edges[0].tensors == ["a", "b"]


def _if_model(tmp_path) -> str:
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["r", "r"], ["t_out"])],
        "then",
        [],
        [helper.make_tensor_value_info("t_out", F, [2, 3])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["q"], ["e_out"])],
        "else",
        [],
        [helper.make_tensor_value_info("e_out", F, [2, 3])],
    )
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["x"], ["q"], name="sig"),
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="if"),
    ]
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    gr = helper.make_graph(
        nodes,
        "cf",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, None)],
        [zero],
    )
    return save(
        helper.make_model(gr, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "if.onnx"
    )


def test_control_flow_is_one_vertex_with_outer_edges(tmp_path):
    g = load(_if_model(tmp_path))
    assert [n.id for n in g.nodes] == ["relu", "sig", "sum", "gt", "if"]
    node = g.node("if")
    assert set(node.outer_inputs) == {"r", "q"}
    assert set(g.preds("if")) == {"gt", "relu", "sig"}
    e = {(x.src, x.dst): x.bytes for x in g.edges}
    assert e[("relu", "if")] == 2 * 3 * 4 and e[("gt", "if")] == 1
    assert g.node("if").level == 3  # sum(1) -> gt(2) -> if(3); relu, sig are level 1
    # the If's output shape is recorded although it comes from a body
    assert g.tensors["y"].shape == (2, 3)


def test_loop_outer_reads_nested(tmp_path):
    body = helper.make_graph(
        [
            helper.make_node("Add", ["v_in", "w"], ["v_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", F, [4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", F, [4]),
        ],
    )
    nodes = [
        helper.make_node("Exp", ["x"], ["w"], name="exp"),
        helper.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="loop"),
    ]
    n = numpy_helper.from_array(np.array(3, np.int64), "n")
    gr = helper.make_graph(
        nodes,
        "lp",
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, [4])],
        [n],
    )
    g = load(
        save(
            helper.make_model(gr, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "l.onnx"
        )
    )
    assert g.node("loop").outer_inputs == ["w"]
    assert [(e.src, e.dst, e.bytes) for e in g.edges] == [("exp", "loop", 16)]


def test_symbolic_dims_shared_and_first_defaults(tmp_path):
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")]
    gr = helper.make_graph(
        nodes,
        "sym",
        [
            helper.make_tensor_value_info("a", F, ["batch", "seq", 8]),
            helper.make_tensor_value_info("b", F, ["batch", 8, "n"]),
        ],
        [helper.make_tensor_value_info("y", F, None)],
    )
    p = save(
        helper.make_model(gr, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx"
    )
    with pytest.raises(HetlabError, match="'seq'"):
        load(p)
    g = load(p, {"a": (3, 5, 8), "b": (3, 8, 7)})
    assert g.tensors["y"].shape == (3, 5, 7)
    assert g.node("mm").flops == 2 * 3 * 5 * 7 * 8
    with pytest.raises(HetlabError, match="two values"):
        load(p, {"a": (3, 5, 8), "b": (2, 8, 7)})
    with pytest.raises(HetlabError, match="does not have"):
        load(p, {"zzz": (1,)})


def test_data_dependent_shape_recorded_from_onnxruntime(tmp_path):
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("NonZero", ["r"], ["nz"], name="nz"),
        helper.make_node("Transpose", ["nz"], ["t"], name="tr"),
    ]
    gr = helper.make_graph(
        nodes,
        "dd",
        [helper.make_tensor_value_info("x", F, [3, 4])],
        [helper.make_tensor_value_info("t", TensorProto.INT64, None)],
    )
    g = load(
        save(
            helper.make_model(gr, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "d.onnx"
        )
    )
    x = random_inputs(g)["x"]
    k = int((np.maximum(x, 0) != 0).sum())
    assert g.tensors["nz"].shape == (2, k)
    assert g.edges[-1].bytes == 2 * k * 8


def test_extract_runs_in_onnxruntime(diamond):
    g = load(diamond)
    ins, outs = unit_io(g, ["relu", "Sigmoid_2", "Tanh_3"])
    assert ins == ["c"] and outs == ["r", "a", "b"] or set(outs) == {"a", "b"}
    full = ort.InferenceSession(extract(g, [n.id for n in g.nodes]))
    x = random_inputs(g)
    ref = ReferenceEvaluator(g.model_path).run(None, x)[0]  # onnxruntime refuses duplicate names
    np.testing.assert_allclose(full.run(None, x)[0], ref, rtol=1e-5)
    tail = ort.InferenceSession(extract(g, ["Add_5", "mul"]))
    assert sorted(i.name for i in tail.get_inputs()) == ["a", "b"]


@pytest.mark.parametrize("content", [b"", b"not an onnx file at all", None])
def test_bad_files(tmp_path, diamond, content):
    p = tmp_path / "bad.onnx"
    if content is None:  # truncated real model
        data = Path(diamond).read_bytes()
        content = data[: len(data) // 2]
    p.write_bytes(content)
    with pytest.raises(HetlabError):
        load(str(p))
    with pytest.raises(HetlabError, match="not found"):
        load(str(tmp_path / "missing.onnx"))


def test_einsum_flops_count_every_index():
    """An Einsum costs a multiply-add per point of its index space, like the MatMul it is."""
    eq = {"equation": "btgi,gih->btgh"}
    assert node_flops("Einsum", eq, [(2, 5, 3, 4), (3, 4, 6)], [(2, 5, 3, 6)]) == 2 * 720
    mm = node_flops("MatMul", {}, [(3, 5, 8), (3, 8, 7)], [(3, 5, 7)])
    assert node_flops("Einsum", {"equation": "bij,bjk"}, [(3, 5, 8), (3, 8, 7)], []) == mm
    assert node_flops("Einsum", {"equation": "...i,...i"}, [(2, 3), (2, 3)], [(2,)]) == 2
