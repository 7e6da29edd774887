"""Depthwise convolutions (one input channel per group) on their own kernels: on a CPU device
``depthwise_rows`` (conv_cpu.cl), built for the convolution's geometry, where its private
plane fits, else ``depthwise8``; elsewhere conv_misc.cl's ``depthwise``. The epilogue (bias,
activation, a Relu before the Conv) is the same on each. Why a kernel per geometry:
docs/decisions.md#depthwise-on-a-cpu-device."""

from __future__ import annotations

import math
from typing import Any

from hetlab.devices.kernels.ops.common import i32
from hetlab.graph.ir import Node

PLANE_MOST = 4096  # floats of a work-item's private input plane at most (16 KB)
CHUNK_MOST = 6  # float8 accumulators of a row chunk at most (AVX2 has 16 vector registers)
ITEMS_PER_UNIT = 8  # work-items per compute unit at least, where the rows allow
GROUP_MOST = 16  # work-items (channels) per work-group at most

GEOMETRY = ("KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW", "H", "W", "OH", "OW")


def rows_shape(g: dict, planes: int, units: int) -> dict[str, int] | None:
    """``depthwise_rows``'s build constants beyond the geometry: RB output rows per
    work-item, NCH chunks of CV float8 vectors per output row; and its work-group, CG
    channels. None where one input row alone overflows the private plane."""
    owv = math.ceil(g["OW"] / 8)
    nch = math.ceil(owv / CHUNK_MOST)
    cv = math.ceil(owv / nch)
    phase = math.ceil(((g["KW"] - 1) * g["DW"] // g["SW"] + nch * cv * 8) / 8) * 8
    prw = g["SW"] * phase  # a plane row: SW phases
    reach = (g["KH"] - 1) * g["DH"] + 1
    if reach * prw > PLANE_MOST:
        return None
    rb = max(1, min(g["OH"], (PLANE_MOST // prw - reach) // g["SH"] + 1))
    # enough work-items for every compute unit: fewer rows each where channels are few
    blocks = math.ceil(ITEMS_PER_UNIT * units / planes)
    rb = max(1, min(rb, math.ceil(g["OH"] / blocks)))
    items = math.ceil(g["OH"] / rb) * planes
    cg = max(1, min(GROUP_MOST, items // (ITEMS_PER_UNIT * units)))
    return {"RB": rb, "NCH": nch, "CV": cv, "CG": cg}


def depthwise(
    ctx: Any, node: Node, x: str, Wb: Any, Bb: Any, g: dict, chans: tuple[int, int, int], y: Any
) -> None:
    """The launch of a depthwise Conv ``node`` reading ``x`` with weights ``Wb`` and bias
    ``Bb`` (None: none) into ``y``; ``chans`` = (batch, input channels, output channels)."""
    Nb, Cin, Cout = chans
    cp = [g[k] for k in ("H", "W", "OH", "OW", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")]
    opt = "-DPRE_RELU" if node.id in ctx.pre_relu else ""
    dev = ctx.device
    shape = rows_shape(g, Nb * Cout, int(dev.dev.max_compute_units)) if dev.cpu_kernels else None
    if shape is not None:  # a private plane per work-item, its geometry built in
        consts = {**{k: g[k] for k in GEOMETRY}, **shape}
        opt += " -DDW_ROWS " + " ".join(f"-DG_{k}={v}" for k, v in consts.items() if k != "CG")
        k = ctx.kernel("conv_cpu.cl", "depthwise_rows", opt)
        gsize, lsize = (math.ceil(g["OH"] / shape["RB"]), Nb * Cout, 1), (1, shape["CG"], 1)
    elif dev.cpu_kernels:  # eight outputs of a row per work-item, as a float8
        k, width = ctx.kernel("conv_cpu.cl", "depthwise8", opt), -(-g["OW"] // 8)
        gsize, lsize = (width, g["OH"], Nb * Cout), (min(4, width), 1, 1)
    else:
        k = ctx.kernel("conv_misc.cl", "depthwise", opt)
        gsize, lsize = (g["OW"], g["OH"], Nb * Cout), None if g["OW"] < 8 else (8, 8, 1)
    has = Bb is not None
    ctx.launch(
        node,
        k,
        gsize,
        lsize,
        [
            ctx.t(x),
            Wb,
            Bb if has else ctx.scratch(1),
            i32(has),
            y,
            ctx.ints(cp + [Cin, Cout, Nb * Cout]),
            *ctx.act(node),
        ],
    )
