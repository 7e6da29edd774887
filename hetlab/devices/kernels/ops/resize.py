"""Resize (nearest, linear) and Upsample over the last two axes (conv_misc.cl ``resize2d``).

The source index (and linear weights) of every output row and column are computed here, on
the host, with onnxruntime's CPU arithmetic: float32 or float64 step by step as its kernel
does, so a coordinate that lands on a rounding boundary rounds the same way (a kernel's own
float division may be off by ulps, which moves a nearest pixel). Scales come
from the constant ``scales`` input or attribute (per ``axes`` when given); with ``sizes``
the scale is out/in, known from the fixed shapes, or under a ``keep_aspect_ratio_policy`` the
one scale that policy picks. A Resize with two inputs is opset 10, as is Upsample: asymmetric
coordinates, and nearest rounds down when upsampling an axis and up when downsampling it.
Cubic interpolation and antialiased downsampling have no kernel and are refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, const_value, f32
from hetlab.graph.ir import Node, OpGraph

CTM = {
    "half_pixel": 0,
    "asymmetric": 1,
    "align_corners": 2,
    "pytorch_half_pixel": 3,
    "tf_half_pixel_for_nn": 4,
    "half_pixel_symmetric": 5,
    "tf_crop_and_resize": 6,
}
NEAREST = {"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}
POLICIES = ("stretch", "not_larger", "not_smaller")
# coordinate transformations whose source coordinates are reproduced here only to within an
# ulp: linear interpolation agrees, but a nearest index at an exact half could flip
NEAREST_APPROX = ("half_pixel_symmetric", "tf_crop_and_resize")


def _legacy(node: Node) -> bool:
    return node.op_type == "Upsample" or len(node.inputs) == 2


def _axes(node: Node, rank: int) -> list[int]:
    axes = attr(node, "axes", None)
    return list(range(rank)) if axes is None else [int(a) % rank for a in axes]


def _per_axis(values: np.ndarray, axes: list[int], rank: int, fill: float) -> list[float]:
    out = [fill] * rank
    for a, v in zip(axes, values.reshape(-1), strict=True):
        out[a] = float(v)
    return out


def _scales(node: Node, get, xs, ys) -> list[float] | None:
    """The four per-axis scales the coordinate transformation uses; None when they are not
    known before the run (a non-constant ``scales`` input)."""
    r = len(xs)
    if node.op_type == "Upsample" and "scales" in node.attrs:
        return [float(v) for v in attr(node, "scales")]
    idx = 1 if _legacy(node) else 2
    if len(node.inputs) > idx and node.inputs[idx]:
        v = get(node.inputs[idx])
        if v is None:
            return None
        v = np.asarray(v, dtype=np.float64)
        if v.size:
            return _per_axis(v, _axes(node, r), r, 1.0)
    axes = _axes(node, r)
    policy = attr(node, "keep_aspect_ratio_policy", "stretch")
    if policy != "stretch":  # one scale for every axis in ``axes``, from the asked sizes
        sizes = get(node.inputs[3]) if len(node.inputs) > 3 and node.inputs[3] else None
        if sizes is None:
            return None
        asked = _per_axis(np.asarray(sizes, dtype=np.float64), axes, r, 0.0)
        pick = min if policy == "not_larger" else max
        s = pick(float(np.float32(asked[a]) / np.float32(xs[a])) for a in axes)
        return [s if a in axes else 1.0 for a in range(r)]
    return [ys[a] / xs[a] for a in range(r)]


def _roi(node: Node, get, rank: int) -> list[float] | None:
    """[start h, start w, end h, end w] of tf_crop_and_resize's constant roi (None if not)."""
    if len(node.inputs) < 2 or not node.inputs[1]:
        return None
    v = get(node.inputs[1])
    if v is None:
        return None
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    axes = _axes(node, rank)
    if v.size != 2 * len(axes):
        return None
    starts = _per_axis(v[: len(axes)], axes, rank, 0.0)
    ends = _per_axis(v[len(axes) :], axes, rank, 1.0)
    if starts[:2] != [0.0, 0.0] or ends[:2] != [1.0, 1.0]:
        return None
    return [starts[2], starts[3], ends[2], ends[3]]


def _check_modes(node: Node, xs, ys) -> str | None:
    mode = attr(node, "mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        return f"mode {mode!r} unsupported (nearest and linear only)"
    ctm = attr(node, "coordinate_transformation_mode", "half_pixel")
    if not _legacy(node) and ctm not in CTM:
        return f"coordinate_transformation_mode {ctm!r} unsupported"
    nm = attr(node, "nearest_mode", "round_prefer_floor")
    if nm not in NEAREST:
        return f"nearest_mode {nm!r} unsupported"
    if attr(node, "keep_aspect_ratio_policy", "stretch") not in POLICIES:
        return "keep_aspect_ratio_policy unsupported"
    down = ys[2] < xs[2] or ys[3] < xs[3]
    if int(attr(node, "antialias", 0)) and mode != "nearest" and down:
        return "antialias=1 when downsampling unsupported"
    return None


@register
class Resize(Op):
    op_types = ("Resize", "Upsample")

    def float_inputs(self, node: Node) -> list[int]:
        return [0]

    def check(self, node: Node, graph: OpGraph) -> str | None:
        xs = graph.tensors[node.inputs[0]].shape
        ys = graph.tensors[node.outputs[0]].shape
        if len(xs) != 4 or xs[0] != ys[0] or xs[1] != ys[1]:
            return "only of the last two axes of a 4-D tensor"
        why = _check_modes(node, xs, ys)
        if why:
            return why

        def get(t):
            return const_value(graph, t)

        sc = _scales(node, get, xs, ys)
        if sc is None:
            return "non-constant scales (or sizes, with keep_aspect_ratio_policy) input"
        if sc[0] != 1.0 or sc[1] != 1.0:
            return "scales of the batch or channel axis"
        ctm = attr(node, "coordinate_transformation_mode", "half_pixel")
        if _legacy(node):
            return None
        if ctm in NEAREST_APPROX and attr(node, "mode", "nearest") == "nearest":
            return f"mode 'nearest' with coordinate_transformation_mode {ctm!r} unsupported"
        if ctm == "tf_crop_and_resize" and _roi(node, get, 4) is None:
            return "tf_crop_and_resize needs a constant roi that keeps batch and channels"
        return None

    def build(self, node: Node, ctx: Any) -> None:
        xs, ys = ctx.shape(node.inputs[0]), ctx.shape(node.outputs[0])
        sc = _scales(node, ctx.const, xs, ys)
        roi = [0.0, 0.0, 1.0, 1.0]
        if _legacy(node):
            ctm, nm = "asymmetric", "simple"
        else:
            ctm = attr(node, "coordinate_transformation_mode", "half_pixel")
            nm = attr(node, "nearest_mode", "round_prefer_floor")
            if ctm == "tf_crop_and_resize":
                roi = _roi(node, ctx.const, 4)
        crop = ctm == "tf_crop_and_resize"
        nearest = attr(node, "mode", "nearest") == "nearest"
        axes = []
        for a in (2, 3):
            src = source_coords(ctm, ys[a], xs[a], sc[a], roi[a - 2], roi[a])
            axes.append(
                nearest_table(src, xs[a], nm, sc[a] < 1, crop)
                if nearest
                else linear_table(src, xs[a], crop)
            )
        (h0, h1, dy1, dy2), (w0, w1, dx1, dx2) = axes
        ti = np.concatenate([h0, h1, w0, w1]).astype(np.int32)
        tf = np.concatenate([dy1, dy2, dx1, dx2]).astype(np.float32)
        ctx.launch(
            node,
            ctx.kernel("conv_misc.cl", "resize2d"),
            (ys[3], ys[2], xs[0] * xs[1]),
            None,
            [
                ctx.t(node.inputs[0]),
                ctx.t(node.outputs[0]),
                ctx.ints([xs[2], xs[3], ys[2], ys[3], 0 if nearest else 1]),
                ctx.upload(ti, dtype="int32"),
                ctx.upload(tf),
                f32(attr(node, "extrapolation_value", 0.0)),
            ],
        )


F = np.float32


def source_coords(ctm: str, out_len: int, in_len: int, scale: float, r0: float, r1: float):
    """The source coordinate of each output index along one axis, as onnxruntime's CPU
    Resize computes it, step by step in float32."""
    x = np.arange(out_len, dtype=F)
    s, lo, lr = F(scale), F(in_len), F(out_len)
    half = F(0.5)
    if ctm == "asymmetric":
        return x / s
    if ctm == "align_corners":
        return x * 0 if out_len == 1 else x * (lo - F(1)) / (lr - F(1))
    if ctm == "pytorch_half_pixel":
        return (x + half) / s - half if out_len > 1 else x * 0
    if ctm == "tf_half_pixel_for_nn":
        return (x + half) / s
    if ctm == "half_pixel_symmetric":
        offset = (lo / F(2)) * (F(1) - lr / (s * lo))
        return offset + (x + half) / s - half
    if ctm == "tf_crop_and_resize":
        a, b = F(r0), F(r1)
        if out_len > 1:
            return a * (lo - F(1)) + (x * (b - a) * (lo - F(1))) / (lr - F(1))
        return np.full(1, 0.5 * (np.float64(a) + np.float64(b)) * (in_len - 1), dtype=F)
    return (x + half) / s - half  # half_pixel


def _std_round(x: np.ndarray) -> np.ndarray:
    """C's round(): halves away from zero (``floor(x + 0.5)`` rounds 0.49999997 up)."""
    t = np.trunc(x)
    return t + np.sign(x) * (np.abs(x - t) >= 0.5)


def _round(src: np.ndarray, nm: str, down: bool) -> np.ndarray:
    if nm == "simple":  # opset < 11: ceil when downsampling, else truncation
        return np.ceil(src) if down else np.trunc(src)
    if nm == "round_prefer_floor":
        return np.where(src == np.trunc(src) + F(0.5), np.floor(src), _std_round(src))
    if nm == "round_prefer_ceil":
        return _std_round(src)
    return np.floor(src) if nm == "floor" else np.ceil(src)


def nearest_table(src: np.ndarray, in_len: int, nm: str, down: bool, crop: bool) -> tuple:
    """(index, unused, unused, unused): the nearest source index of each output (-1 where a
    crop falls outside the input)."""
    idx = np.clip(_round(src, nm, down), 0, in_len - 1).astype(np.int64)
    if crop:
        idx = np.where((src < 0) | (src > in_len - 1), -1, idx)
    zero = np.zeros_like(src)
    return idx, idx, zero, zero


def linear_table(src: np.ndarray, in_len: int, crop: bool) -> tuple:
    """(first index, second index, weight of the second, weight of the first)."""
    c = np.clip(src, F(0), F(in_len - 1)).astype(F)
    i1 = np.minimum(c.astype(np.int64), in_len - 1)
    i2 = np.minimum(i1 + 1, in_len - 1)
    d1 = np.abs(c - i1.astype(F))
    d2 = np.abs(c - i2.astype(F))
    same = i1 == i2
    d1, d2 = np.where(same, F(0.5), d1), np.where(same, F(0.5), d2)
    if crop:
        i1 = np.where((src < 0) | (src > in_len - 1), -1, i1)
    return i1, i2, d1, d2
