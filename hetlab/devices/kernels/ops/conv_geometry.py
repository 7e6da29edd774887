"""A convolution's geometry as the kernels take it: sizes, kernel, strides, pads and
dilations along H and W, a 1-D convolution as 2-D with H = 1, and a convolution over
columns of width 1 as one over rows (the kernels' vector paths run along a row)."""

from __future__ import annotations

from hetlab.devices.kernels.ops.common import attr, conv_pads
from hetlab.graph.ir import Node


def geometry(node: Node, xs: tuple[int, ...], ys: tuple[int, ...], ksp: list[int]) -> dict:
    r = len(xs) - 2
    s = list(attr(node, "strides", [1] * r))
    d = list(attr(node, "dilations", [1] * r))
    pb, pe = conv_pads(node, xs[2:], ys[2:], ksp, s, d)
    if r == 1:  # 1-D as 2-D with H = 1
        return {
            "H": 1,
            "W": xs[2],
            "OH": 1,
            "OW": ys[2],
            "KH": 1,
            "KW": ksp[0],
            "SH": 1,
            "SW": s[0],
            "PH": 0,
            "PW": pb[0],
            "DH": 1,
            "DW": d[0],
            "PHE": 0,
            "PWE": pe[0],
        }
    g = {
        "H": xs[2],
        "W": xs[3],
        "OH": ys[2],
        "OW": ys[3],
        "KH": ksp[0],
        "KW": ksp[1],
        "SH": s[0],
        "SW": s[1],
        "PH": pb[0],
        "PW": pb[1],
        "DH": d[0],
        "DW": d[1],
        "PHE": pe[0],
        "PWE": pe[1],
    }
    if g["W"] == g["OW"] == g["KW"] == 1 and g["H"] > 1:  # [.., H, 1]: a 1-D signal along H
        return _as_row(g)
    return g


def _as_row(g: dict) -> dict:
    """A convolution over columns of width 1 as the same convolution over rows of height 1:
    the memory order of input, weights and output is unchanged, and the kernels' vector
    paths run along a row."""
    swap = {"H": "W", "OH": "OW", "KH": "KW", "SH": "SW", "PH": "PW", "DH": "DW", "PHE": "PWE"}
    out = dict(g)
    for a, b in swap.items():
        out[a], out[b] = g[b], g[a]
    return out
