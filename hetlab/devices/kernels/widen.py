"""Float16 tensors around the ops whose kernels compute in float32.

An op whose kernels take float32 (its ``Op.dtypes`` names float32 and not float16) also runs
on float16 tensors: the unit's builder rewrites the node to read and write float32 twins of
its float16 tensors, converts each float16 input to its twin before the node's launches
(``half.cl``'s ``from_half``, exact) and each output twin to the float16 tensor after them
(``to_half``, rounding to nearest even). The arithmetic is float32 and every float16 tensor
holds its float16 value, whatever unit or plan makes it. Float16 constants become float32
constants. Ops that only move values (views, Transpose, Slice, Concat, Gather...) and Cast
take float16 as it is (16 bits) and are not rewritten. Why conversions around the op rather
than float16 loads in every kernel: docs/decisions.md, "Float16 tensors".

A twin is a tensor of the unit alone: an input's twin belongs to its one reader (so no two
launches of different streams share it); an output's twin is read by no other node, so no
fusion crosses the rounding to float16.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import op_for
from hetlab.devices.kernels.ops.common import const_weights, grid1, i32, numel
from hetlab.graph.ir import Node, OpGraph, Tensor

HALF = "float16"
OUT_TWIN = "#f32"  # an output's (or a constant's) float32 twin: name + OUT_TWIN
IN_TWIN = "#f32<"  # an input's twin for one reader: name + IN_TWIN + reader's id


@dataclass
class Widened:
    """A node rewritten to compute on float32 twins of its float16 tensors."""

    node: Node
    ins: list[tuple[str, str]] = field(default_factory=list)  # (float16 tensor, its twin)
    outs: list[tuple[str, str]] = field(default_factory=list)  # (twin, float16 tensor)


class UnitGraph:
    """The graph as one unit's builder sees it: the rewritten nodes in place of the
    originals, their twins among the tensors and the twins of constants among the
    constants; everything else is the graph's."""

    def __init__(self, graph: OpGraph, widened: dict[str, Widened], tensors, weights) -> None:
        self._graph = graph
        self._rewritten = {v: w.node for v, w in widened.items()}
        self.tensors = {**graph.tensors, **tensors}
        self.nodes = [self._rewritten.get(n.id, n) for n in graph.nodes]
        self.consts = set(graph.consts) | {t for t in tensors if t in weights}
        self._hetlab_weights = weights  # read by ``const_weights``

    def node(self, node_id: str) -> Node:
        return self._rewritten.get(node_id) or self._graph.node(node_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)


def _is_half(graph: Any, weights: dict[str, np.ndarray], name: str) -> bool:
    if not name:
        return False
    if name in weights:
        return str(weights[name].dtype) == HALF
    t = graph.tensors.get(name)
    return t is not None and t.dtype == HALF


def computes_half(node: Node, graph: Any, weights: dict[str, np.ndarray]) -> bool:
    """Whether ``node`` has float16 tensors and an op whose kernels compute on float32 and
    not on float16 (Shape, which reads no value, is neither)."""
    dtypes = op_for(node.op_type, node.domain).dtypes(node)
    if HALF in dtypes or "float32" not in dtypes:
        return False
    return any(_is_half(graph, weights, t) for t in [*node.inputs, *node.outputs])


def plan_widen(nodes: list[Node], graph: Any, weights: dict) -> tuple[dict, dict, dict]:
    """The rewritten nodes (by id), the twins' tensors and the twins of constants."""
    widened: dict[str, Widened] = {}
    tensors: dict[str, Tensor] = {}
    consts: dict[str, np.ndarray] = {}
    for n in nodes:
        if not computes_half(n, graph, weights):
            continue
        w = Widened(n)
        ins = []
        for t in n.inputs:
            if not _is_half(graph, weights, t):
                ins.append(t)
                continue
            twin = t + OUT_TWIN if t in weights else f"{t}{IN_TWIN}{n.id}"
            if t in weights:
                consts[twin] = np.asarray(weights[t], np.float32)
            elif (t, twin) not in w.ins:  # read twice (Mul(x, x)): converted once
                w.ins.append((t, twin))
            shape = weights[t].shape if t in weights else graph.tensors[t].shape
            tensors[twin] = Tensor(twin, tuple(int(d) for d in shape), "float32")
            ins.append(twin)
        outs = []
        for t in n.outputs:
            if not _is_half(graph, weights, t):
                outs.append(t)
                continue
            twin = t + OUT_TWIN
            w.outs.append((twin, t))
            tensors[twin] = Tensor(twin, tuple(graph.tensors[t].shape), "float32")
            outs.append(twin)
        w.node = replace(n, inputs=ins, outputs=outs)
        widened[n.id] = w
    return widened, tensors, consts


def apply_widen(ub: Any) -> bool:
    """Put the rewritten nodes of the builder's float16 nodes (``ub.widened``) in place of
    the originals, with the twins in its graph and constants; whether there were any."""
    ub.widened, tensors, consts = plan_widen(ub.nodes, ub.graph, ub.weights)
    if not ub.widened:
        return False
    ub.graph = UnitGraph(ub.graph, ub.widened, tensors, {**ub.weights, **consts})
    ub.weights = const_weights(ub.graph)
    ub.nodes = [ub.graph.node(n.id) for n in ub.nodes]
    return True


def half_names(ub: Any) -> list[str]:
    """The float16 tensors the rewritten nodes no longer name (for the plan's shapes)."""
    return [t for w in ub.widened.values() for t, _ in w.ins] + [
        t for w in ub.widened.values() for _, t in w.outs
    ]


def convert(ub: Any, node: Node, pairs: list[tuple[str, str]], kernel: str) -> None:
    """Launch ``half.cl``'s ``kernel`` (from_half, to_half) for each (source, target)."""
    for src, dst in pairs:
        n = numel(ub.shape(dst))
        args = [ub.t(src), ub.t(dst), i32(n)]
        ub.launch(node, ub.kernel("half.cl", kernel), *grid1(n), args)
