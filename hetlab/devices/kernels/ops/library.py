"""Convolutions and matrix products through a library GEMM: cuBLAS on the tensor cores where a
device runs at a precision other than fp32 (``KernelDevice.library_gemm``).

A product C[b] = act(alpha * A[b] @ B[b] + beta * bias[b] + R[b]) (``gemm_launch``'s) becomes:

1. its operands, where the library cannot read them as they are: a convolution's im2col matrix
   (``tensor.cl``'s ``im2col``), a matrix of other strides, or one of another element type
   (``pack``), each rounded to the precision's operand type in the same pass; constant
   weights are rounded once, here, at build time;
2. the library GEMM (float32 accumulation and output), one strided-batched call per run of
   batch matrices whose offsets advance evenly;
3. the epilogue (bias, alpha and beta, residual, activation) on gemm.cl's ``gemm_splitk``
   with one split, from the GEMM's packed output into the destination (which may be a slice
   of a Concat's buffer). Where there is no epilogue, the GEMM writes the destination itself.

On a device without a library GEMM, ``force_library`` runs steps 1 and 3 around the device's
own float32 GEMM (``own``): the tests check the layouts, offsets and epilogue that way.

"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.common import i32
from hetlab.devices.kernels.ops.gemm_shape import conv_table
from hetlab.devices.kernels.ops.library_epilogue import in_call, no_activation
from hetlab.devices.precision import BF16, FP16, FP32, TF32
from hetlab.errors import HetlabError

# the element type of a precision's GEMM operands (bfloat16: its 16 bits, as uint16)
OPERAND = {FP32: "float32", TF32: "float32", FP16: "float16", BF16: "bfloat16"}
BUFFER_DTYPE = {"float32": "float32", "float16": "float16", "bfloat16": "uint16"}
OPTION = {"float32": "", "float16": "-DOUT_F16", "bfloat16": "-DOUT_BF16"}
ALIGN = 8  # elements between the rows of a packed operand: a multiple of 16 bytes


def aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


@dataclass(frozen=True)
class GemmSpec:
    """Row-major C[i] = A[i] @ B[i] for i < ``batch``, float32 accumulation and C. A is M x K
    (stored K x M where ``ta``) with row stride ``lda``, B is K x N (N x K where ``tb``) with
    ``ldb``; the i-th matrices start ``oa + i * sa``, ``ob + i * sb``, ``oc + i * sc``
    elements into their buffers. ``operand``: A's and B's element type (``OPERAND``);
    ``precision`` chooses how the library computes."""

    M: int
    N: int
    K: int
    ta: bool
    tb: bool
    lda: int
    ldb: int
    ldc: int
    batch: int
    oa: int
    sa: int
    ob: int
    sb: int
    oc: int
    sc: int
    operand: str
    precision: str
    relu: bool = False
    plane: bool = False


@dataclass
class Product:
    """``gemm_launch``'s product before its epilogue: operands, strides, per-batch offsets
    (A, B, C, bias), the implicit im2col of a convolution, and the constant operands' values
    (as laid out in their buffers) where known."""

    M: int
    N: int
    K: int
    A: Any
    sam: int
    sak: int
    B: Any
    sbk: int
    sbn: int
    C: Any
    ldc: int
    offs: Sequence[Sequence[int]]
    conv: Sequence[int] | None = None
    pre_relu: bool = False
    a_host: np.ndarray | None = None
    b_host: np.ndarray | None = None
    bias_host: np.ndarray | None = None


@dataclass
class Operand:
    """A GEMM operand as the library reads it: buffer, transposed or not, row stride, and
    each batch matrix's element offset."""

    buf: Any
    trans: bool
    ld: int
    offs: list[int]


def operand_type(precision: str) -> str:
    """The element type of the GEMM operands at ``precision``: fp16 and bf16 operands are
    rounded by our own pass (docs/decisions.md, "Tensor cores through cuBLAS")."""
    return OPERAND[precision]


def wanted(device: Any) -> bool:
    """Whether ``device``'s products go through the library path: a precision other than
    fp32, or ``force_library`` (tests)."""
    return device.precision != FP32 or bool(getattr(device, "force_library", False))


def library_launch(
    ctx: Any, node: Any, p: Product, epi: list[Any], resid: Any, own: Callable[..., None]
) -> None:
    """Add the launches of ``p`` with the epilogue ``epi`` (``gemm._epilogue``'s arguments)
    and ``resid`` (R, shift) to ``ctx``: see the module docstring. ``own(ctx, node, p)``
    adds the device's own float32 GEMM of a product without epilogue."""
    dev = ctx.device
    od = operand_type(dev.precision)
    nb, M, N = len(p.offs), p.M, p.N
    a = _operand_a(ctx, node, p, od)
    b = _operand_b(ctx, node, p, od)
    if _fused_launch(ctx, node, p, (a, b), od, in_call(p, epi, resid)):
        return
    plain = resid is None and not int(epi[5]) and float(epi[3]) == 1.0 and no_activation(epi[6:9])
    if plain:
        C, coffs, ldc = p.C, [int(o[2]) for o in p.offs], p.ldc
    else:
        C, coffs, ldc = ctx.scratch(nb * M * N), [i * M * N for i in range(nb)], N
    specs = [
        GemmSpec(M, N, p.K, a.trans, b.trans, a.ld, b.ld, ldc, n, *run, od, dev.precision)
        for n, run in _even_runs(a.offs, b.offs, coffs)
    ]
    kernels = [dev.library_gemm(s) for s in specs]
    if any(k is None for k in kernels):
        if od != "float32":
            raise HetlabError(f"{dev.name} has no library GEMM for {od} operands")
        own(ctx, node, _as_product(p, a, b, C, coffs, ldc))
    else:
        for k in kernels:
            ctx.launch(node, k, (1,), None, [a.buf, b.buf, C])
    if not plain:
        res_opt, res_args = ("", []) if resid is None else ("-DRESID", [resid[0], i32(resid[1])])
        offs_buf = ctx.upload(np.asarray(p.offs, dtype=np.int32).reshape(nb, 4), dtype="int32")
        k = ctx.kernel("gemm.cl", "gemm_splitk", res_opt)
        args = [i32(M), i32(N), i32(1), i32(nb), C, p.C, i32(p.ldc), offs_buf, *epi, *res_args]
        ctx.launch(node, k, (N, M, nb), (16, 16, 1), args)


def _fused_launch(
    ctx: Any, node: Any, p: Product, ab: tuple[Operand, Operand], od: str, fused: Any
) -> bool:
    """Add ``p`` as one library call with its epilogue ``fused`` (``in_call``'s) where the
    device's library takes it; whether it did."""
    dev, (a, b) = ctx.device, ab
    if fused is None or not getattr(dev, "library_epilogue", False):
        return False
    relu, plane = fused
    lay = (p.M, p.N, p.K, a.trans, b.trans, a.ld, b.ld, p.ldc, 1)
    offs = (a.offs[0], 0, b.offs[0], 0, int(p.offs[0][2]), 0)
    spec = GemmSpec(*lay, *offs, od, dev.precision, relu=relu, plane=plane is not None)
    k = dev.library_gemm(spec)
    if k is None:
        return False
    bias = p.C if plane is None else ctx.upload(plane, key=("plane", node.id))
    ctx.launch(node, k, (1,), None, [a.buf, b.buf, bias, p.C])
    return True


def _as_product(p: Product, a: Operand, b: Operand, C: Any, coffs: list[int], ldc: int) -> Product:
    """The plain product the library would compute, for the device's own GEMM."""
    sam, sak = (1, a.ld) if a.trans else (a.ld, 1)
    sbk, sbn = (1, b.ld) if b.trans else (b.ld, 1)
    offs = [(x, y, z, 0) for x, y, z in zip(a.offs, b.offs, coffs, strict=True)]
    return Product(p.M, p.N, p.K, a.buf, sam, sak, b.buf, sbk, sbn, C, ldc, offs)


def _readable(rows: int, cols: int, s_row: int, s_col: int) -> tuple[bool, int] | None:
    """(transposed, row stride) of a rows x cols matrix with these strides as a BLAS reads
    it (one of them 1, the other at least the matrix's width); None where it cannot."""
    if s_col == 1 and (s_row >= cols or rows == 1):
        return False, max(s_row, cols)
    if s_row == 1 and (s_col >= rows or cols == 1):
        return True, max(s_col, rows)
    return None


def _operand_a(ctx: Any, node: Any, p: Product, od: str) -> Operand:
    offs = [int(o[0]) for o in p.offs]
    form = _readable(p.M, p.K, p.sam, p.sak)
    if form is not None and od == "float32":
        return Operand(p.A, form[0], form[1], offs)
    if form is not None and p.a_host is not None:
        return Operand(rounded(ctx, node, "A", p.a_host, od), form[0], form[1], offs)
    buf = _pack(ctx, node, p.A, offs, (p.M, p.K, p.sam, p.sak), od, False)
    return Operand(buf, False, aligned(p.K), [i * p.M * aligned(p.K) for i in range(len(offs))])


def _operand_b(ctx: Any, node: Any, p: Product, od: str) -> Operand:
    offs = [int(o[1]) for o in p.offs]
    ld = aligned(p.N)
    dense = [i * p.K * ld for i in range(len(offs))]
    if p.conv is not None:
        return Operand(_im2col(ctx, node, p, offs, od), False, ld, dense)
    form = _readable(p.K, p.N, p.sbk, p.sbn)
    if form is not None and od == "float32" and not p.pre_relu:
        return Operand(p.B, form[0], form[1], offs)
    if form is not None and p.b_host is not None and not p.pre_relu:
        return Operand(rounded(ctx, node, "B", p.b_host, od), form[0], form[1], offs)
    buf = _pack(ctx, node, p.B, offs, (p.K, p.N, p.sbk, p.sbn), od, p.pre_relu)
    return Operand(buf, False, ld, dense)


def _pack(ctx: Any, node: Any, src: Any, offs: list[int], shape: tuple, od: str, relu: bool) -> Any:
    """``src``'s batch matrices (rows, cols, row stride, column stride) packed, their rows
    ``aligned``."""
    R, Cc, sr, sc = shape
    dst = ctx.scratch(len(offs) * R * aligned(Cc), BUFFER_DTYPE[od])
    opt = OPTION[od] + (" -DPRE_RELU" if relu else "")
    args = [src, dst, ctx.ints(offs), i32(R), i32(Cc), i32(sr), i32(sc), i32(aligned(Cc))]
    ctx.launch(
        node, ctx.kernel("tensor.cl", "pack", opt.strip()), (Cc, R, len(offs)), (64, 4, 1), args
    )
    return dst


def _im2col(ctx: Any, node: Any, p: Product, offs: list[int], od: str) -> Any:
    """The convolution's im2col matrices [batch][K][N], in the operand type, their rows
    ``aligned``."""
    ld = aligned(p.N)
    dst = ctx.scratch(len(offs) * p.K * ld, BUFFER_DTYPE[od])
    opt = OPTION[od] + (" -DPRE_RELU" if p.pre_relu else "")
    ktab = ctx.upload(conv_table(p.conv, p.K), dtype="int32")
    args = [p.B, dst, ctx.ints(offs), i32(p.K), i32(p.N), i32(ld), ctx.ints(list(p.conv)), ktab]
    ctx.launch(
        node,
        ctx.kernel("tensor.cl", "im2col", opt.strip()),
        (p.N, p.K, len(offs)),
        (64, 4, 1),
        args,
    )
    return dst


def rounded(ctx: Any, node: Any, which: str, values: np.ndarray, od: str) -> Any:
    """A constant operand's values rounded to ``od`` once, uploaded."""
    key = ("operand", node.id, which, od)
    if od == "float16":
        return ctx.upload(np.asarray(values, np.float32).astype(np.float16), key, "float16")
    return ctx.upload(bf16_bits(values), key, "uint16")


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """The bfloat16 nearest each value (ties to even) as its 16 bits, as ``tensor.cl``."""
    u = np.ascontiguousarray(values, np.float32).view(np.uint32).astype(np.uint64)
    out = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), out)


def _even_runs(*offsets: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    """The batch split into runs whose offsets (one list per matrix) advance by a constant
    stride: (count, (start, stride) per list flattened), one library call each."""
    n, runs, i = len(offsets[0]), [], 0
    while i < n:
        j = i + 1
        if j < n:
            steps = [o[j] - o[i] for o in offsets]
            while j + 1 < n and all(
                o[j + 1] - o[j] == s for o, s in zip(offsets, steps, strict=True)
            ):
                j += 1
            j += 1
        else:
            steps = [0] * len(offsets)
        flat = tuple(v for o, s in zip(offsets, steps, strict=True) for v in (o[i], s))
        runs.append((j - i, flat))
        i = j
    return runs
