"""Nodes of a unit whose inputs are all constants, computed once when a CPU device builds the
unit, as onnxruntime does at session creation: their outputs become constants of the unit
(the graph's folder leaves such nodes where their outputs are large, for instance int8
weights scaled at run time by a Cast and a Mul). Only ops whose values numpy computes as
the kernels would (one IEEE operation per element) are taken: the element-wise arithmetic
below, Cast, Transpose and DequantizeLinear, with float32 results. Why: docs/decisions.md#constants-computed-once-on-a-cpu-device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.common import attr
from hetlab.graph.ir import Node

Eval = Callable[[Node, list[np.ndarray]], np.ndarray]


def _cast(node: Node, xs: list[np.ndarray]) -> np.ndarray:
    from onnx import helper  # lazy: onnx is slow to import

    return xs[0].astype(helper.tensor_dtype_to_np_dtype(int(attr(node, "to", 1))))


def _dequantize(node: Node, xs: list[np.ndarray]) -> np.ndarray:
    x, scale = xs[0], xs[1].astype(np.float32)
    zero = xs[2] if len(xs) > 2 else np.zeros((), x.dtype)
    if scale.ndim == 1 and scale.size > 1:  # per axis
        shape = [1] * x.ndim
        shape[int(attr(node, "axis", 1)) % x.ndim] = -1
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return ((x.astype(np.int32) - zero.astype(np.int32)).astype(np.float32) * scale).astype(
        np.float32
    )


def _same_type(f: Callable[..., np.ndarray]) -> Eval:
    def ev(node: Node, xs: list[np.ndarray]) -> np.ndarray:
        out = f(*xs)
        return out.astype(xs[0].dtype, copy=False)

    return ev


EVAL: dict[str, Eval] = {
    "Cast": _cast,
    "Mul": _same_type(np.multiply),
    "Add": _same_type(np.add),
    "Sub": _same_type(np.subtract),
    "Neg": _same_type(np.negative),
    "Transpose": lambda n, xs: np.ascontiguousarray(
        np.transpose(xs[0], attr(n, "perm", None) or None)
    ),
    "DequantizeLinear": _dequantize,
}


def precompute(nodes: list[Node], weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The outputs of the nodes of ``nodes`` (in order) that read only constants (of
    ``weights`` or of nodes before them) and whose op ``EVAL`` computes, by name."""
    values: dict[str, np.ndarray] = {}
    for n in nodes:
        ins = [t for t in n.inputs if t]
        if n.op_type not in EVAL or n.domain not in ("", "ai.onnx") or len(n.outputs) != 1:
            continue
        if not ins or any(t not in weights and t not in values for t in ins):
            continue
        xs = [np.asarray(values[t] if t in values else weights[t]) for t in ins]
        if n.op_type in ("Mul", "Add", "Sub") and xs[0].dtype.kind != "f":
            continue  # integer arithmetic wraps or saturates by type: left to the kernels
        out = EVAL[n.op_type](n, xs)
        if out.dtype == np.float32:
            values[n.outputs[0]] = out
    return values


def apply(builder: Any) -> None:
    """Take ``builder``'s precomputed nodes out of what it builds: their outputs join its
    constants, and those read outside the unit are its outputs (held as constants)."""
    pre = precompute(builder.nodes, builder.weights)
    if not pre:
        return
    builder.weights = {**builder.weights, **pre}
    builder.nodes = [n for n in builder.nodes if n.outputs[0] not in pre]
    builder.precomputed = pre
