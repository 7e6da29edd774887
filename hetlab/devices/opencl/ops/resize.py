"""Resize (nearest, linear) and Upsample over the last two axes (conv_misc.cl ``resize2d``).

Scales come from the constant ``scales`` input or attribute; with ``sizes`` the scale is
out/in, known from the fixed shapes. A Resize with two inputs is opset 10 (asymmetric
coordinates), as is Upsample; their nearest rounding is floor, valid when upsampling.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.opencl.ops import Op, register
from hetlab.devices.opencl.ops.common import attr, const_value, f32, i32
from hetlab.graph.ir import Node, OpGraph

CTM = {
    "half_pixel": 0,
    "asymmetric": 1,
    "align_corners": 2,
    "pytorch_half_pixel": 3,
    "tf_half_pixel_for_nn": 4,
}
NEAREST = {"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}


def _legacy(node: Node) -> bool:
    return node.op_type == "Upsample" or len(node.inputs) == 2


def _scales(node: Node, get) -> list[float] | None:
    if node.op_type == "Upsample" and "scales" in node.attrs:
        return [float(v) for v in attr(node, "scales")]
    idx = 1 if _legacy(node) else 2
    if len(node.inputs) > idx and node.inputs[idx]:
        v = get(node.inputs[idx])
        if v is None:
            return None
        v = np.asarray(v).reshape(-1)
        if v.size:
            return [float(x) for x in v]
    return []  # sizes given: scale = out / in


@register
class Resize(Op):
    op_types = ("Resize", "Upsample")

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def check(self, node: Node, graph: OpGraph) -> str | None:
        xs = graph.tensors[node.inputs[0]].shape
        ys = graph.tensors[node.outputs[0]].shape
        if len(xs) != 4 or xs[0] != ys[0] or xs[1] != ys[1]:
            return "Resize only of the last two axes of a 4-D tensor"
        mode = attr(node, "mode", "nearest")
        if mode not in ("nearest", "linear", "bilinear"):
            return f"Resize mode {mode!r}"
        ctm = attr(node, "coordinate_transformation_mode", "half_pixel")
        if not _legacy(node) and ctm not in CTM:
            return f"coordinate_transformation_mode {ctm!r}"
        if int(attr(node, "antialias", 0)) or "axes" in node.attrs:
            return "Resize antialias/axes"
        if _legacy(node) and mode == "nearest" and (ys[2] < xs[2] or ys[3] < xs[3]):
            return "opset-10 nearest Resize that downsamples"
        if attr(node, "nearest_mode", "round_prefer_floor") not in NEAREST:
            return "nearest_mode"
        if _scales(node, lambda t: const_value(graph, t)) is None:
            return "Resize scales must be constant"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ys = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
        sc = _scales(node, ctx.const)
        sh, sw = (sc[2], sc[3]) if sc else (ys[2] / xs[2], ys[3] / xs[3])
        if _legacy(node):
            ctm, nm = CTM["asymmetric"], NEAREST["floor"]
        else:
            ctm = CTM[attr(node, "coordinate_transformation_mode", "half_pixel")]
            nm = NEAREST[attr(node, "nearest_mode", "round_prefer_floor")]
        mode = 0 if attr(node, "mode", "nearest") == "nearest" else 1
        rp = [xs[2], xs[3], ys[2], ys[3], ctm, nm]
        ctx.launch(
            node,
            ctx.kernel("conv_misc.cl", "resize2d"),
            (ys[3], ys[2], xs[0] * xs[1]),
            None,
            [
                ctx.t(node.inputs[0]),
                ctx.t(node.outputs[0]),
                ctx.ints(rp),
                f32(sh),
                f32(sw),
                i32(mode),
            ],
        )
