"""The integer products' launches on a CPU device (PoCL): ``quant_cpu.cl``, gemm_cpu.cl's
shape over integers (an MB x 16 block per work-item, all of K, no local memory or barrier),
for every op that ``integer.py`` and the contrib ops launch on ``quant.cl`` elsewhere. The
sums are the same int32 sums, so the results are bit for bit those of ``quant.cl``. Why a
CPU gets kernels of its own: docs/decisions.md#gemm-on-a-cpu-device."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops import gemm_pack
from hetlab.devices.kernels.ops.common import i32
from hetlab.devices.kernels.ops.gemm_pack import pack, pack_b
from hetlab.devices.kernels.ops.gemm_shape import COLUMNS, CPU_ROWS, conv_table, cpu_grid
from hetlab.devices.kernels.ops.library import Product
from hetlab.graph.ir import Node


def cpu_gemm(
    ctx: Any,
    node: Node,
    mnk: tuple[int, int, int],
    args: list[Any],
    offs: list[int],
    opts: str,
    b_host: np.ndarray | None = None,
) -> None:
    """quant_cpu.cl's ``matmul_integer_cpu`` over the batches of ``offs`` ((a, b, c)
    offsets each); ``args`` as quant.cl's ``matmul_integer`` takes them. A constant B
    (``b_host``: its values) is packed as [column blocks][K][16] (gemm_pack.py)."""
    M, N = mnk[0], mnk[1]
    if b_host is not None:
        flat = np.asarray(b_host).reshape(-1)
        packed, starts = pack_b(flat, offs[1::3], mnk, COLUMNS)
        offs = [v for t in range(len(starts)) for v in (offs[3 * t], starts[t], offs[3 * t + 2])]
        args = [args[0], ctx.upload(packed, dtype=str(flat.dtype)), *args[2:]]
        args[10] = ctx.upload(np.asarray(offs, np.int32), dtype="int32")
        opts += " -DB_PACKED"
    k = ctx.kernel("quant_cpu.cl", "matmul_integer_cpu", f"{opts} -DMB={min(M, CPU_ROWS)}")
    ctx.launch(node, k, *cpu_grid(M, N, len(offs) // 3), args)


def cpu_conv(
    ctx: Any,
    node: Node,
    p: list[int],
    operands: list[Any],
    extra: list[Any],
    opts: str,
    weights: tuple[str, str],
) -> None:
    """quant_cpu.cl's ``conv_integer_cpu``: ``p`` is quant.cl's ``conv_integer`` geometry
    ([H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, Cin, Cout, G]) for a batch of
    ``ctx.shape(x)[0]`` images; ``operands`` x, w and their zero points (as quant.cl's
    kernels take them), ``weights`` the names of w and its zero point ("" if none)."""
    H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, Cin, Cout, G = p
    M, K, rows = Cout // G, Cin // G * KH * KW, min(Cout // G, CPU_ROWS)
    wf = _float_weights(ctx, *weights)
    if wf is not None:  # constant weights less their zero points, as floats, packed
        flat = wf.reshape(-1)
        a = pack(
            flat,
            [g * M * K for g in range(G)],
            Product(M, 0, K, None, K, 1, None, 0, 0, None, 0, []),
            rows,
            True,
        )[0]
        operands = [operands[0], ctx.upload(a), *operands[2:5], i32(0)]
        opts += " -DW_FLOAT -DA_PACKED"
    ktab = conv_table((H, W, OW, KH, KW, SH, SW, PH, PW, DH, DW), K)
    ktab_buf = ctx.upload(ktab, key=("int_ktab", node.id), dtype="int32")
    batch = ctx.shape(node.inputs[0])[0] * G
    blocks = OH * -(-OW // COLUMNS)  # 16 outputs of one output row a block
    size = batch * blocks * K * COLUMNS
    if M * OH * OW * K * batch >= gemm_pack.PACK_LEAST and size <= gemm_pack.PACK_MOST:
        P = ctx.scratch(size)  # the im2col less the zero point, once per column block
        pk = ctx.kernel("quant_cpu.cl", "pack_x", opts)
        grid = (blocks, -(-K // 32), batch), (1, 4 if K > 64 else 1, 1)
        ctx.launch(node, pk, *grid, [operands[0], *operands[2:4], P, ctx.ints(p), ktab_buf])
        operands = [P, *operands[1:]]
        opts += " -DB_PACKED"
    k = ctx.kernel("quant_cpu.cl", "conv_integer_cpu", f"{opts} -DMB={rows}")
    args = [*operands, ctx.t(node.outputs[0]), ctx.ints(p), ktab_buf, *extra]
    ctx.launch(node, k, *cpu_grid(M, blocks * COLUMNS, batch), args)


def _float_weights(ctx: Any, w: str, zw: str) -> np.ndarray | None:
    """``w - zw`` (zw per tensor or per output channel) as float32 where both are
    constants, else None; the values are integers of at most 255 in magnitude, exact."""
    wv, zv = ctx.const(w), ctx.const(zw) if zw else np.zeros(1)
    if wv is None or zv is None:
        return None
    zv = np.asarray(zv, np.float32).reshape(-1, *([1] * (wv.ndim - 1)))
    return np.asarray(wv, np.float32) - zv
