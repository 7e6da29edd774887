"""Einsum and GRU on the OpenCL device against onnxruntime (normal and bounds-checked build):
every supported equation and GRU variant agrees within 1e-4, every other one is refused with
a reason."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper

from hetlab.devices.kernels.ops.einsum import choose, parse
from tests.devices.opencl_case import make_model, rnd, run_case, to_graph

pytest.importorskip("pyopencl")


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "bounds"])
def bounds(request) -> bool:
    return request.param


def N(op, ins, outs=("y",), **kw):
    return helper.make_node(op, list(ins), list(outs), **kw)


# --- Einsum --------------------------------------------------------------------------------
EQUATIONS = [
    ("btgi,gih->btgh", [(2, 5, 3, 4), (3, 4, 6)]),
    ("bij,bjk->bik", [(3, 5, 7), (3, 7, 4)]),
    ("ij,jk->ik", [(9, 33), (33, 70)]),
    ("ij,kj->ik", [(6, 5), (7, 5)]),
    ("ij,kj->ki", [(6, 5), (7, 5)]),
    (
        "ij,kj->ik",
        [(5, 600), (8, 600)],
    ),  # few tiles, long K: split-K  # the transposed product writes C^T directly
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 5, 6), (2, 3, 6, 8)]),
    ("bhqk,bhkd->bqhd", [(2, 3, 5, 6), (2, 3, 6, 8)]),  # batch strides need not flatten
    ("ab,bcd->cad", [(3, 4), (4, 5, 6)]),  # the output needs a copy
    ("abc,cd->bad", [(2, 3, 4), (4, 5)]),  # the first operand needs a copy
    ("bij,jk->bik", [(3, 5, 7), (7, 4)]),  # free batch folds into M
    ("ibj,jk->kbi", [(5, 3, 7), (7, 4)]),
    ("i,i->", [(37,), (37,)]),
    ("i,j->ij", [(5,), (6,)]),  # no contracted index: an outer product
    ("ij,j->i", [(4, 9), (9,)]),
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]),  # implicit: ->bik
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba,ac", [(3, 4), (4, 5)]),  # implicit output sorted: ->bc
    ("ij->ji", [(4, 7)]),
    ("abc->cab", [(2, 3, 4)]),
    ("abc", [(2, 3, 4)]),  # implicit identity
]


@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_agrees(dev, eq, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    inputs = {n: rnd(*s, seed=i) for i, (n, s) in enumerate(zip(names, shapes, strict=True))}
    run_case(dev, [N("Einsum", names, equation=eq)], inputs, opset=12)


def test_einsum_constant_operand(dev):
    """The speech encoder's grouped projection, its weights a constant."""
    run_case(
        dev,
        [N("Einsum", ["x", "w"], equation="btgi,gih->btgh")],
        {"x": rnd(1, 7, 4, 16)},
        {"w": rnd(4, 16, 8, seed=3)},
        opset=12,
    )


REFUSED = [
    ("ii->i", [(3, 3)], "diagonal"),
    ("ij,jj->i", [(3, 4), (4, 4)], "diagonal"),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], "ellipsis"),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "more than two"),
    ("ij,jk->k", [(2, 3), (3, 4)], "one operand only"),
    ("ij->i", [(2, 3)], "only operand"),
    ("ij,ij->ij", [(2, 1), (2, 3)], "broadcast"),
]


@pytest.mark.parametrize("eq,shapes,why", REFUSED, ids=[e for e, _, _ in REFUSED])
def test_einsum_refusals(dev, eq, shapes, why):
    names = [f"x{i}" for i in range(len(shapes))]
    inputs = {n: rnd(*s, seed=i) for i, (n, s) in enumerate(zip(names, shapes, strict=True))}
    model = make_model([N("Einsum", names, equation=eq)], inputs, {}, ["y"], 12)
    graph = to_graph(model, inputs, 12)
    reason = dev.why_not(graph.nodes[0], graph)
    assert reason and why in reason and not dev.supports(graph.nodes[0], graph)


def test_einsum_layout_choice():
    """No copy where the strides flatten; B^T A^T where only the transposed output is
    contiguous; the fewest elements copied where no orientation flattens."""
    assert choose(*parse("btgi,gih->btgh"), [(2, 5, 3, 4), (3, 4, 6)]).copies == (0, 0, 0)
    assert choose(*parse("bhqd,bhkd->bhqk"), [(2, 3, 5, 8), (2, 3, 6, 8)]).copies == (0, 0, 0)
    lay = choose(*parse("ij,kj->ki"), [(6, 5), (7, 5)])
    assert lay.swap and lay.copies == (0, 0, 0)
    assert choose(*parse("bhqk,bhkd->bqhd"), [(2, 3, 5, 6), (2, 3, 6, 8)]).copies == (0, 0, 0)
    assert choose(*parse("ab,bcd->cad"), [(3, 4), (4, 5, 6)]).copies == (0, 0, 1)
    assert choose(*parse("abc,cd->bad"), [(2, 3, 4), (4, 5)]).copies == (1, 0, 0)
    assert parse("ba,ac") == (["ba", "ac"], "bc")


# --- GRU -----------------------------------------------------------------------------------
GRU_CASES = list(itertools.product(["forward", "reverse", "bidirectional"], [0, 1], [0, 1]))


@pytest.mark.parametrize("direction,lbr,extras", GRU_CASES)
def test_gru_agrees(dev, direction, lbr, extras):
    """Every direction x linear_before_reset, with B and initial_h (extras) or without."""
    T, B, I, H = 5, 2, 7, 6
    D = 2 if direction == "bidirectional" else 1
    inits = {"W": rnd(D, 3 * H, I, seed=1), "R": rnd(D, 3 * H, H, seed=2)}
    inputs = {"X": rnd(T, B, I)}
    ins = ["X", "W", "R"]
    if extras:
        inits["B"] = rnd(D, 6 * H, seed=3)
        inputs["h0"] = rnd(D, B, H, seed=4)
        ins += ["B", "", "h0"]
    node = N("GRU", ins, ["Y", "Yh"], hidden_size=H, direction=direction, linear_before_reset=lbr)
    run_case(dev, [node], inputs, inits, outputs=["Y", "Yh"])


@pytest.mark.parametrize("T,B,I,H", [(1, 1, 3, 4), (9, 5, 33, 70), (3, 1, 64, 17)])
@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_sizes(dev, T, B, I, H, lbr):
    inits = {"W": rnd(1, 3 * H, I, seed=1), "R": rnd(1, 3 * H, H, seed=2)}
    inits["B"] = rnd(1, 6 * H, seed=3)
    node = N("GRU", ["X", "W", "R", "B"], ["", "Yh"], hidden_size=H, linear_before_reset=lbr)
    run_case(dev, [node], {"X": rnd(T, B, I)}, inits, outputs=["Yh"])


def test_gru_runtime_weights_full_sequence_lens(dev):
    ins = {"X": rnd(4, 2, 3), "W": rnd(1, 12, 3, seed=1), "R": rnd(1, 12, 4, seed=2)}
    inits = {"sl": np.full(2, 4, dtype=np.int32)}
    node = N("GRU", ["X", "W", "R", "", "sl"], ["Y"], hidden_size=4, linear_before_reset=1)
    run_case(dev, [node], ins, inits)


@pytest.mark.parametrize(
    "kw,extra,why",
    [
        ({"activations": ["Tanh", "Tanh"]}, {}, "activations"),
        ({"clip": 1.0}, {}, "clip"),
        ({}, {"sl": np.array([3, 2], dtype=np.int32)}, "sequence_lens"),
    ],
)
def test_gru_refusals(dev, kw, extra, why):
    inits = {"W": rnd(1, 12, 3, seed=1), "R": rnd(1, 12, 4, seed=2), **extra}
    ins = ["X", "W", "R", "", "sl"] if extra else ["X", "W", "R"]
    inputs = {"X": rnd(3, 2, 3)}
    model = make_model([N("GRU", ins, ["Y"], hidden_size=4, **kw)], inputs, inits, ["Y"])
    graph = to_graph(model, inputs, 17)
    reason = dev.why_not(graph.nodes[0], graph)
    assert reason and why in reason


def test_gru_then_einsum_in_one_unit(dev):
    """A beat tracker's shape: a bidirectional GRU whose Y [T, 2, B, H] an Einsum projects."""
    T, B, I, H = 6, 2, 5, 8
    inits = {
        "W": rnd(2, 3 * H, I, seed=1),
        "R": rnd(2, 3 * H, H, seed=2),
        "B": rnd(2, 6 * H, seed=3),
        "P": rnd(2, H, 3, seed=4),
    }
    nodes = [
        N("GRU", ["X", "W", "R", "B"], ["Y"], hidden_size=H, direction="bidirectional"),
        N("Einsum", ["Y", "P"], ["z"], equation="tdbh,dhk->btk"),
    ]
    run_case(dev, nodes, {"X": rnd(T, B, I)}, inits, outputs=["z"], opset=17)
