"""The stretch transform: meeting points, constraints (eqs. 4-6, bounds), a valid ONNX model."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from stretch_helpers import DEVICES, cost_model

from hetlab.errors import HetlabError
from hetlab.graph import load
from hetlab.stretch.onnx_rewrite import stretch_meta
from hetlab.stretch.segments import cut_tensors, segments
from hetlab.stretch.transform import Constraints, meeting_comm_ms, plan_stretch, segment_latency


def _hw(g, t):
    return tuple(g.tensors[t].shape[2:])


@pytest.mark.parametrize("model", ["squeezenet", "resnet50"])
def test_meeting_points_are_where_spatial_size_changes(graphs, searched, model):
    g = graphs[model]
    segs = segments(g)
    cuts = [t for _, t in cut_tensors(g)]
    prod = g.producer()
    for s in segs:
        if not s.branchable:
            continue
        inside = [t for t in cuts if prod.get(t) in set(s.nodes)]
        assert _hw(g, s.input) != _hw(g, inside[0])  # a segment opens with a size change
        assert len({_hw(g, t) for t in inside}) == 1  # and keeps one size until its end
    best = searched[model][0]
    for p in best.plan.parts:
        assert any(s.input == p.input for s in segs) and any(s.output == p.output for s in segs)
    if model == "resnet50":
        outs = [_hw(g, s.output) for s in segs if s.branchable]
        assert outs == [(56, 56), (28, 28), (14, 14), (7, 7)]


@pytest.mark.parametrize("model", ["squeezenet", "resnet50"])
def test_chosen_config_meets_eqs_4_5_6_and_bounds(graphs, searched, model):
    g, cm, c = graphs[model], cost_model(), Constraints()
    best, rows = searched[model]
    assert len(rows) >= 2 and best.predicted_ms == pytest.approx(
        min(r["predicted_ms"] for r in rows), abs=1e-3
    )
    share = 1 / len(DEVICES)
    for p in best.plan.parts:
        lat = min(segment_latency(g, p.nodes, d, cm) for d in DEVICES)
        assert meeting_comm_ms(g, p.input, p.output, 2, cm) <= c.alpha * lat  # eq. 4
        tot = sum(b.flops for b in p.branches)
        core = sum(b.layout.flops for b in p.branches)
        assert c.capacity * p.flops <= core <= (c.capacity + c.capacity_tol) * p.flops
        assert sum(b.restore for b in p.branches) == g.tensors[p.output].shape[1]
        for b in p.branches:
            assert b.latency_ms <= c.beta * p.latency_ms[b.device] + 1e-9  # eq. 5
            assert abs(b.flops / tot - share) <= c.share_tol  # eq. 6
            depth_total = sum(len(s.repeats) for s in segments(g) if s.index in p.segs) + 1
            assert b.layout.depth / depth_total >= c.min_depth and b.layout.width >= c.min_width


@pytest.mark.parametrize("model", ["squeezenet", "resnet50"])
def test_stretched_model_is_valid_and_runs_in_onnxruntime(graphs, written, model):
    path = written[model]
    onnx.checker.check_model(onnx.load(str(path)))
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ref = ort.InferenceSession(str(graphs[model].model_path)).run(None, {"input": x})[0]
    out = ort.InferenceSession(str(path)).run(None, {"input": x})[0]
    assert out.shape == ref.shape and np.isfinite(out).all() and np.abs(out).max() > 0
    g2 = load(str(path))
    branch_nodes = [n for n in g2.nodes if n.id.startswith("stretch/p")]
    assert {n.id.split("/")[2] for n in branch_nodes} >= {"b0", "b1"}
    assert [n.op_type for n in g2.nodes if n.id.endswith("/meet")] == ["Concat"] * len(
        stretch_meta(path)["parts"]
    )


def test_unequal_throughputs_give_unequal_branches(graphs):
    g = graphs["resnet50"]
    cm = cost_model()
    cm.throughput["cpu1"] = 1e7  # half as fast: about a third of the FLOPs (eq. 6)
    sp = plan_stretch(g, DEVICES, cm, Constraints(share_tol=0.1))
    for p in sp.parts:
        f0, f1 = (b.flops for b in p.branches)
        assert f1 / (f0 + f1) == pytest.approx(1 / 3, abs=0.1)


def test_model_without_stages_is_refused(tmp_path):
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((8, 4), np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
        helper.make_node("Relu", ["h"], ["y"], name="r"),
    ]
    gr = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [w],
    )
    m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    onnx.save(m, str(tmp_path / "mlp.onnx"))
    with pytest.raises(HetlabError, match="no stage boundary"):
        plan_stretch(load(str(tmp_path / "mlp.onnx")), DEVICES, cost_model())


def test_tiny_alpha_leaves_nothing_to_branch(graphs):
    with pytest.raises(HetlabError, match="raise --alpha"):
        plan_stretch(graphs["squeezenet"], DEVICES, cost_model(), Constraints(alpha=1e-6))


def test_three_devices_three_branches_by_throughput(graphs):
    cm = cost_model()
    cm.throughput["cl0"] = 4e7  # twice as fast: about half of the FLOPs
    cm.overhead["cl0"] = 0.02
    sp = plan_stretch(graphs["squeezenet"], [*DEVICES, "cl0"], cm, meeting="merged")
    for p in sp.parts:
        fl = {b.device: b.flops for b in p.branches}
        assert set(fl) == {"cpu0", "cpu1", "cl0"}
        assert fl["cl0"] / sum(fl.values()) == pytest.approx(0.5, abs=0.1)
