"""Small helpers shared by the op builders: strides, nd-meta blocks, attributes, constants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.graph.ir import Node, OpGraph

MAXD = 6
LOCAL = 256
CPU_ELEMENTS, CPU_GROUP = 16, 64  # cpu_grid1
CPU_ROWS = 8  # cpu_rows
INTS = ("int32", "int64")
NUMERIC = ("float32", *INTS)
ANY = (*NUMERIC, "bool")
BYTES = ("int8", "uint8")
# what the ops that move, gather or cast values take: every kernel dtype, the 1-byte
# integers of quantized models and float16 (no arithmetic on those here: 16 bits moved)
MOVED = (*ANY, *BYTES, "float16")
# the OpenCL C type of each dtype the kernels take (eltwise.cl's DT, IT, OT; I8 is a signed
# char in OpenCL C and in the CUDA translation alike, where plain char's sign is the host's)
CTYPE = {
    "float32": "float",
    "int32": "int",
    "int64": "long",
    "bool": "uchar",
    "int8": "I8",
    "uint8": "uchar",
    "float16": "ushort",  # its 16 bits, moved as they are
}


def type_options(dtype: str, macro: str = "DT") -> str:
    """The build option that compiles eltwise.cl's typed kernels for ``dtype`` (none for
    float32, the default: float programs stay the ones every float op shares)."""
    if macro == "DT" and dtype == "float32":
        return ""
    if macro == "DT" and dtype in INTS:
        return f"-DDT={CTYPE[dtype]} -DDT_INT"
    return f"-D{macro}={CTYPE[dtype]}"


def scalar(dtype: str, v: Any) -> np.generic:
    """``v`` as a kernel argument of ``dtype``'s C type (float16: its 16 bits, a ushort)."""
    if dtype == "float16":
        return np.float16(v).view(np.uint16)
    return np.dtype(dtype).type(v)


def strides(shape: Sequence[int]) -> list[int]:
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= int(d)
    return out[::-1]


def numel(shape: Sequence[int]) -> int:
    return int(np.prod([int(d) for d in shape], dtype=np.int64))


def nd_meta(
    shape: Sequence[int], sa: Sequence[int], sb: Sequence[int], offa: int = 0, offb: int = 0
) -> list[int]:
    """The int block [ndim, shape[6], sa[6], sb[6], offa, offb] of eltwise.cl, with size-1
    dims dropped and mergeable neighbours merged (so same-shape operands become 1-D)."""
    dims = [(int(n), int(a), int(b)) for n, a, b in zip(shape, sa, sb, strict=False) if int(n) != 1]
    merged: list[tuple[int, int, int]] = []
    for n, a, b in dims:
        if merged:
            pn, pa, pb = merged[-1]
            if pa == a * n and pb == b * n:
                merged[-1] = (pn * n, a, b)
                continue
        merged.append((n, a, b))
    if len(merged) > MAXD:
        raise ValueError(f"{len(merged)} dims after merging > {MAXD}")
    pad = [(1, 0, 0)] * (MAXD - len(merged)) + merged
    return (
        [len(merged)]
        + [p[0] for p in pad]
        + [p[1] for p in pad]
        + [p[2] for p in pad]
        + [int(offa), int(offb)]
    )


def bcast_strides(in_shape: Sequence[int], out_shape: Sequence[int]) -> list[int]:
    """Element strides of a row-major ``in_shape`` operand broadcast to ``out_shape``."""
    r = len(out_shape)
    shp = [1] * (r - len(in_shape)) + [int(d) for d in in_shape]
    st = strides(shp)
    return [0 if shp[i] == 1 and int(out_shape[i]) != 1 else st[i] for i in range(r)]


def attr(node: Node, key: str, default: Any = None) -> Any:
    v = node.attrs.get(key, default)
    return v.decode() if isinstance(v, bytes) else v


def const_value(graph: OpGraph, name: str) -> np.ndarray | None:
    """A constant input's value (None when not constant or omitted)."""
    if not name or name not in graph.consts:
        return None
    return const_weights(graph).get(name)


def const_weights(graph: OpGraph) -> dict[str, np.ndarray]:
    """Constant tensors of ``graph`` (cached on the graph object)."""
    w = getattr(graph, "_hetlab_weights", None)
    if w is None:
        if not graph.consts:
            w = {}
        else:
            # lazy: onnx is slow to import
            from hetlab.graph import onnx_io

            w = onnx_io.weights(graph)
        graph._hetlab_weights = w  # type: ignore[attr-defined]
    return w


def is_const(graph: OpGraph, name: str) -> bool:
    return bool(name) and name in graph.consts


def i32(v: Any) -> np.int32:
    return np.int32(v)


def f32(v: Any) -> np.float32:
    return np.float32(v)


def grid1(n: int) -> tuple[tuple[int], tuple[int]]:
    return (n,), (LOCAL,)


def cpu_grid1(n: int) -> tuple[tuple[int], tuple[int]]:
    """(global size, work-group size) of a CPU device's element-wise kernel over ``n``
    elements (eltwise_cpu.cl, quant_cpu.cl): CPU_ELEMENTS a work-item, CPU_GROUP items a
    group (a PoCL work-group is one thread's loop, and costly to start)."""
    return (-(-n // CPU_ELEMENTS),), (CPU_GROUP,)


def cpu_rows(n: int) -> tuple[tuple[int], tuple[int]]:
    """(global size, work-group size) of a CPU device's kernel that runs a work-item per
    row of ``n`` (move_cpu.cl): CPU_ROWS rows a group, or every row in one group when fewer."""
    g = max(1, min(CPU_ROWS, n))
    return (-(-n // g) * g,), (g,)


def conv_pads(
    node: Node,
    in_sp: Sequence[int],
    out_sp: Sequence[int],
    k: Sequence[int],
    s: Sequence[int],
    d: Sequence[int],
) -> tuple[list[int], list[int]]:
    """Begin and end pads of a Conv/Pool from ``auto_pad`` or ``pads``."""
    r = len(in_sp)
    auto = attr(node, "auto_pad", "NOTSET") or "NOTSET"
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(r):
            total = max(0, (out_sp[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in_sp[i])
            b = total // 2 if auto == "SAME_UPPER" else total - total // 2
            begin.append(b)
            end.append(total - b)
        return begin, end
    if auto == "VALID":
        return [0] * r, [0] * r
    pads = list(attr(node, "pads", [0] * (2 * r)))
    return [int(p) for p in pads[:r]], [int(p) for p in pads[r:]]
