"""The exact integer reference of the ops with integer products (ONNX's definitions, numpy,
int64 sums): MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, over every zero-point
layout ONNX allows (per tensor; A's per row; B's per column, W's per output channel); and
onnxruntime's contrib MatMulIntegerToFloat and DynamicQuantizeMatMul, whose exact sums end in
float32 as onnxruntime computes them: ``float32(sum) * float32(a_scale * b_scale)``, then
``+ bias``, each step rounded to float32 (A quantized first, for the second, as
DynamicQuantizeLinear does).

The QLinear ops requantize as onnxruntime does (and the kernels): ``rint(float32(sum + bias)
* rs) + y_zero_point``, saturated to y's type, where ``rs = float32(a_scale * b_scale) /
y_scale`` in float32. The sums themselves are exact, as ONNX defines them; onnxruntime's
are not everywhere (``hetlab.graph.onnx_exact``)."""

from __future__ import annotations

from typing import Any

import numpy as np

RANGE = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127)}


def _centered(x: np.ndarray, z: np.ndarray | None, axis_len: int, axis: int) -> np.ndarray:
    """``x - z`` in int64, ``z`` per tensor or one value per index of ``axis`` (of length
    ``axis_len``), any shape ONNX allows for it (``[M]``, ``[..., M, 1]``, ``[..., 1, N]``)."""
    x = x.astype(np.int64)
    if z is None:
        return x
    z = np.asarray(z).astype(np.int64)
    if z.size == 1:
        return x - z.reshape(())
    if z.ndim == 1:  # one value per index along ``axis``
        shape = [1] * x.ndim
        shape[axis] = axis_len
        return x - z.reshape(shape)
    return x - z  # the N-D layouts broadcast as they are


def matmul_integer(a, b, za=None, zb=None) -> np.ndarray:
    """MatMulInteger as int32: the exact sum of ``(a - za) * (b - zb)``."""
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    ac = _centered(a2, za, a2.shape[-2], a2.ndim - 2)
    bc = _centered(b2, zb, b2.shape[-1], b2.ndim - 1)
    y = np.matmul(ac, bc)
    if a.ndim == 1:
        y = y[..., 0, :]
    if b.ndim == 1:
        y = y[..., 0]
    return y.astype(np.int32)


def _pads(attrs: dict[str, Any], size, kernel, strides, dil) -> list[tuple[int, int]]:
    auto = attrs.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for n, k, s, d in zip(size, kernel, strides, dil, strict=True):
            total = max(0, (-(-n // s) - 1) * s + (k - 1) * d + 1 - n)
            small = total // 2
            out.append((small, total - small) if auto == "SAME_UPPER" else (total - small, small))
        return out
    if auto == "VALID":
        return [(0, 0)] * len(size)
    p = list(attrs.get("pads", [0] * 2 * len(size)))
    r = len(size)
    return [(p[i], p[i + r]) for i in range(r)]


def conv_integer(x, w, zx=None, zw=None, **attrs) -> np.ndarray:
    """ConvInteger (1-D or 2-D, grouped) as int32: the exact window sums of ``(x - zx) *
    (w - zw)``; a padded position is ``x = zx``, adding 0."""
    one_d = x.ndim == 3
    if one_d:
        x, w = x[:, :, None, :], w[:, :, None, :]
    xc = _centered(x, zx, x.shape[1], 1)
    wc = _centered(w, zw, w.shape[0], 0)
    kernel = list(wc.shape[2:])
    dil = list(attrs.get("dilations", [1] * (1 if one_d else 2)))
    strides = list(attrs.get("strides", [1] * (1 if one_d else 2)))
    if one_d:
        dil, strides = [1, *dil], [1, *strides]
        attrs = {
            **attrs,
            "pads": [0, *attrs.get("pads", [0, 0])[:1], 0, *attrs.get("pads", [0, 0])[1:]],
        }
    pads = _pads(attrs, x.shape[2:], kernel, strides, dil)
    xp = np.pad(xc, [(0, 0), (0, 0), *pads])
    n, c, hp, wp = xp.shape
    co, cig = wc.shape[0], wc.shape[1]
    g = c // cig
    oh = (hp - (kernel[0] - 1) * dil[0] - 1) // strides[0] + 1
    ow = (wp - (kernel[1] - 1) * dil[1] - 1) // strides[1] + 1
    y = np.zeros((n, co, oh, ow), np.int64)
    cog = co // g
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            h0, w0 = kh * dil[0], kw * dil[1]
            win = xp[
                :, :, h0 : h0 + strides[0] * oh : strides[0], w0 : w0 + strides[1] * ow : strides[1]
            ]
            for gi in range(g):
                xs = win[:, gi * cig : (gi + 1) * cig]
                ws = wc[gi * cog : (gi + 1) * cog, :, kh, kw]
                y[:, gi * cog : (gi + 1) * cog] += np.einsum("nchw,oc->nohw", xs, ws)
    return (y[:, :, 0, :] if one_d else y).astype(np.int32)


def requantize(acc: np.ndarray, xs, ws, ys, zy, axis: int, bias=None) -> np.ndarray:
    """onnxruntime's requantization of int32 sums, ``ws`` per tensor or along ``axis``."""
    ws = np.asarray(ws, np.float32).reshape(-1)
    rs = (np.float32(np.asarray(xs).reshape(-1)[0]) * ws) / np.float32(
        np.asarray(ys).reshape(-1)[0]
    )
    shape = [1] * acc.ndim
    if ws.size > 1:
        shape[axis] = ws.size
    total = acc.astype(np.int64)
    if bias is not None:  # one value per output channel
        along = [1] * acc.ndim
        along[axis] = -1
        total = total + np.asarray(bias, np.int64).reshape(along)
    scaled = np.rint(
        total.astype(np.int32).astype(np.float32) * rs.astype(np.float32).reshape(shape)
    )
    zy = np.asarray(zy)
    lo, hi = RANGE[zy.dtype]
    return np.clip(scaled + np.float32(zy.reshape(-1)[0]), lo, hi).astype(zy.dtype)


def qlinear_matmul(a, a_s, za, b, b_s, zb, ys, zy) -> np.ndarray:
    acc = matmul_integer(a, b, za, zb)
    return requantize(acc, a_s, b_s, ys, zy, acc.ndim - 1)


def qlinear_conv(x, xs, zx, w, ws, zw, ys, zy, bias=None, **attrs) -> np.ndarray:
    acc = conv_integer(x, w, zx, zw, **attrs)
    return requantize(acc, xs, ws, ys, zy, 1, bias)


def to_float(acc: np.ndarray, a_scale, b_scale, bias=None) -> np.ndarray:
    """onnxruntime's float32 epilogue of int32 sums, ``b_scale`` per tensor or per column."""
    scale = np.float32(np.asarray(a_scale).reshape(-1)[0]) * np.asarray(b_scale, np.float32)
    y = acc.astype(np.float32) * scale.reshape(-1)
    return y if bias is None else y + np.asarray(bias, np.float32)


def matmul_integer_to_float(a, b, a_scale, b_scale, za=None, zb=None, bias=None) -> np.ndarray:
    return to_float(matmul_integer(a, b, za, zb), a_scale, b_scale, bias)


def dynamic_quantize(x: np.ndarray) -> tuple[np.ndarray, np.float32, np.uint8]:
    """DynamicQuantizeLinear: uint8 over the range of ``x`` widened to include 0."""
    x = np.asarray(x, np.float32)
    lo, hi = min(np.float32(x.min()), np.float32(0)), max(np.float32(x.max()), np.float32(0))
    scale = np.float32(1) if hi == lo else np.float32(hi - lo) / np.float32(255)
    zp = np.rint(np.clip(np.float32(0) - lo / scale, 0, 255)).astype(np.uint8)
    q = np.clip(np.rint(x / scale) + np.float32(zp), 0, 255).astype(np.uint8)
    return q, np.float32(scale), zp


def dynamic_quantize_matmul(a, b, b_scale, zb=None, bias=None) -> np.ndarray:
    q, scale, zp = dynamic_quantize(a)
    return matmul_integer_to_float(q, b, scale, b_scale, zp, zb, bias)


def exact(op_type: str, ins: list[np.ndarray | None], attrs: dict[str, Any]) -> np.ndarray:
    """The exact value of one node, its inputs in ONNX order (None where absent)."""
    ins = ins + [None] * (9 - len(ins))
    if op_type == "MatMulInteger":
        return matmul_integer(*ins[:4])
    if op_type == "ConvInteger":
        return conv_integer(*ins[:4], **attrs)
    if op_type == "QLinearMatMul":
        return qlinear_matmul(*ins[:8])
    if op_type == "QLinearConv":
        return qlinear_conv(*ins[:9], **attrs)
    if op_type == "MatMulIntegerToFloat":
        a, b, a_s, b_s, za, zb, bias = ins[:7]
        return matmul_integer_to_float(a, b, a_s, b_s, za, zb, bias)
    if op_type == "DynamicQuantizeMatMul":
        return dynamic_quantize_matmul(*ins[:5])
    raise ValueError(op_type)
