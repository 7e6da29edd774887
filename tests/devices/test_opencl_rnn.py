"""ONNX RNN, LSTM with peepholes, and LSTM and GRU over the shapes of the CPU device's whole-sequence kernels
(``cl/rnn_cpu.cl``: 32-column panels, each gate padded), against onnxruntime: the three shapes
of the recurrence run on this device, the CPU one (``cpu_kernels``), the GPU's whole sequence
in one work-group (``rnn_gpu.cl``) and the GPU's launches per step (``step_launches``), over
directions, batch, initial states, outputs and hidden sizes that fill a panel, leave it part
empty or span three. What the kernels do not compute is refused."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from onnx import helper

from hetlab.devices.kernels.ops.rnn_gpu import work_group
from tests.devices.opencl_case import make_model, rnd, run_case, to_graph

pytest.importorskip("pyopencl")

DIRECTIONS = ["forward", "reverse", "bidirectional"]
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _case(op, direction, T, B, I, H, states, seed=0, **kw):
    """(node, inputs, initializers, outputs) of one recurrence with constant weights."""
    D, G = (2 if direction == "bidirectional" else 1), GATES[op] * H
    inits = {"W": rnd(D, G, I, seed=seed + 1), "R": rnd(D, G, H, seed=seed + 2)}
    inputs = {"X": rnd(T, B, I, seed=seed)}
    ins, outs = ["X", "W", "R"], ["Y", "Yh"]
    if states:
        inits["B"] = rnd(D, 2 * G, seed=seed + 3)
        inputs["h0"] = rnd(D, B, H, seed=seed + 4)
        ins += ["B", "", "h0"]
        if op == "LSTM":
            inputs["c0"] = rnd(D, B, H, seed=seed + 5)
            ins.append("c0")
    if op == "LSTM":
        outs.append("Yc")
    node = helper.make_node(op, ins, outs, hidden_size=H, direction=direction, **kw)
    return node, inputs, inits, outs


@pytest.mark.parametrize(
    "direction,states,B", list(itertools.product(DIRECTIONS, [True, False], [1, 3]))
)
def test_rnn_agrees(shaped, direction, states, B):
    node, inputs, inits, outs = _case("RNN", direction, 5, B, 7, 6, states)
    run_case(shaped, [node], inputs, inits, outputs=outs)


@pytest.mark.parametrize("H", [32, 40, 70])
@pytest.mark.parametrize(
    "op,kw",
    [
        ("RNN", {}),
        ("LSTM", {}),
        ("GRU", {"linear_before_reset": 0}),
        ("GRU", {"linear_before_reset": 1}),
    ],
)
def test_hidden_sizes_across_panels(shaped, op, kw, H):
    node, inputs, inits, outs = _case(op, "bidirectional", 4, 2, 9, H, True, seed=H, **kw)
    run_case(shaped, [node], inputs, inits, outputs=outs)


@pytest.mark.parametrize("op", ["RNN", "LSTM", "GRU"])
def test_constant_states_and_only_the_last_h(shaped, op):
    """Initial states that are initializers, Y omitted: Y_h alone (and Y_c for the LSTM)."""
    node, inputs, inits, _ = _case(op, "reverse", 6, 2, 5, 12, True, seed=7)
    for k in ("h0", "c0"):
        if k in inputs:
            inits[k] = inputs.pop(k)
    outs = ["Yh", "Yc"] if op == "LSTM" else ["Yh"]
    node.output[:] = ["", *outs]
    run_case(shaped, [node], inputs, inits, outputs=outs)


@pytest.mark.parametrize("direction,H", [("forward", 6), ("reverse", 25), ("bidirectional", 40)])
def test_lstm_peepholes(shaped, direction, H):
    """P [D, 3H] (i, o, f): i and f see the old cell state, o the new one (madmom's LSTMs)."""
    node, inputs, inits, outs = _case("LSTM", direction, 5, 2, 7, H, True, seed=3)
    inits["P"] = rnd(len(inits["W"]), 3 * H, seed=9)
    node.input[:] = [*node.input, "P"]
    run_case(shaped, [node], inputs, inits, outputs=outs)


def test_rnn_runtime_weights(shaped):
    """W and R as inputs: the step-by-step launches on either shape."""
    ins = {"X": rnd(4, 2, 3), "W": rnd(1, 5, 3, seed=1), "R": rnd(1, 5, 5, seed=2)}
    node = helper.make_node("RNN", ["X", "W", "R"], ["Y", "Yh"], hidden_size=5)
    run_case(shaped, [node], ins, outputs=["Y", "Yh"])


@pytest.mark.parametrize(
    "kw,why",
    [
        ({"activations": ["Relu"]}, "activations"),
        ({"clip": 1.0}, "clip"),
        ({"layout": 1}, "layout"),
    ],
)
def test_rnn_refusals(dev, kw, why):
    inits = {"W": rnd(1, 4, 3, seed=1), "R": rnd(1, 4, 4, seed=2)}
    inputs = {"X": rnd(3, 2, 3)}
    node = helper.make_node("RNN", ["X", "W", "R"], ["Y"], hidden_size=4, **kw)
    y = np.zeros((2, 3, 1, 4) if "layout" in kw else (3, 1, 2, 4), np.float32)  # no ORT run:
    graph = to_graph(make_model([node], inputs, inits, ["Y"]), inputs, 17, {"Y": y})  # layout 1
    reason = dev.why_not(graph.nodes[0], graph)
    assert reason and why in reason


VARIANTS = [
    ("RNN", {}),
    ("LSTM", {}),
    ("GRU", {"linear_before_reset": 0}),
    ("GRU", {"linear_before_reset": 1}),
]


@pytest.mark.parametrize("T,B", [(1, 3), (160, 2)])
@pytest.mark.parametrize("op,kw", VARIANTS)
def test_one_step_and_long_sequences(shaped, op, kw, T, B):
    """A single step and a long one (R scaled down so that the recurrence contracts and an
    ulp at one step does not grow over the next hundred), both directions, states, the
    constant sequence_lens of the full length."""
    node, inputs, inits, outs = _case(op, "bidirectional", T, B, 6, 20, True, seed=T, **kw)
    inits["R"] *= 0.3
    inits["L"] = np.full(B, T, np.int32)
    node.input[4] = "L"
    run_case(shaped, [node], inputs, inits, outputs=outs)


@pytest.mark.parametrize("op,kw", VARIANTS)
def test_gpu_shape_is_two_launches(shaped, op, kw):
    """Either whole-sequence shape is the projection's GEMM and one launch for every step
    and direction (on the GPU's, at a hidden size whose gate columns span several warps)."""
    node, inputs, inits, outs = _case(op, "bidirectional", 7, 2, 5, 70, True, seed=1, **kw)
    inits["R"] *= 0.3
    _, (unit, _), _ = run_case(shaped, [node], inputs, inits, outputs=outs)
    assert (len(unit.handle.launches) == 2) == (not shaped.step_launches)


def _chosen(op, shapes, max_wg=1024, local=48 * 1024, cpu=False, steps=False):
    """``work_group`` of a node with constant W and R of ``shapes`` on a device that
    declares these limits."""
    dev = SimpleNamespace(cpu_kernels=cpu, step_launches=steps)
    dev.dev = SimpleNamespace(max_work_group_size=max_wg, local_mem_size=local)
    ctx = SimpleNamespace(device=dev, shape=shapes.get, const=lambda n: np.zeros(1))
    return work_group(ctx, SimpleNamespace(op_type=op, inputs=["X", "W", "R"]))


def test_gpu_shape_needs_one_work_group():
    """rnn_gpu.py's choice from the device's declared limits: every gate column on a
    work-item of its own, the state in local memory; otherwise the launches per step."""

    def chosen(op, H, **kw):
        G = GATES[op] * H
        return _chosen(op, {"X": (5, 1, 3), "W": (1, G, 3), "R": (1, G, H)}, **kw)

    assert chosen("RNN", 20) == 32 and chosen("RNN", 1024) == 1024
    assert chosen("LSTM", 256) == 1024 and chosen("LSTM", 257) == 0
    assert chosen("GRU", 25) == 96 and chosen("GRU", 25, max_wg=64) == 0
    assert chosen("RNN", 600, local=4 * 2 * 600 - 4) == 0
    assert chosen("RNN", 20, cpu=True) == 0 and chosen("RNN", 20, steps=True) == 0


def test_one_step_keeps_the_step_launch():
    """A sequence of one step is one launch either way; the step's launch spreads its gates
    over many work-groups, so it stays."""
    shapes = {"W": (1, 512, 257), "R": (1, 512, 128)}
    assert _chosen("LSTM", {"X": (1, 1, 257), **shapes}) == 0
    assert _chosen("LSTM", {"X": (2, 1, 257), **shapes}) == 512


@pytest.mark.parametrize(
    "B,local,wg",
    [
        (1, 48 * 1024, 128),
        (400, 48 * 1024, 0),
        (2, 4 * (7 * 64 + 256), 128),
        (2, 4 * (7 * 64 + 256) - 4, 0),
    ],
)
def test_quantized_lstm_work_group_holds_the_batch(B, local, wg):
    """DynamicQuantizeLSTM (R [D, H, 4H]): one work-group holds every batch row's h, h
    quantized, c and gates (7 B H floats) and the reduction of h's range (2 x its size)."""
    shapes = {"X": (5, B, 3), "W": (1, 3, 128), "R": (1, 32, 128)}
    assert _chosen("DynamicQuantizeLSTM", shapes, local=local) == wg
