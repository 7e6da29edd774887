"""Data-dependent shapes: which tensors ``load`` marks, checked against onnxruntime runs on
other input values (every unmarked shape must hold; the marked ones may change)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from hetlab.graph import load
from hetlab.graph.onnx_infer import infer
from hetlab.graph.onnx_io import extract
from hetlab.graph.onnx_proto import read_model
from tests.executor.dynamic_models import branchy, counted_loop, nonzero_tail, runtime_range
from tests.executor.models import two_branch

REF_N = 3


def loop_feed(n: int) -> dict[str, np.ndarray]:
    return {"n": np.array(n, np.int64), "x": np.linspace(-1, 1, 4, dtype=np.float32)[None]}


def nonzero_feed(positive: int, seed: int = 0) -> dict[str, np.ndarray]:
    x = np.random.default_rng(seed).standard_normal((3, 6)).astype(np.float32)
    x[0] = -np.abs(x[0]) - 0.1
    x[0, :positive] *= -1
    return {"x": x}


def range_feed(n: int) -> dict[str, np.ndarray]:
    return {"n": np.array(n, np.int64)}


def branch_feed(flag: bool) -> dict[str, np.ndarray]:
    return {"flag": np.array(flag), "x": np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)}


def other_branch(path) -> str:
    return branchy(path, same=False)


CASES = {
    "branch": (other_branch, branch_feed, True, (False,)),
    "loop": (counted_loop, loop_feed, REF_N, (1, 2, 5, 9)),
    "nonzero": (nonzero_tail, nonzero_feed, 2, (1, 4, 6)),
    "range": (runtime_range, range_feed, 3, (1, 7)),
}


def every_shape(g, feed) -> dict[str, tuple[int, ...]]:
    """The shape of every node output in one onnxruntime run of the graph's model."""
    outs = [t for n in g.nodes for t in n.outputs if t]
    sess = ort.InferenceSession(
        extract(g, [n.id for n in g.nodes], outs), providers=["CPUExecutionProvider"]
    )
    return {t: np.asarray(v).shape for t, v in zip(outs, sess.run(outs, feed), strict=True)}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, tmp_path_factory):
    make, feed, ref, others = CASES[request.param]
    path = make(tmp_path_factory.mktemp("dyn") / f"{request.param}.onnx")
    return load(path, values=feed(ref)), feed, ref, others


def test_unmarked_shapes_hold_for_other_input_values(case):
    g, feed, _ref, others = case
    changed = set()
    for v in others:
        got = every_shape(g, feed(v))
        for t, shape in got.items():
            if not g.tensors[t].dynamic:
                assert shape == g.tensors[t].shape, (t, v)
            elif shape != g.tensors[t].shape:
                changed.add(t)
    marked = {t for t, info in g.tensors.items() if info.dynamic}
    assert changed and changed <= marked


def test_marks_propagate_until_a_shape_is_a_fact_again(case):
    g, *_ = case
    model_outputs = {t: g.tensors[t] for t in g.outputs}
    assert model_outputs["z"].dynamic and not model_outputs["y"].dynamic
    for n in g.nodes:  # a shape-only op with a marked input marks its open outputs
        if any(g.tensors[t].dynamic for t in n.inputs if t) and n.op_type in ("Relu", "Add"):
            assert all(g.tensors[t].dynamic for t in n.outputs)
    flagged = {n["id"]: n["dynamic"] for n in g.to_json()["nodes"] if "dynamic" in n}
    assert flagged and all(len(f) == len(g.node(v).outputs) for v, f in flagged.items())
    assert all(g.data_dependent(g.node(v)) for v in flagged)


def test_a_model_with_fixed_shapes_marks_nothing(tmp_path):
    g = load(two_branch(tmp_path / "tb.onnx"))
    assert not any(t.dynamic for t in g.tensors.values())
    assert not any("dynamic" in n for n in g.to_json()["nodes"])


def test_kernel_devices_refuse_what_reads_or_writes_a_marked_shape(case):
    from hetlab.devices.kernels.ops import why_not

    g, *_ = case
    for n in g.nodes:
        why = why_not(n, g)
        if g.data_dependent(n):
            assert why is not None
        elif n.op_type in ("Mul", "Add"):  # the fixed-shape tail stays theirs
            assert why is None, (n.id, why)


def test_an_if_whose_branches_give_one_shape_marks_nothing(tmp_path):
    path = branchy(tmp_path / "same.onnx", same=True)
    assert infer(read_model(path))["picked"].shape is None  # open to inference: recorded
    g = load(path, values=branch_feed(True))
    assert not any(t.dynamic for t in g.tensors.values())
    assert every_shape(g, branch_feed(False))["picked"] == g.tensors["picked"].shape
