"""ScatterND and ScatterElements on data of any kernel dtype: the output is a copy of the data
(or the data's own buffer, where nothing reads it after the node: ``in_place.py``), then
each update is written (or combined by the reduction) at a flat offset the host computes
from the constant indices (scatter.cl ``scatter_at``). Indices read at run time, and
repeated constant ones, go to scatter_rt.py (reduction none: the last update wins, as in
onnxruntime; ScatterElements' reductions combine in onnxruntime's order, lane by lane;
ScatterND's reductions over repeated indices are refused)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import (
    ANY,
    NUMERIC,
    attr,
    const_value,
    grid1,
    i32,
    numel,
    strides,
    type_options,
)
from hetlab.devices.kernels.ops.gather_nd import index_reason, out_of_range
from hetlab.devices.kernels.ops.scatter_rt import (
    REDUCTIONS,
    data_into_output,
    runtime_reason,
    runtime_scatter,
)
from hetlab.graph.ir import Node, OpGraph


def nd_offsets(idx: np.ndarray, xs) -> np.ndarray:
    """ScatterND: the flat data offset of every update element (indices' last axis k)."""
    k = idx.shape[-1]
    q = idx.reshape(-1, k).astype(np.int64) % np.asarray(xs[:k], dtype=np.int64)
    base = q @ np.asarray(strides(xs)[:k], dtype=np.int64)
    return (base[:, None] + np.arange(numel(xs[k:]))[None, :]).reshape(-1)


def element_offsets(idx: np.ndarray, xs, ax: int) -> np.ndarray:
    """ScatterElements: the flat data offset of every update element."""
    coords = list(np.indices(idx.shape, dtype=np.int64))
    coords[ax] = idx.astype(np.int64) % xs[ax]
    return sum(c * s for c, s in zip(coords, strides(xs), strict=True)).reshape(-1)


class ScatterOp(Op):
    def float_inputs(self, node: Node) -> list[int]:
        return [0, 2]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return ANY

    def offsets(self, node: Node, idx: np.ndarray, xs) -> np.ndarray | None:
        """The flat offsets, or None when an index is out of range."""
        raise NotImplementedError

    def check(self, node: Node, graph: OpGraph) -> str | None:
        op = node.op_type
        r = index_reason(node, graph, node.inputs[1])
        if r:
            return r
        red = attr(node, "reduction", "none")
        if red not in REDUCTIONS:
            return f"{op} reduction {red!r}"
        if red != "none" and graph.tensors[node.inputs[0]].dtype not in NUMERIC:
            return f"{op} reduction {red!r} of bool data"
        idx = const_value(graph, node.inputs[1])
        if idx is None:
            return runtime_reason(node, graph)
        at = self.offsets(node, np.asarray(idx), graph.tensors[node.inputs[0]].shape)
        if at is None:
            return f"{op} index out of range"
        if np.unique(at).size != at.size:  # the last update wins, or in order by lanes
            return runtime_reason(node, graph)
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, idx = ctx.shape(node.inputs[0]), ctx.const(node.inputs[1])
        at = None if idx is None else self.offsets(node, np.asarray(idx), xs)
        if at is None or np.unique(at).size != at.size:
            runtime_scatter(node, ctx)
            return
        dtype = ctx.dtype(node.outputs[0])
        y = data_into_output(node, ctx)
        offs = ctx.upload(at, key=("scatter", node.id), dtype="int32")
        upd = ctx.tensor_or_const(node.inputs[2], dtype)
        kern = ctx.kernel("scatter.cl", "scatter_at", type_options(dtype))
        red = i32(REDUCTIONS[attr(node, "reduction", "none")])
        ctx.launch(node, kern, *grid1(at.size), [y, offs, upd, red, i32(at.size)])


@register
class ScatterND(ScatterOp):
    op_types = ("ScatterND",)

    def offsets(self, node: Node, idx: np.ndarray, xs) -> np.ndarray | None:
        xs = [int(d) for d in xs]
        if idx.ndim == 0 or idx.shape[-1] > len(xs) or out_of_range(idx, xs[: idx.shape[-1]]):
            return None
        return nd_offsets(idx, xs)


@register
class ScatterElements(ScatterOp):
    op_types = ("ScatterElements", "Scatter")

    def offsets(self, node: Node, idx: np.ndarray, xs) -> np.ndarray | None:
        xs = [int(d) for d in xs]
        ax = int(attr(node, "axis", 0)) % len(xs)
        if idx.ndim != len(xs) or out_of_range(idx[..., None], [xs[ax]]):
            return None
        return element_offsets(idx, xs, ax)
