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

A float16 tensor that a rewritten node of the unit makes, directly or through views
(Reshape, Squeeze...), is read by the unit's other rewritten nodes from the maker's twin,
which the conversion after the maker leaves holding the float16 value back in float32
(``to_half_round``: exactly what a ``from_half`` of the float16 tensor would give), with no
conversion of their own. The float16 tensor itself is written only where something else
reads it (a unit output, a node that is not rewritten); otherwise the conversion only
rounds the twin (``round_half``). A view's twin is a view of the maker's twin.

A twin is a tensor of the unit alone: an input's twin of a tensor made elsewhere belongs to
its one reader (so no two launches of different streams share it); no fusion crosses the
rounding of an output's twin (``ub.rounded``: the fusions treat those twins as outputs).
On a CPU device the conversions take 16 elements a work-item (``half_cpu.cl``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import op_for
from hetlab.devices.kernels.ops.common import const_weights, cpu_grid1, grid1, i32, numel
from hetlab.devices.kernels.ops.data_movement import View
from hetlab.graph.ir import Node, OpGraph, Tensor

HALF = "float16"
OUT_TWIN = "#f32"  # an output's (a constant's, a view's) float32 twin: name + OUT_TWIN
IN_TWIN = "#f32<"  # an input's twin for one reader: name + IN_TWIN + reader's id
# what the conversion after a rewritten node writes of each output twin
WRITE_HALF, WRITE_BOTH, ROUND_ONLY = "to_half", "to_half_round", "round_half"


@dataclass
class Widened:
    """A node rewritten to compute on float32 twins of its float16 tensors."""

    node: Node
    ins: list[tuple[str, str]] = field(default_factory=list)  # (float16 tensor, its twin)
    # (twin, float16 tensor, what the conversion writes: WRITE_HALF, WRITE_BOTH, ROUND_ONLY)
    outs: list[tuple[str, str, str]] = field(default_factory=list)


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


@dataclass
class _Made:
    """The unit's float16 tensors that hold a rewritten node's result: their twins, and the
    views among their makers (view node -> its output)."""

    twin: dict[str, str] = field(default_factory=dict)
    views: dict[str, str] = field(default_factory=dict)
    rewritten: set[str] = field(default_factory=set)

    def read_as(self, t: str, ub: Any, half: bool) -> bool:
        """Whether ``t`` is read as float16 (``half``: a unit output, or read by a node
        that is neither rewritten nor a view), or else from its twin (by a rewritten node),
        directly or through views."""
        if half and t in ub.outputs:
            return True
        for c in ub.consumers.get(t, []):
            if c in self.views:
                if self.read_as(self.views[c], ub, half):
                    return True
            elif (c in self.rewritten) != half:
                return True
        return False

    def readers(self, t: str, ub: Any) -> list[tuple[str, str]]:
        """The rewritten nodes that read ``t`` from a twin, directly or through views, each
        with the twin it reads."""
        out = []
        for c in ub.consumers.get(t, []):
            if c in self.views:
                out += self.readers(self.views[c], ub)
            elif c in self.rewritten:
                out += [(c, self.twin[t])] * list(ub.graph.node(c).inputs).count(t)
        return out


def _made(ub: Any) -> _Made:
    made = _Made()
    for n in ub.nodes:
        halves = [t for t in n.outputs if _is_half(ub.graph, ub.weights, t)]
        if computes_half(n, ub.graph, ub.weights):
            made.rewritten.add(n.id)
            made.twin.update({t: t + OUT_TWIN for t in halves})
        elif n.op_type in View.op_types and n.inputs[0] in made.twin and halves:
            made.twin[halves[0]] = halves[0] + OUT_TWIN
            made.views[n.id] = halves[0]
    return made


def _mode(made: _Made, t: str, ub: Any) -> str:
    """What the conversion after ``t``'s maker writes (the float16 tensor, the rounded twin,
    or both)."""
    half, twin = made.read_as(t, ub, True), made.read_as(t, ub, False)
    return WRITE_BOTH if half and twin else ROUND_ONLY if twin else WRITE_HALF


def plan_widen(ub: Any) -> tuple[dict, dict, dict, dict]:
    """The rewritten nodes of the builder's nodes (by id), the twins' tensors, the twins of
    constants, and the views of twins (view node -> (its twin, the twin it views))."""
    graph, weights = ub.graph, ub.weights
    made = _made(ub)
    widened: dict[str, Widened] = {}
    tensors: dict[str, Tensor] = {}
    consts: dict[str, np.ndarray] = {}
    for n in ub.nodes:
        if n.id not in made.rewritten:
            continue
        w, ins = Widened(n), []
        for t in n.inputs:
            if not _is_half(graph, weights, t):
                ins.append(t)
                continue
            twin = made.twin.get(t) or (t + OUT_TWIN if t in weights else f"{t}{IN_TWIN}{n.id}")
            if t in weights:
                consts[twin] = np.asarray(weights[t], np.float32)
            elif t not in made.twin and (t, twin) not in w.ins:  # Mul(x, x): converted once
                w.ins.append((t, twin))
            shape = weights[t].shape if t in weights else graph.tensors[t].shape
            tensors[twin] = Tensor(twin, tuple(int(d) for d in shape), "float32")
            ins.append(twin)
        outs = [made.twin.get(t, t) for t in n.outputs]
        for t, twin in zip(n.outputs, outs, strict=True):
            if twin != t:
                w.outs.append((twin, t, _mode(made, t, ub)))
                tensors[twin] = Tensor(twin, tuple(graph.tensors[t].shape), "float32")
        w.node = replace(n, inputs=ins, outputs=outs)
        widened[n.id] = w
    ub.sole_twin = {}  # a twin read once, by one node (through views) -> the maker's twin
    for w in widened.values():
        for twin, t, mode in w.outs:
            if mode == ROUND_ONLY and len(read := made.readers(t, ub)) == 1:
                ub.sole_twin[read[0][1]] = twin
    views = {}
    for v, y in made.views.items():
        x = ub.graph.node(v).inputs[0]
        views[v] = (made.twin[y], made.twin[x])
        tensors[made.twin[y]] = Tensor(made.twin[y], tuple(graph.tensors[y].shape), "float32")
    return widened, tensors, consts, views


def apply_widen(ub: Any) -> bool:
    """Put the rewritten nodes of the builder's float16 nodes (``ub.widened``) in place of
    the originals, with the twins in its graph and constants (``ub.twin_views``: the views
    of twins; ``ub.rounded``: the output twins read by other nodes, with what their
    conversion writes); whether there were any."""
    ub.widened, tensors, consts, ub.twin_views = plan_widen(ub)
    ub.rounded = {o[0]: o[2] for w in ub.widened.values() for o in w.outs if o[2] != WRITE_HALF}
    if not ub.widened:
        return False
    ub.graph = UnitGraph(ub.graph, ub.widened, tensors, {**ub.weights, **consts})
    ub.weights = const_weights(ub.graph)
    ub.nodes = [ub.graph.node(n.id) for n in ub.nodes]
    return True


def half_names(ub: Any) -> list[str]:
    """The float16 tensors the rewritten nodes no longer name (for the plan's shapes)."""
    return [t for w in ub.widened.values() for t, _ in w.ins] + [
        o[1] for w in ub.widened.values() for o in w.outs
    ]


def written(ub: Any) -> list[str]:
    """The tensors the conversions write: input twins and float16 outputs."""
    ins = [twin for w in ub.widened.values() for _, twin in w.ins]
    return ins + [o[1] for w in ub.widened.values() for o in w.outs if o[2] != ROUND_ONLY]


def convert_in(ub: Any, node: Node) -> None:
    """Before ``node``'s launches: its float16 inputs made elsewhere into their twins."""
    w = ub.widened.get(node.id)
    for src, dst in w.ins if w else []:
        _launch(ub, node, "from_half", numel(ub.shape(dst)), [ub.t(src), ub.t(dst)])


def chain_half(ub: Any, node: Node) -> str:
    """The float16 output a chain of element-wise nodes ending at ``node`` writes itself
    (``ops/fused.py``, its terms rounded to float16): the node's, where no other node reads
    its twin; else "" (the chain writes the twin, rounded)."""
    w = ub.widened.get(node.id)
    return w.outs[0][1] if w and w.outs and w.outs[0][2] == WRITE_HALF else ""


def convert_out(ub: Any, node: Node, chained: bool = False) -> None:
    """After ``node``'s launches: its output twins to float16 (and rounded, where other
    rewritten nodes read them); a view of a twin made a view. After a chain (``chained``),
    only the float16 output of a twin that other nodes read: the rest the chain wrote. A
    twin whose one reader is in a chain that rounds it as it loads it (``ub.deferred``) is
    left as it is."""
    w = ub.widened.get(node.id)
    for twin, half, mode in w.outs if w else []:
        if chained and mode != WRITE_BOTH or twin in ub.deferred:
            continue
        refs = [ub.t(twin)] + ([] if mode == ROUND_ONLY else [ub.t(half)])
        _launch(ub, node, mode, numel(ub.shape(twin)), refs)
    if node.id in ub.twin_views:
        ub.make_alias(*ub.twin_views[node.id])


def _launch(ub: Any, node: Node, kernel: str, n: int, refs: list[Any]) -> None:
    """One launch of half.cl's ``kernel`` over ``n`` elements (half_cpu.cl's on a CPU)."""
    if ub.device.cpu_kernels:
        k, (g, l) = ub.kernel("half_cpu.cl", f"{kernel}_cpu"), cpu_grid1(n)
    else:
        k, (g, l) = ub.kernel("half.cl", kernel), grid1(n)
    ub.launch(node, k, g, l, [*refs, i32(n)])
