"""Conv (implicit-im2col tiled GEMM; 1x1 stride-1 as a plain GEMM; depthwise direct) and
ConvTranspose (direct gather kernel). 1-D convolutions run as 2-D with H = 1. At a precision
other than fp32, a Conv's GEMM runs on the device's library GEMM (``library.py``: im2col,
the tensor cores, the epilogue); depthwise stays on its direct kernel.

A BatchNormalization fused by the builder is folded into the weights and bias here:
``W' = W * s``, ``b' = (b - mean) * s + beta`` with ``s = gamma / sqrt(var + eps)``. An Add
fused by the builder (``resid_of``) is added in the GEMM epilogue; a Relu before the Conv
(``pre_relu``: the Conv reads the Relu's input) is applied as the input is loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import Op, register
from hetlab.devices.kernels.ops.common import attr, i32
from hetlab.devices.kernels.ops.conv_geometry import geometry
from hetlab.devices.kernels.ops.depthwise import depthwise
from hetlab.devices.kernels.ops.gemm import gemm_launch, no_act
from hetlab.graph.ir import Node, OpGraph


def row_group(ctx: Any, width: int) -> tuple[int, int, int] | None:
    """A direct convolution's work-group on a CPU device: 16 outputs of one row (a PoCL
    work-group runs on one thread, and a 1-D signal has one row). None elsewhere: the
    driver's choice."""
    return (16, 1, 1) if ctx.device.cpu_kernels and width >= 16 else None


def _rank_check(node: Node, graph: OpGraph) -> str | None:
    r = len(graph.tensors[node.inputs[0]].shape)
    if r not in (3, 4):
        return f"{node.op_type} on rank-{r} input (only 1-D and 2-D convolutions)"
    if len(graph.tensors[node.inputs[1]].shape) != r:
        return "weight rank differs from input rank"
    return None


@register
class Conv(Op):
    op_types = ("Conv",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        return _rank_check(node, graph)

    def build(self, node: Node, ctx: Any) -> None:
        w = node.inputs[1]
        x = ctx.pre_relu.get(node.id, node.inputs[0])
        b = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
        xs, ys, ws = ctx.shape(x), ctx.shape(node.outputs[0]), ctx.shape(w)
        G = int(attr(node, "group", 1))
        Nb, Cin = xs[0], xs[1]
        Cout = ws[0]
        g = geometry(node, xs, ys, list(ws[2:]))
        Wb, Bb, W_host, B_host = _folded_weights(ctx, node, w, b, len(ws))
        cig, cog = Cin // G, Cout // G
        y, yoff = ctx.dest(node)
        if cig == 1 and G > 1:
            depthwise(ctx, node, x, Wb, Bb, g, (Nb, Cin, Cout), y)
            return
        HW, OHW = g["H"] * g["W"], g["OH"] * g["OW"]
        Kd = cig * g["KH"] * g["KW"]
        offs = [
            (
                gi * cog * Kd,
                n * Cin * HW + gi * cig * HW,
                yoff + n * Cout * OHW + gi * cog * OHW,
                gi * cog,
            )
            for n in range(Nb)
            for gi in range(G)
        ]
        pointwise = g["KH"] == g["KW"] == 1 and g["SH"] == g["SW"] == 1 and g["PH"] == g["PW"] == 0
        conv = (
            None
            if pointwise
            else [g[k] for k in ("H", "W", "OW", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")]
        )
        gemm_launch(
            ctx,
            node,
            M=cog,
            N=OHW,
            K=Kd,
            A=Wb,
            sam=Kd,
            sak=1,
            B=ctx.t(x),
            sbk=HW,
            sbn=1,
            C=y,
            ldc=OHW,
            offs=offs,
            bias=Bb,
            sbias_m=1,
            sbias_n=0,
            conv=conv,
            resid=(ctx.t(ctx.resid_of[node.id]), yoff) if node.id in ctx.resid_of else None,
            pre_relu=node.id in ctx.pre_relu,
            library=True,
            hosts=(W_host, None, B_host),
        )


def _folded_weights(ctx: Any, node: Node, w: str, b: str, rank: int) -> tuple[Any, ...]:
    """(weight buffer, bias buffer or None, the weights' values, the bias's values: None
    where not constant) of a Conv, with the BatchNormalization that follows it folded in
    when the builder fused one."""
    W_arr, B_arr = ctx.const(w), ctx.const(b) if b else None
    bn = ctx.bn_of.get(node.id)
    if bn is not None:
        gamma, beta, mean, var = (
            np.asarray(ctx.const(t), dtype=np.float64) for t in bn.inputs[1:5]
        )
        s = gamma / np.sqrt(var + float(attr(bn, "epsilon", 1e-5)))
        W_arr = np.asarray(W_arr, dtype=np.float64) * s.reshape(-1, *([1] * (rank - 1)))
        B_arr = (
            (np.asarray(B_arr, dtype=np.float64) if B_arr is not None else 0.0) - mean
        ) * s + beta
    Wb = ctx.upload(W_arr, key=("W", node.id)) if W_arr is not None else ctx.t(w)
    Bb = ctx.upload(B_arr, key=("B", node.id)) if B_arr is not None else (ctx.t(b) if b else None)
    return Wb, Bb, W_arr, B_arr


@register
class ConvTranspose(Op):
    op_types = ("ConvTranspose",)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        return _rank_check(node, graph)

    def build(self, node: Node, ctx: Any) -> None:
        x, w = node.inputs[0], node.inputs[1]
        b = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
        xs, ys, ws = ctx.shape(x), ctx.shape(node.outputs[0]), ctx.shape(w)
        r = len(xs) - 2
        G = int(attr(node, "group", 1))
        s = list(attr(node, "strides", [1] * r))
        d = list(attr(node, "dilations", [1] * r))
        op = list(attr(node, "output_padding", [0] * r))
        auto = attr(node, "auto_pad", "NOTSET") or "NOTSET"
        if "output_shape" in node.attrs or auto in ("SAME_UPPER", "SAME_LOWER"):
            pb = []
            for i in range(r):
                total = s[i] * (xs[2 + i] - 1) + op[i] + (ws[2 + i] - 1) * d[i] + 1 - ys[2 + i]
                pb.append(total // 2 if auto == "SAME_UPPER" else total - total // 2)
        elif auto == "VALID":
            pb = [0] * r
        else:
            pb = [int(p) for p in list(attr(node, "pads", [0] * 2 * r))[:r]]
        if r == 1:
            cp = [1, xs[2], 1, ys[2], 1, ws[2], 1, s[0], 0, pb[0], 1, d[0]]
        else:
            cp = [xs[2], xs[3], ys[2], ys[3], ws[2], ws[3], s[0], s[1], pb[0], pb[1], d[0], d[1]]
        Cin, Cout = xs[1], ys[1]
        Wb, Bb = _transpose_folded(ctx, node, w, b, G)
        has = Bb is not None
        if ctx.device.cpu_kernels:
            _transpose_by_gemm(ctx, node, (x, Wb, Bb), cp, (xs[0], Cin, Cout, G))
            return
        k = ctx.kernel("conv_misc.cl", "conv_transpose")
        ctx.launch(
            node,
            k,
            (cp[3], cp[2], xs[0] * Cout),
            row_group(ctx, cp[3]),
            [
                ctx.t(x),
                Wb,
                Bb if has else ctx.scratch(1),
                i32(has),
                ctx.t(ctx.out(node)),
                ctx.ints(cp + [Cin, Cout, G]),
                *ctx.act(node),
            ],
        )


def _transpose_folded(ctx: Any, node: Node, w: str, b: str, G: int) -> tuple[Any, Any]:
    """(weights, bias or None) of a ConvTranspose, with the BatchNormalization that follows
    it folded in when the builder fused one: W is (Cin, Cout / G, ...), and the output
    channel of W[ci, j] is (ci // (Cin / G)) * (Cout / G) + j."""
    bn = ctx.bn_of.get(node.id)
    if bn is None:
        return ctx.tensor_or_const(w), ctx.tensor_or_const(b) if b else None
    gamma, beta, mean, var = (np.asarray(ctx.const(t), dtype=np.float64) for t in bn.inputs[1:5])
    s = gamma / np.sqrt(var + float(attr(bn, "epsilon", 1e-5)))
    W = np.asarray(ctx.const(w), dtype=np.float64)
    cig, cog = W.shape[0] // G, W.shape[1]
    per = np.repeat(s.reshape(G, 1, cog), cig, axis=1).reshape(W.shape[0], cog)
    W = W * per.reshape(*per.shape, *([1] * (W.ndim - 2)))
    B = (np.asarray(ctx.const(b), dtype=np.float64) if b else 0.0) - mean
    return ctx.upload(W, key=("W", node.id)), ctx.upload(B * s + beta, key=("B", node.id))


def _transpose_by_gemm(
    ctx: Any, node: Node, xwb: tuple[str, Any, Any], cp: list[int], dims: tuple[int, ...]
) -> None:
    """ConvTranspose on a CPU device: per batch and group, the GEMM cols = W^T @ x (every
    input's contribution to every tap, on gemm_cpu.cl), then ``col2im`` sums each output's
    taps and adds the bias. The direct kernel walks the input channels once per output
    with a scalar loop, 10-40x slower there on long 1-D signals."""
    x, A, bias = xwb
    Nb, Cin, Cout, G = dims
    taps = cp[4] * cp[5]
    cig, cog, HW = Cin // G, Cout // G, cp[0] * cp[1]
    M = cog * taps
    cols = ctx.scratch(Nb * Cout * taps * HW)
    offs = [
        (g * cig * M, (n * Cin + g * cig) * HW, (n * G + g) * M * HW, 0)
        for n in range(Nb)
        for g in range(G)
    ]
    B = ctx.t(x)
    gemm_launch(
        ctx,
        node,
        M=M,
        N=HW,
        K=cig,
        A=A,
        sam=1,
        sak=M,
        B=B,
        sbk=HW,
        sbn=1,
        C=cols,
        ldc=HW,
        offs=offs,
        act=no_act(),
    )
    has = bias is not None
    ctx.launch(
        node,
        ctx.kernel("conv_misc.cl", "col2im"),
        (cp[3], cp[2], Nb * Cout),
        row_group(ctx, cp[3]),
        [
            cols,
            bias if has else ctx.scratch(1),
            i32(has),
            ctx.t(ctx.out(node)),
            ctx.ints(cp + [Cin, Cout, G]),
            *ctx.act(node),
        ],
    )
