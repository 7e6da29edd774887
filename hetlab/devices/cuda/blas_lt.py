"""A matrix product and its epilogue in one library call: cuBLASLt's ``cublasLtMatmul``.

``LtGemm`` computes D = act(alpha * A @ B + P) for a ``GemmSpec`` (``kernels/ops/library.py``)
of one batch matrix whose ``relu`` or ``plane`` is set: P is a constant float32 plane of
D's shape (the bias broadcast over D, built once), act none or ReLU (cuBLASLt's
``EPILOGUE_DEFAULT`` or ``EPILOGUE_RELU``). Without it each product at a reduced precision
is two launches, the GEMM and gemm.cl's epilogue, and its output makes a round trip through
memory in between (docs/decisions.md#the-epilogue-in-the-librarys-call).

Why a plane and not cuBLASLt's bias vector: hetlab's products are row-major, cuBLAS's
column-major (C = A @ B is C^T = B^T @ A^T), and cuBLASLt broadcasts a bias vector along
D's rows, which are a convolution's pixels, not its channels. A plane is read once per
product, as the epilogue launch read the product.

Arguments, as for a kernel (``set_arg``): 0 A, 1 B, 2 the plane (ignored where there is
none), 3 D. Each call uses the workspace of its stream's cuBLAS handle (``Blas``), and
chooses cuBLASLt's algorithm for the pointers' alignment on first use (host only: allowed
during a capture).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from hetlab.devices.cuda.blas import (
    COMPUTE,
    DATA_TYPE,
    ITEM_BYTES,
    OP_N,
    OP_T,
    WORKSPACE_BYTES,
    LibraryCall,
)

# cublasLtMatmulDescAttributes_t, cublasLtEpilogue_t, cublasLtMatmulPreferenceAttributes_t
TRANSA, TRANSB, EPILOGUE = 3, 4, 7
EPILOGUE_DEFAULT, EPILOGUE_RELU = 1, 2
PREF_MAX_WORKSPACE_BYTES, PREF_MIN_ALIGNMENT_A = 1, 5  # A, B, C, D: 5, 6, 7, 8
BEST_ALIGNMENT = 256


class _Heuristic(ctypes.Structure):
    """cublasLtMatmulHeuristicResult_t."""

    _fields_ = [
        ("algo", ctypes.c_uint64 * 8),
        ("workspace_size", ctypes.c_size_t),
        ("state", ctypes.c_int),
        ("waves_count", ctypes.c_float),
        ("reserved", ctypes.c_int * 4),
    ]


class LtGemm(LibraryCall):
    """One product with its epilogue in the same cuBLASLt call (see the module docstring)."""

    name = "cublasLtMatmul"

    def __init__(self, blas: Any, spec: Any) -> None:
        self.blas, self.spec = blas, spec
        self.lib, self.handle = blas.lt()
        self.args: list[Any] = [None, None, None, None]
        self.alpha = np.ones(1, dtype=np.float32)
        self.beta = np.array([1.0 if spec.plane else 0.0], dtype=np.float32)
        self.desc = self._describe()
        self.layouts = self._layouts()
        self.algos: dict[tuple[int, ...], _Heuristic] = {}
        if self._heuristic((BEST_ALIGNMENT,) * 4) is None:
            raise RuntimeError(f"cuBLASLt has no algorithm for {spec}")

    def set_arg(self, i: int, value: Any) -> None:
        self.args[i] = value

    def launch(self, gsize: Any = None, lsize: Any = None) -> None:
        """Enqueue the product on the current CuPy stream."""
        s = self.spec
        stream = int(self.blas.cp.cuda.get_current_stream().ptr)
        workspace = self.blas.workspace(stream)
        item = ITEM_BYTES[s.operand]
        a = int(self.args[0].data.ptr) + s.oa * item
        b = int(self.args[1].data.ptr) + s.ob * item
        d = int(self.args[3].data.ptr) + s.oc * 4
        c = int(self.args[2].data.ptr) if s.plane else d
        found = self._algo((b, a, c, d))  # cuBLAS's A is our B (column-major)
        la, lb, lc, ld = self.layouts
        status = self.lib.cublasLtMatmul(
            self.handle,
            self.desc,
            _p(self.alpha.ctypes.data),
            _p(b),
            la,
            _p(a),
            lb,
            _p(self.beta.ctypes.data),
            _p(c),
            lc,
            _p(d),
            ld,
            ctypes.byref(found.algo),
            _p(workspace),
            ctypes.c_size_t(WORKSPACE_BYTES),
            _p(stream),
        )
        if status != 0:
            raise RuntimeError(f"cuBLASLt GEMM {s.M}x{s.N}x{s.K} failed with status {status}")

    def _describe(self) -> ctypes.c_void_p:
        s, lib = self.spec, self.lib
        desc = ctypes.c_void_p()
        compute = COMPUTE[(s.precision, s.operand)]
        _ok(lib.cublasLtMatmulDescCreate(ctypes.byref(desc), compute, DATA_TYPE["float32"]))
        epilogue = EPILOGUE_RELU if s.relu else EPILOGUE_DEFAULT
        for attr, value in (
            (TRANSA, ctypes.c_int32(OP_T if s.tb else OP_N)),
            (TRANSB, ctypes.c_int32(OP_T if s.ta else OP_N)),
            (EPILOGUE, ctypes.c_uint32(epilogue)),
        ):
            _ok(lib.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(value), _size(value)))
        return desc

    def _layouts(self) -> tuple[ctypes.c_void_p, ...]:
        """cuBLAS's A (our B), B (our A), C (the plane, or D) and D, column-major."""
        s, dt, f32 = self.spec, DATA_TYPE[self.spec.operand], DATA_TYPE["float32"]
        a = self._layout(dt, *((s.K, s.N) if s.tb else (s.N, s.K)), s.ldb)
        b = self._layout(dt, *((s.M, s.K) if s.ta else (s.K, s.M)), s.lda)
        d = self._layout(f32, s.N, s.M, s.ldc)
        c = self._layout(f32, s.N, s.M, s.N) if s.plane else d
        return a, b, c, d

    def _layout(self, dtype: int, rows: int, cols: int, ld: int) -> ctypes.c_void_p:
        out = ctypes.c_void_p()
        _ok(
            self.lib.cublasLtMatrixLayoutCreate(
                ctypes.byref(out),
                dtype,
                ctypes.c_uint64(rows),
                ctypes.c_uint64(cols),
                ctypes.c_int64(ld),
            )
        )
        return out

    def _algo(self, pointers: tuple[int, ...]) -> _Heuristic:
        """The algorithm for pointers of this alignment, else for any alignment."""
        found = self._heuristic(tuple(_alignment(p) for p in pointers))
        found = found or self._heuristic((4, 4, 4, 4))
        if found is None:
            raise RuntimeError(f"cuBLASLt has no algorithm for {self.spec} at these pointers")
        return found

    def _heuristic(self, align: tuple[int, ...]) -> _Heuristic | None:
        if align in self.algos:
            return self.algos[align]
        lib, pref = self.lib, ctypes.c_void_p()
        _ok(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)))
        size = ctypes.c_uint64(WORKSPACE_BYTES)
        _ok(
            lib.cublasLtMatmulPreferenceSetAttribute(
                pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(size), _size(size)
            )
        )
        for i, a in enumerate(align):
            v = ctypes.c_uint32(a)
            _ok(
                lib.cublasLtMatmulPreferenceSetAttribute(
                    pref, PREF_MIN_ALIGNMENT_A + i, ctypes.byref(v), _size(v)
                )
            )
        result, count = _Heuristic(), ctypes.c_int(0)
        status = lib.cublasLtMatmulAlgoGetHeuristic(
            self.handle,
            self.desc,
            *self.layouts,
            pref,
            1,
            ctypes.byref(result),
            ctypes.byref(count),
        )
        lib.cublasLtMatmulPreferenceDestroy(pref)
        found = result if status == 0 and count.value > 0 and result.state == 0 else None
        self.algos[align] = found
        return found


def _alignment(ptr: int) -> int:
    """The largest power of two up to 256 that divides ``ptr``."""
    return min(ptr & -ptr, BEST_ALIGNMENT) if ptr else BEST_ALIGNMENT


def _ok(status: int) -> None:
    if status != 0:
        raise RuntimeError(f"cuBLASLt call failed with status {status}")


def _size(value: Any) -> ctypes.c_size_t:
    return ctypes.c_size_t(ctypes.sizeof(value))


def _p(ptr: int) -> ctypes.c_void_p:
    return ctypes.c_void_p(int(ptr))
