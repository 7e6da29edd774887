"""Cast to and from float16 (half.cl): float16 tensors are held as their 16 bits, converted
by integer code that needs no cl_khr_fp16 and compiles for CUDA alike, so every kernel
device runs them. Other types go through float32 (int64 -> float -> half, as onnxruntime)."""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.ops.common import BYTES, grid1, i32, numel, type_options

HALF = "float16"


def half_cast(node: Any, ctx: Any, src: str, dst: str) -> None:
    """Launch the Cast ``src`` -> ``dst`` where one of them is float16."""
    n = numel(ctx.shape(node.outputs[0]))
    if src == HALF:
        opts = type_options(dst, "OT")
        opts += " -DOT_BOOL" if dst == "bool" else " -DOT_NARROW" if dst in BYTES else ""
        kernel = ctx.kernel("half.cl", "from_half", opts)
    else:
        kernel = ctx.kernel("half.cl", "to_half", type_options(src, "IT"))
    args = [ctx.tensor_or_const(node.inputs[0], src), ctx.t(node.outputs[0]), i32(n)]
    ctx.launch(node, kernel, *grid1(n), args)
