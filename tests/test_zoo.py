"""The model zoo: stored files stay small, weights are synthesized deterministically, and every
model runs in onnxruntime with finite, non-degenerate outputs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from hetlab import zoo
from hetlab.errors import HetlabError
from hetlab.graph.zoo import ZOO_DIR
from hetlab.graph.zoo_weights import materialize, strip_weights

EXPECTED = [
    "squeezenet",
    "googlenet",
    "inception_v3",
    "inception_v4",
    "resnet50",
    "nasnet_large",
    "pnasnet_large",
    "pnasnet_mobile",
    "lstm",
]
SLOW = {"nasnet_large", "pnasnet_large", "inception_v4"}
DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One HETLAB_CACHE for the module, so each model is materialized once."""
    return tmp_path_factory.mktemp("hetlab-cache")


@pytest.fixture()
def env_cache(cache, monkeypatch) -> Path:
    monkeypatch.setenv("HETLAB_CACHE", str(cache))
    return cache


def _run(p: Path, name: str) -> list[np.ndarray]:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(str(p), opts, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    feeds = {}
    for i in sess.get_inputs():
        assert all(isinstance(d, int) for d in i.shape), (name, i.name, i.shape)
        assert list(i.shape) == zoo.info(name)["inputs"][i.name]
        feeds[i.name] = rng.standard_normal(i.shape).astype(np.float32)
    return sess.run(None, feeds)


def test_names_and_index():
    assert zoo.names() == EXPECTED
    for n in EXPECTED:
        assert zoo.is_zoo(n)
        meta = zoo.info(n)
        assert {"file", "inputs", "vertices", "source", "description"} <= set(meta)
        assert (ZOO_DIR / meta["file"]).is_file()
    assert not zoo.is_zoo("resnet51") and not zoo.is_zoo(None)
    assert zoo.info("inception_v3")["inputs"] == {"input": [1, 3, 299, 299]}
    assert zoo.info("lstm")["inputs"] == {"x": [10, 1, 1024]}


def test_unknown_name_lists_zoo():
    with pytest.raises(HetlabError, match="squeezenet.*lstm"):
        zoo.path("alexnet")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in EXPECTED]
)
def test_materialized_model_runs(name, env_cache):
    p = zoo.path(name)
    assert p.parent == env_cache / "zoo" and p.name.startswith(f"{name}-")
    assert zoo.path(name) == p  # cached, not rebuilt
    outs = _run(p, name)
    for y in outs:
        assert np.isfinite(y).all(), name
        assert y.std() > 1e-4, f"{name} output is degenerate (std {y.std()})"
        assert np.abs(y).max() < 1e6, name
    # inputs change the output: the network is not dead (e.g. all-zero after ReLUs)
    if name != "lstm":
        assert len({round(float(v), 5) for v in outs[0].ravel()[:50]}) > 10


def test_vertex_counts_match_files():
    for n in EXPECTED:
        m = onnx.load(str(ZOO_DIR / zoo.info(n)["file"]), load_external_data=False)
        assert sum(nd.op_type != "Constant" for nd in m.graph.node) == zoo.info(n)["vertices"]


def test_nasnet_large_has_hope_size():
    m = onnx.load(str(ZOO_DIR / "nasnet_large.onnx"))
    assert sum(nd.op_type != "Constant" for nd in m.graph.node) >= 1000


def _tensors(model):
    yield from model.graph.initializer
    for nd in model.graph.node:
        if nd.op_type == "Constant":
            yield from (a.t for a in nd.attribute if a.type == onnx.AttributeProto.TENSOR)


def test_stored_files_hold_no_big_float_data():
    for n in EXPECTED:
        m = onnx.load(str(ZOO_DIR / zoo.info(n)["file"]))
        stripped = 0
        for t in _tensors(m):
            numel = int(np.prod(t.dims)) if t.dims else 1
            if t.data_type in (1, 10, 11) and numel > 16:
                assert not t.raw_data and not t.float_data and not t.double_data, (n, t.name)
                assert t.doc_string.startswith("hetlab:stripped")
                stripped += 1
            elif t.data_type == onnx.TensorProto.INT64:
                # shape constants keep their values
                assert len(onnx.numpy_helper.to_array(t).ravel()) == numel
        assert stripped > 0, n


def test_data_dir_under_30_mb():
    total = sum(f.stat().st_size for f in DATA.rglob("*") if f.is_file())
    assert total < 30 * 2**20, f"data/ is {total / 2**20:.1f} MiB"


def test_materialize_is_deterministic(tmp_path):
    src = ZOO_DIR / "squeezenet.onnx"
    a = materialize(src, tmp_path / "a.onnx", seed=0).read_bytes()
    b = materialize(src, tmp_path / "b.onnx", seed=0).read_bytes()
    c = materialize(src, tmp_path / "c.onnx", seed=1).read_bytes()
    assert a == b and a != c
    assert len(a) > 4 * 1_000_000  # SqueezeNet 1.0 has about 1.25 M float parameters


def test_materialize_values_follow_consumers(tmp_path):
    m = onnx.load(str(materialize(ZOO_DIR / "resnet50.onnx", tmp_path / "r.onnx")))
    arrays = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    producer = _producer(m)
    convs = [n for n in m.graph.node if n.op_type == "Conv"]
    for conv, gain in [(convs[0], 1.0), (convs[1], 2.0)]:  # image input, then after a ReLU
        assert (conv.input[0] in producer) == (gain == 2.0)
        w = arrays[conv.input[1]]
        fan_in = int(np.prod(w.shape[1:]))
        assert abs(w.std() - np.sqrt(gain / fan_in)) < 0.1 * np.sqrt(gain / fan_in)  # He/LeCun
    gemm = next(n for n in m.graph.node if n.op_type == "Gemm")
    assert np.abs(arrays[gemm.input[2]]).max() < 0.1  # small bias


def test_strip_then_materialize_round_trip(tmp_path):
    """Synthesized BatchNormalization and LSTM tensors fall in their ranges."""
    from onnx import TensorProto, helper, numpy_helper

    c, h = 32, 8
    inits = [
        numpy_helper.from_array(np.full(s, 7.0, np.float32), n)
        for n, s in [
            ("scale", [c]),
            ("bias", [c]),
            ("mean", [c]),
            ("var", [c]),
            ("W", [1, 4 * h, c]),
            ("R", [1, 4 * h, h]),
        ]
    ]
    inits.append(numpy_helper.from_array(np.arange(c, dtype=np.int64), "ints"))
    nodes = [
        helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"]),
        helper.make_node("Reshape", ["y", "shape"], ["seq"]),
        helper.make_node("LSTM", ["seq", "W", "R"], ["Y"], hidden_size=h),
    ]
    inits.append(numpy_helper.from_array(np.array([1, 1, c], np.int64), "shape"))
    g = helper.make_graph(
        nodes,
        "t",
        [helper.make_tensor_value_info("x", 1, [1, c, 1, 1])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    strip_weights(model)
    kept = {t.name for t in model.graph.initializer if t.raw_data}
    assert kept == {"ints", "shape"}
    onnx.save(model, str(tmp_path / "s.onnx"))
    out = onnx.load(str(materialize(tmp_path / "s.onnx", tmp_path / "m.onnx")))
    a = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}
    assert np.array_equal(a["ints"], np.arange(c))
    assert 0.5 < a["scale"].mean() < 1.5 and abs(a["bias"]).max() < 0.5
    assert abs(a["mean"]).max() < 0.5 and (a["var"] >= 0.5).all() and (a["var"] <= 1.5).all()
    assert np.abs(a["W"]).max() <= 1 / np.sqrt(h) and np.abs(a["R"]).max() <= 1 / np.sqrt(h)
    y = ort.InferenceSession(str(tmp_path / "m.onnx")).run(
        None, {"x": np.ones((1, c, 1, 1), np.float32)}
    )[0]
    assert np.isfinite(y).all() and y.std() > 0


def _producer(model) -> dict[str, onnx.NodeProto]:
    return {o: n for n in model.graph.node for o in n.output}


def _ancestors(node, producer) -> set[str]:
    seen, stack = set(), list(node.input)
    while stack:
        t = stack.pop()
        if t in producer and producer[t].name not in seen:
            seen.add(producer[t].name)
            stack.extend(producer[t].input)
    return seen


def test_lstm_gates_are_parallel_branches():
    m = onnx.load(str(ZOO_DIR / "lstm.onnx"))
    producer = _producer(m)
    # per step: the MatMuls that read the same step input x_t / state h_{t-1}
    by_step = defaultdict(list)
    for n in m.graph.node:
        if n.op_type == "MatMul":
            by_step[n.input[0]].append(n)
    steps = [v for k, v in by_step.items() if k.startswith("x_")]
    assert len(steps) == 10 and all(len(v) == 4 for v in steps)
    assert sum(len(v) for v in by_step.values()) == 80  # 4 gates x (xW, hR) x 10 steps
    for group in by_step.values():
        assert len(group) == 4 and len({n.input[1] for n in group}) == 4  # one per gate
        names = {n.name for n in group}
        for n in group:  # no gate's MatMul depends on another gate's
            assert not (_ancestors(n, producer) & names)
    # the four activations of a step are independent too
    acts = [n for n in m.graph.node if n.op_type in ("Sigmoid", "Tanh") and "_tanh_c" not in n.name]
    assert len(acts) == 40
    for t in range(10):
        step = [n for n in acts if n.name.startswith(f"s{t}_")]
        assert len(step) == 4 and sorted(n.op_type for n in step) == ["Sigmoid"] * 3 + ["Tanh"]
        for n in step:
            assert not (_ancestors(n, producer) & {s.name for s in step})


def test_concurrent_builds_agree(tmp_path, monkeypatch):
    """Two threads materializing the same model into an empty cache get one complete file."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("HETLAB_CACHE", str(tmp_path))
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(zoo.path, ["squeezenet", "squeezenet"])
    assert a == b and onnx.load(str(a)).graph.node
    import hashlib

    sha = hashlib.sha256((ZOO_DIR / "squeezenet.onnx").read_bytes()).hexdigest()
    assert a.name == f"squeezenet-{sha[:12]}.onnx"
    assert [p.name for p in (tmp_path / "zoo").iterdir()] == [a.name]  # no temp files left


def test_bad_cache_and_bad_files_are_one_line_errors(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("HETLAB_CACHE", str(blocker / "sub"))
    with pytest.raises(HetlabError, match="HETLAB_CACHE"):
        zoo.path("lstm")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\xffnot an onnx model at all")
    with pytest.raises(HetlabError, match="not a readable ONNX file"):
        materialize(junk, tmp_path / "out.onnx")
    with pytest.raises(HetlabError, match="not found"):
        materialize(tmp_path / "missing.onnx", tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()
