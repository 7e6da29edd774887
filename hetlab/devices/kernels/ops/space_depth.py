"""DepthToSpace and SpaceToDepth on tensors of any kernel dtype: each is a transpose of a 6-D
view of the input, one strided copy (``copy_launch``), no kernel of its own."""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.ops import register
from hetlab.devices.kernels.ops.common import attr, strides
from hetlab.devices.kernels.ops.data_movement import Move, copy_launch
from hetlab.graph.ir import Node, OpGraph


def depth_to_space_view(xs, b: int, mode: str) -> tuple[list[int], list[int]]:
    """The iteration shape (N, C/b^2, H, b, W, b) of the row-major output and the input's
    strides over it: DCR splits channels as (b, b, C'), CRD as (C', b, b)."""
    n, c, h, w = xs
    cc, hw = c // (b * b), h * w
    shape = [n, cc, h, b, w, b]
    if mode == "CRD":
        sa = [c * hw, b * b * hw, w, b * hw, 1, hw]
    else:
        sa = [c * hw, hw, w, b * cc * hw, 1, cc * hw]
    return shape, sa


def space_to_depth_view(xs, b: int) -> tuple[list[int], list[int]]:
    """The iteration shape (N, b, b, C, H/b, W/b) of the row-major output (its channel is
    (row offset, column offset, C)) and the input's strides over it."""
    n, c, h, w = xs
    shape = [n, b, b, c, h // b, w // b]
    return shape, [c * h * w, w, 1, h * w, b * w, b]


@register
class SpaceDepth(Move):
    op_types = ("DepthToSpace", "SpaceToDepth")

    def check(self, node: Node, graph: OpGraph) -> str | None:
        xs = graph.tensors[node.inputs[0]].shape
        if len(xs) != 4:
            return f"{node.op_type} of a rank-{len(xs)} input (ONNX takes rank 4)"
        if node.op_type == "DepthToSpace" and attr(node, "mode", "DCR") not in ("DCR", "CRD"):
            return f"DepthToSpace mode {attr(node, 'mode')!r}"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs = ctx.shape(node.inputs[0])
        b = int(attr(node, "blocksize"))
        if node.op_type == "DepthToSpace":
            shape, sa = depth_to_space_view(xs, b, attr(node, "mode", "DCR"))
        else:
            shape, sa = space_to_depth_view(xs, b)
        y = ctx.t(node.outputs[0])
        copy_launch(ctx, node, ctx.t(node.inputs[0]), y, shape, sa, strides(shape))
