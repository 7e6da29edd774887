"""The ``ai.onnx.ml`` ops that have kernels: Scaler, ``y = (x - offset) * scale`` in float32
(eltwise.cl ``scaler``), per feature or one value for all, on float32, int32 or int64 data,
as onnxruntime computes it (an integer is converted to float first; the feature of flat
element i is i modulo x's second extent, its only one at rank 1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import ML, Op, register
from hetlab.devices.kernels.ops.common import attr, grid1, i32, numel, type_options
from hetlab.graph.ir import Node, OpGraph


def _features(shape) -> int:
    """onnxruntime's feature count: x's second extent, its only one at rank 1."""
    return int(shape[1] if len(shape) > 1 else shape[0])


@register
class Scaler(Op):
    op_types = ("Scaler",)
    domain = ML

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        return ("float32", "int32", "int64")

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        x = graph.tensors.get(node.inputs[0])
        if x is not None and x.dtype == "float16":  # not widened: onnxruntime takes no float16
            return "Scaler input is float16 (onnxruntime's Scaler takes none)"
        y = graph.tensors.get(node.outputs[0])
        if y is not None and y.dtype != "float32":
            return f"Scaler output is {y.dtype}"
        return super().why_not(node, graph)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        off, sc = attr(node, "offset", []), attr(node, "scale", [])
        if not len(sc) or len(sc) != len(off):
            return "Scaler scale empty or of another length than offset"
        xs = graph.tensors[node.inputs[0]].shape
        if not xs:
            return "Scaler of a scalar"
        if len(sc) not in (1, _features(xs)):
            return "Scaler scale and offset neither one value nor one per feature"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        x, y = node.inputs[0], node.outputs[0]
        off = np.asarray(attr(node, "offset", []), np.float32)
        sc = np.asarray(attr(node, "scale", []), np.float32)
        n = numel(ctx.shape(x))
        k = ctx.kernel("eltwise.cl", "scaler", type_options(ctx.dtype(x)))
        args = [ctx.t(x), ctx.t(y), ctx.upload(off), ctx.upload(sc), i32(n), i32(sc.size)]
        ctx.launch(node, k, *grid1(n), args)
