"""Whether a node of a unit may write its result into its data input's buffer (ScatterND,
ScatterElements: the output is the data with some elements replaced), instead of copying
the data into a buffer of its own first.

It may when nothing else reads that buffer after the node: the buffer is one a launch of
this unit writes (not a unit input rebound per run, not a constant, not a view made some
other way), and every other node that reads it -- directly or through a view of it -- is an
ancestor of the node in the graph. An ancestor runs before the node in every order a plan
may issue the unit's launches in (one in-order queue, or a CUDA graph's streams, whose waits
follow the graph's edges), so its read comes first whatever the schedule. A unit output is
never overwritten (another unit or the caller reads it after the run).
"""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.launches import Ref
from hetlab.devices.kernels.ops.common import numel
from hetlab.graph.ir import Node, OpGraph

# ops whose output may share its input's buffer without going through ``make_alias`` (a
# view at an offset): their readers read the data's buffer too
MAY_VIEW = ("Slice", "Split", "Gather")


def ancestors(graph: OpGraph, node: Node) -> set[str]:
    """The ids of the nodes whose outputs ``node`` depends on, directly or not."""
    producer = graph.producer()
    seen: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        for t in dict.fromkeys(n.inputs + n.outer_inputs):
            p = producer.get(t) if t else None
            if p is not None and p not in seen:
                seen.add(p)
                todo.append(graph.node(p))
    return seen


def written_by_launch(ctx: Any, root: str) -> bool:
    """Whether ``root`` is a buffer of the unit's own that a launch built so far writes:
    made by a node of the unit, not a view, not a constant, not a slice of a Concat's."""
    prod = ctx.producer.get(root)
    if prod is None or root in ctx.alias or root in ctx.weights or root in ctx.sub:
        return False
    host, ref = ctx.fused.get(prod.id, prod.id), Ref(root)
    # compared as Refs: a launch's other arguments may be arrays, which ``in`` would compare
    # element by element
    return any(
        L.node == host and any(isinstance(a, Ref) and a == ref for a in L.args)
        for L in ctx.launches
    )


def sharers(ctx: Any, root: str) -> set[str] | None:
    """The tensors held in ``root``'s buffer (``root`` and its views, made or possible), or
    None where one of them is a unit output."""
    shared: set[str] = set()
    todo = [root]
    while todo:
        t = todo.pop()
        if t in shared:
            continue
        if t in ctx.outputs:
            return None
        shared.add(t)
        for c in ctx.consumers.get(t, []):
            n = ctx.graph.node(c)
            todo += [
                o
                for o in n.outputs
                if o
                and (
                    ctx.alias.get(o) == root
                    or (n.op_type in MAY_VIEW and t == n.inputs[0])
                    or o in ctx.operand_views  # read through strides by MatMuls
                )
            ]
    return shared


def writable(ctx: Any, node: Node) -> bool:
    """Whether ``node`` (built now, by ``ctx``, a ``UnitBuilder``) may write its output into
    the buffer of its data input ``node.inputs[0]``; see the module's docstring."""
    data, out = node.inputs[0], node.outputs[0]
    if node.id in ctx.widened or ctx.dtype(data) != ctx.dtype(out):
        return False
    root = ctx.alias.get(data, data)
    if not written_by_launch(ctx, root):
        return False
    if numel(ctx.shape(root)) != numel(ctx.shape(data)):  # a part of root: the offset is lost
        return False
    shared = sharers(ctx, root)
    if shared is None or any(t in shared for t in node.inputs[1:]):
        return False
    before = ancestors(ctx.graph, node)
    readers = {c for t in shared for c in ctx.consumers.get(t, [])} - {node.id}
    return readers <= before
