"""Seeded random inputs that the model can run on, and the values a user gives fitted to the
model's inputs (``--input NAME=FILE.npy`` or ``NAME=NUMBER``)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from hetlab.errors import HetlabError
from hetlab.graph.inputs import SMALL, fit_given, model_inputs, random_inputs
from hetlab.graph.onnx_io import load
from hetlab.graph.shapes import parse_input_args
from tests.graph.models import save

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(tmp_path, nodes, inputs, outputs, tables, name="m"):
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in tables.items()]
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return save(m, tmp_path / f"{name}.onnx")


def _table(rows, cols=4):
    return np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)


@pytest.fixture
def tagger(tmp_path):
    """A BERT-style embedding: token ids into a 50-row table, token types (through Cast and
    Unsqueeze) into a 2-row table, a length that indexes nothing, and a boolean mask."""
    nodes = [
        helper.make_node("Gather", ["words", "ids"], ["w"]),
        helper.make_node("Cast", ["types"], ["t64"], to=I64),
        helper.make_node("Unsqueeze", ["t64", "ax"], ["tu"]),
        helper.make_node("Reshape", ["tu", "shp"], ["tr"]),
        helper.make_node("Gather", ["segs", "tr"], ["s"]),
        helper.make_node("Add", ["w", "s"], ["e"]),
        helper.make_node("Cast", ["mask"], ["mf"], to=F),
        helper.make_node("Unsqueeze", ["mf", "last"], ["mu"]),
        helper.make_node("Mul", ["e", "mu"], ["em"]),
        helper.make_node("ReduceSum", ["em", "one"], ["num"], keepdims=0),
        helper.make_node("ReduceSum", ["mf", "one"], ["den"], keepdims=0),
        helper.make_node(
            "Div", ["num", "den"], ["y"]
        ),  # a masked mean: finite while a row keeps one
        helper.make_node("Cast", ["n"], ["nf"], to=F),
        helper.make_node("Add", ["y", "nf"], ["z"]),
    ]
    inputs = [
        helper.make_tensor_value_info("ids", I64, [1, 16]),
        helper.make_tensor_value_info("types", TensorProto.INT32, [1, 16]),
        helper.make_tensor_value_info("mask", B, [1, 16]),
        helper.make_tensor_value_info("n", I64, []),
    ]
    tables = {
        "words": _table(50),
        "segs": _table(2),
        "ax": np.array([0], np.int64),
        "shp": np.array([1, 16], np.int64),
        "last": np.array([-1], np.int64),
        "one": np.array([1], np.int64),
    }
    return _model(tmp_path, nodes, inputs, [helper.make_tensor_value_info("z", F, None)], tables)


def test_integer_inputs_stay_inside_the_tables_they_index(tagger):
    g = load(tagger)
    for seed in range(5):
        x = random_inputs(g, seed)
        assert x["ids"].dtype == np.int64 and x["ids"].min() >= 0 and x["ids"].max() < 50
        assert x["types"].dtype == np.int32 and set(np.unique(x["types"])) <= {0, 1}
        assert 0 <= int(x["n"]) < SMALL  # indexes nothing: the small range
    assert x["ids"].max() >= SMALL  # the whole table, not the small range
    assert all(np.array_equal(random_inputs(g, 3)[k], v) for k, v in random_inputs(g, 3).items())


def test_masks_are_all_true_and_keep_the_reference_finite(tagger):
    g = load(tagger)
    x = random_inputs(g, 1)
    assert x["mask"].dtype == bool and x["mask"].all()
    (z,) = ort.InferenceSession(tagger).run(None, x)
    assert np.isfinite(z).all()
    x["mask"][:] = False  # what a random mask may draw for a short row
    with np.errstate(all="ignore"):
        assert not np.isfinite(ort.InferenceSession(tagger).run(None, x)[0]).all()


def test_an_integer_attention_mask_is_all_ones_and_keeps_the_reference_finite(tmp_path):
    """BERT-style: the additive mask is ``(1 - mask) * float_min``; a mask value of 2 or 3
    (the small integer range) overflows it to inf."""
    fmin = np.array(np.finfo(np.float32).min, np.float32)
    nodes = [
        helper.make_node("Cast", ["attention_mask"], ["m"], to=F),
        helper.make_node("Sub", ["one", "m"], ["inv"]),
        helper.make_node("Mul", ["inv", "fmin"], ["bias"]),
        helper.make_node("Add", ["x", "bias"], ["s"]),
        helper.make_node("Softmax", ["s"], ["y"], axis=-1),
    ]
    ins = [
        helper.make_tensor_value_info("x", F, [1, 8]),
        helper.make_tensor_value_info("attention_mask", I64, [1, 8]),
    ]
    tables = {"one": np.array(1.0, np.float32), "fmin": fmin}
    path = _model(tmp_path, nodes, ins, [helper.make_tensor_value_info("y", F, None)], tables)
    x = random_inputs(load(path), 0)
    assert x["attention_mask"].dtype == np.int64 and (x["attention_mask"] == 1).all()
    assert np.isfinite(ort.InferenceSession(path).run(None, x)[0]).all()
    x["attention_mask"][0, 0] = 3
    with np.errstate(all="ignore"):
        assert not np.isfinite(ort.InferenceSession(path).run(None, x)[0]).all()


@pytest.mark.parametrize(
    ("op", "attrs", "data", "idx_shape", "want"),
    [
        ("Gather", {"axis": 1}, (3, 7), [2, 5], 7),
        ("Gather", {"axis": -2}, (3, 7), [4], 3),
        ("GatherElements", {"axis": 0}, (3, 7), [2, 7], 3),
        ("GatherND", {}, (5, 9, 2), [4, 2], 5),
    ],
)
def test_each_gather_like_op_bounds_its_indices(tmp_path, op, attrs, data, idx_shape, want):
    nodes = [helper.make_node(op, ["d", "i"], ["y"], **attrs)]
    ins = [helper.make_tensor_value_info("i", I64, idx_shape)]
    path = _model(
        tmp_path,
        nodes,
        ins,
        [helper.make_tensor_value_info("y", F, None)],
        {"d": np.zeros(data, np.float32)},
    )
    g = load(path)
    seen = np.concatenate([random_inputs(g, s)["i"].ravel() for s in range(20)])
    assert seen.min() >= 0 and seen.max() == want - 1
    ort.InferenceSession(path).run(None, random_inputs(g, 0))  # every draw runs


def test_float_ids_cast_to_indices_are_whole_numbers_inside_the_table(tmp_path):
    nodes = [
        helper.make_node("Cast", ["x"], ["i"], to=I64),
        helper.make_node("Gather", ["tab", "i"], ["y"]),
    ]
    ins = [helper.make_tensor_value_info("x", F, [1, 32])]
    path = _model(
        tmp_path, nodes, ins, [helper.make_tensor_value_info("y", F, None)], {"tab": _table(2)}
    )
    x = random_inputs(load(path), 0)["x"]
    assert x.dtype == np.float32 and set(np.unique(x)) == {0.0, 1.0}


def test_load_time_onnxruntime_run_draws_indices_inside_the_table(tmp_path):
    """A shape that only a run can tell (NonZero) on a model whose ids index a 2-row table."""
    nodes = [
        helper.make_node("Gather", ["tab", "ids"], ["e"]),
        helper.make_node("NonZero", ["e"], ["nz"]),
    ]
    ins = [helper.make_tensor_value_info("ids", I64, [1, 64])]
    path = _model(
        tmp_path,
        nodes,
        ins,
        [helper.make_tensor_value_info("nz", I64, None)],
        {"tab": _table(2) + 1},
    )
    g = load(path)
    assert g.tensors["nz"].shape == (3, 64 * 4)


def test_a_number_fills_the_declared_shape(tmp_path):
    nodes = [helper.make_node("Gather", ["tab", "ids"], ["y"])]
    ins = [helper.make_tensor_value_info("ids", I64, [1, 256])]
    path = _model(
        tmp_path, nodes, ins, [helper.make_tensor_value_info("y", F, None)], {"tab": _table(2)}
    )
    given = parse_input_args(["ids=1"])
    g = load(path, None, given)
    assert g.input_shapes["ids"] == (1, 256)
    feed = model_inputs(g, given)
    assert (
        feed["ids"].shape == (1, 256) and feed["ids"].dtype == np.int64 and (feed["ids"] == 1).all()
    )
    assert fit_given(g, {"ids": np.float64(1.0)})["ids"].dtype == np.int64


def test_a_number_on_a_scalar_input_stays_a_scalar(tmp_path):
    nodes = [helper.make_node("Cast", ["sr"], ["y"], to=F)]
    ins = [helper.make_tensor_value_info("sr", I64, [])]
    path = _model(tmp_path, nodes, ins, [helper.make_tensor_value_info("y", F, None)], {})
    g = load(path, None, parse_input_args(["sr=16000"]))
    assert model_inputs(g, parse_input_args(["sr=16000"]))["sr"].shape == ()


@pytest.mark.parametrize(
    ("arg", "value", "needle"),
    [
        ("nope=1", None, "--input nope: the model has no input 'nope' (inputs: ids)"),
        (
            "ids=f.npy",
            np.zeros((1, 3), np.int64),
            "--input ids: the value has shape [1, 3] but the model declares [1, 256]",
        ),
        (
            "ids=f.npy",
            np.zeros((256,), np.int64),
            "--input ids: the value has shape [256] but the model declares [1, 256]",
        ),
        ("ids=1.5", None, "--input ids: the input is int64, which cannot hold the value 1.5"),
    ],
)
def test_a_bad_input_is_one_line_naming_it(tmp_path, arg, value, needle):
    nodes = [helper.make_node("Gather", ["tab", "ids"], ["y"])]
    ins = [helper.make_tensor_value_info("ids", I64, [1, 256])]
    path = _model(
        tmp_path, nodes, ins, [helper.make_tensor_value_info("y", F, None)], {"tab": _table(2)}
    )
    if value is not None:
        np.save(tmp_path / "f.npy", value)
        arg = arg.replace("f.npy", str(tmp_path / "f.npy"))
    with pytest.raises(HetlabError) as e:
        given = parse_input_args([arg])
        model_inputs(load(path, None, given), given)
    assert str(e.value).startswith(needle) and "--shape" not in str(e.value)


def test_uint8_values_out_of_range_are_refused(tmp_path):
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=F)]
    ins = [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4])]
    g = load(_model(tmp_path, nodes, ins, [helper.make_tensor_value_info("y", F, None)], {}))
    assert (fit_given(g, {"x": 255})["x"] == 255).all()
    with pytest.raises(
        HetlabError, match="--input x: the input is uint8, which cannot hold the value 300"
    ):
        fit_given(g, {"x": 300})


def test_index_bounds_follow_values_not_shapes():
    """Values pass through a Reshape's data and every input of a Concat, never through a
    shape input; onnxruntime's EmbedLayerNormalization bounds token, segment and position
    ids by their three tables."""
    from hetlab.graph.index_bounds import index_bounds

    shapes = {"words": (100, 8), "pos": (64, 8), "segs": (2, 8), "tab": (10, 3)}
    nodes = [
        ("Reshape", ["a", "shape_in"], ["ar"], {}),
        ("Concat", ["k", "ar"], ["c"], {"axis": 0}),
        ("Gather", ["tab", "c"], ["g"], {}),
        (
            "EmbedLayerNormalization",
            ["ids", "seg", "words", "pos", "segs", "gamma", "beta", "", "posids"],
            ["e", "mi"],
            {},
        ),
    ]
    got = index_bounds(nodes, shapes.get, ["a", "k", "shape_in", "ids", "seg", "posids", "x"])
    assert got == {"a": 10, "k": 10, "ids": 100, "seg": 2, "posids": 64}
