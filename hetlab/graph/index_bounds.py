"""The tables a model's inputs index: for each input whose values reach the indices of a
``Gather``-like op (directly or through ops that pass values on unchanged: ``Cast``,
``Unsqueeze``, ``Reshape``...), the number of rows of the smallest such table, so that seeded
random inputs stay inside it (``inputs.random_inputs``).

The walk reads nodes as ``(op_type, inputs, outputs, attrs)`` and shapes through a function,
so that it serves an ``OpGraph`` and a model proto before its graph is built alike."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hetlab.graph.ir import OpGraph

NodeView = tuple[str, Sequence[str], Sequence[str], Mapping[str, Any]]
ShapeOf = Callable[[str], "tuple[int, ...] | None"]

# ops whose output holds values of their first input unchanged (the other inputs are shapes,
# axes or bounds); ``Concat`` passes every input on
PASS = frozenset(
    {
        "Cast",
        "CastLike",
        "Identity",
        "Unsqueeze",
        "Squeeze",
        "Reshape",
        "Flatten",
        "Transpose",
        "Expand",
        "Tile",
        "Slice",
        "Split",
        "Concat",
    }
)

# (op, position of an index input) -> (position of the table it indexes, the axis attribute;
# None: the table's first axis). ``EmbedLayerNormalization`` (onnxruntime's contrib op of
# BERT-style exports) looks up token ids, segment ids and position ids in three tables.
TABLES: dict[tuple[str, int], tuple[int, str | None]] = {
    ("Gather", 1): (0, "axis"),
    ("GatherElements", 1): (0, "axis"),
    ("EmbedLayerNormalization", 0): (2, None),
    ("EmbedLayerNormalization", 1): (4, None),
    ("EmbedLayerNormalization", 8): (3, None),
}


def graph_index_bounds(graph: OpGraph, names: Iterable[str] | None = None) -> dict[str, int]:
    """``index_bounds`` of an ``OpGraph``'s inputs (or of ``names``)."""

    def shape_of(t: str) -> tuple[int, ...] | None:
        ten = graph.tensors.get(t)
        return None if ten is None or ten.shape is None else tuple(ten.shape)

    nodes = [(n.op_type, n.inputs, n.outputs, n.attrs) for n in graph.nodes]
    return index_bounds(nodes, shape_of, graph.inputs if names is None else names)


def index_bounds(
    nodes: Iterable[NodeView], shape_of: ShapeOf, starts: Iterable[str]
) -> dict[str, int]:
    """For each name of ``starts`` whose values reach an index input of ``TABLES`` (or of a
    ``GatherND``), the smallest size of what they index there; names that reach none are
    left out."""
    readers: dict[str, list[tuple[NodeView, int]]] = {}
    for nd in nodes:
        for pos, t in enumerate(nd[1]):
            if t:
                readers.setdefault(t, []).append((nd, pos))
    out: dict[str, int] = {}
    for start in starts:
        sizes = _reached_sizes(start, readers, shape_of)
        if sizes:
            out[start] = min(sizes)
    return out


def _reached_sizes(
    start: str, readers: Mapping[str, list[tuple[NodeView, int]]], shape_of: ShapeOf
) -> list[int]:
    """The sizes of the tables that ``start``'s values index, following ``PASS`` ops."""
    sizes: list[int] = []
    seen, todo = {start}, [start]
    while todo:
        t = todo.pop()
        for (op, ins, outs, attrs), pos in readers.get(t, []):
            if op in PASS and (pos == 0 or op == "Concat"):
                fresh = [o for o in outs if o and o not in seen]
                seen.update(fresh)
                todo.extend(fresh)
                continue
            size = _table_size(op, pos, ins, attrs, shape_of)
            if size is not None:
                sizes.append(size)
    return sizes


def _table_size(
    op: str, pos: int, ins: Sequence[str], attrs: Mapping[str, Any], shape_of: ShapeOf
) -> int | None:
    """How many entries an index at input ``pos`` of ``op`` may address; None where it
    indexes nothing or the table's shape is unknown."""
    if op == "GatherND" and pos == 1:
        data, idx = shape_of(ins[0]), shape_of(ins[1])
        if not data or not idx:
            return None
        b = int(attrs.get("batch_dims", 0) or 0)
        dims = data[b : b + idx[-1]]
        return min(dims) if dims else None
    where = TABLES.get((op, pos))
    if where is None or len(ins) <= where[0] or not ins[where[0]]:
        return None
    table = shape_of(ins[where[0]])
    if not table:
        return None
    axis = int(attrs.get(where[1], 0) or 0) if where[1] else 0
    return table[axis] if -len(table) <= axis < len(table) else None
