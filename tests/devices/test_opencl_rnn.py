"""ONNX RNN, LSTM with peepholes, and LSTM and GRU over the shapes of the CPU device's whole-sequence kernels
(``cl/rnn_cpu.cl``: 32-column panels, each gate padded), against onnxruntime: both shapes of
the recurrence run on this device, the CPU one (``cpu_kernels``) and the GPU one (a launch
per step), over directions, batch, initial states, outputs and hidden sizes that fill a panel,
leave it part empty or span three. What the kernels do not compute is refused."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import make_model, rnd, run_case, to_graph

pytest.importorskip("pyopencl")

DIRECTIONS = ["forward", "reverse", "bidirectional"]
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


@pytest.fixture(params=[True, False], ids=["cpu_shape", "gpu_shape"])
def shaped(dev, request):
    """``dev`` with its CPU kernels on or off (the step-by-step launches); the CPU kernels
    are OpenCL C with vector types, which the CUDA backend does not build."""
    if request.param and dev.kind == "cuda":
        pytest.skip("the CPU-shaped kernels are OpenCL's")
    before, dev.cpu_kernels = dev.cpu_kernels, request.param
    yield dev
    dev.cpu_kernels = before


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
