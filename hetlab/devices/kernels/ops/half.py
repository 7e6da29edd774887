"""Cast to and from float16 (half.cl): float16 tensors are held as their 16 bits, converted
by integer code that needs no cl_khr_fp16 and compiles for CUDA alike, so every kernel
device runs them (a CPU device: ``half_cpu.cl``'s, 16 elements a work-item, to and from
float32). Other types go through float32 (int64 -> float -> half, as onnxruntime)."""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.ops.common import BYTES, cpu_grid1, grid1, i32, numel, type_options

HALF = "float16"


def half_cast(node: Any, ctx: Any, src: str, dst: str) -> None:
    """Launch the Cast ``src`` -> ``dst`` where one of them is float16."""
    n = numel(ctx.shape(node.outputs[0]))
    args = [ctx.tensor_or_const(node.inputs[0], src), ctx.t(node.outputs[0]), i32(n)]
    if ctx.device.cpu_kernels and "float32" in (src, dst):  # 16 elements a work-item
        name = "from_half_cpu" if src == HALF else "to_half_cpu"
        ctx.launch(node, ctx.kernel("half_cpu.cl", name), *cpu_grid1(n), args)
        return
    if src == HALF:
        opts = type_options(dst, "OT")
        opts += " -DOT_BOOL" if dst == "bool" else " -DOT_NARROW" if dst in BYTES else ""
        kernel = ctx.kernel("half.cl", "from_half", opts)
    else:
        kernel = ctx.kernel("half.cl", "to_half", type_options(src, "IT"))
    ctx.launch(node, kernel, *grid1(n), args)
