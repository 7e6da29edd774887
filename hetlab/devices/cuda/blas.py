"""Matrix products on the tensor cores through cuBLAS (CuPy's binding, ``cublasGemmEx``).

``BlasGemm`` is a library GEMM as the kernel library's builder sees a kernel (``set_arg``,
``launch``): its arguments are the A, B and C buffers of a ``GemmSpec``
(``kernels/ops/library.py``), and ``launch`` enqueues the product on the current CuPy stream,
so the device's runs, its profiler's timer and the plan's CUDA graph capture it as they
capture a kernel. Why a library and not hetlab's own tensor-core kernels:
docs/decisions.md#tensor-cores-through-cublas.

cuBLAS is column-major: row-major C = A @ B is column-major C^T = B^T @ A^T, so B is passed
first and the dimensions swap (m = N, n = M). Operands are float32 (fp32, tf32), float16 or
bfloat16; C is float32 and the accumulation float32: ``CUBLAS_COMPUTE_32F``, or
``CUBLAS_COMPUTE_32F_FAST_TF32`` at tf32, where cuBLAS rounds the float32 operands to tf32.

``Blas`` keeps one cuBLAS handle per stream, made before a capture begins (``ready``): a
handle's workspace then belongs to one stream, so products on concurrent streams of one
graph never share one.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from hetlab.devices.cuda.runtime import cublas_library, cublas_module, cublaslt_library

# cudaDataType_t: CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF
DATA_TYPE = {"float32": 0, "float16": 2, "bfloat16": 14}
ITEM_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
# cublasComputeType_t by (precision, operand type): CUBLAS_COMPUTE_32F (68) on operands of
# the precision's own type; on float32 operands at tf32, _FAST_TF32 (77) lets cuBLAS round
# them as it loads them
COMPUTE = {
    ("fp32", "float32"): 68,
    ("tf32", "float32"): 77,
    ("fp16", "float16"): 68,
    ("bf16", "bfloat16"): 68,
}
OP_N, OP_T = 0, 1
WORKSPACE_BYTES = 32 << 20  # a handle's own workspace: cuBLAS allocates none in a capture
ALGO_DEFAULT = -1  # CUBLAS_GEMM_DEFAULT: cuBLAS's heuristics pick the tiles


class Blas:
    """The cuBLAS handles of one GPU, one per CuPy stream (by its pointer)."""

    def __init__(self, cp: Any, index: int) -> None:
        self.cp, self.index = cp, index
        self._handles: dict[int, int] = {}
        self._workspaces: dict[int, Any] = {}
        self._lock = threading.Lock()
        self.lib = cublas_library()
        self._lt: tuple[Any, ctypes.c_void_p] | None = None

    def handle(self, stream_ptr: int) -> int:
        """The handle that enqueues on stream ``stream_ptr``, made on first use."""
        with self._lock:
            h = self._handles.get(stream_ptr)
            if h is None:
                cublas = cublas_module()
                with self.cp.cuda.Device(self.index):
                    h = cublas.create()
                    cublas.setStream(h, stream_ptr)
                    ws = self.cp.empty(WORKSPACE_BYTES, dtype=self.cp.uint8)
                    self.lib.cublasSetWorkspace_v2(
                        _p(h), _p(ws.data.ptr), ctypes.c_size_t(WORKSPACE_BYTES)
                    )
                    self._workspaces[stream_ptr] = ws
                self._handles[stream_ptr] = h
            return h

    def workspace(self, stream_ptr: int) -> int:
        """The device pointer of the workspace of stream ``stream_ptr``'s handle."""
        self.handle(stream_ptr)
        return int(self._workspaces[stream_ptr].data.ptr)

    def lt(self) -> tuple[Any, ctypes.c_void_p]:
        """cuBLASLt's library and this GPU's cuBLASLt handle (one for every stream: its
        calls name their stream and workspace), made on first use."""
        with self._lock:
            if self._lt is None:
                lib, handle = cublaslt_library(), ctypes.c_void_p()
                with self.cp.cuda.Device(self.index):
                    if lib.cublasLtCreate(ctypes.byref(handle)) != 0:
                        raise RuntimeError("cublasLtCreate failed")
                self._lt = (lib, handle)
            return self._lt

    def ready(self, streams: Iterable[Any]) -> None:
        """Make the handles of ``streams`` now, before a capture on them begins: making
        one inside a capture would allocate there."""
        for s in streams:
            self.handle(int(s.ptr))

    def close(self) -> None:
        with self._lock:
            if self._handles:
                cublas = cublas_module()
                for h in self._handles.values():
                    cublas.destroy(h)
            self._handles.clear()
            self._workspaces.clear()
            if self._lt is not None:
                self._lt[0].cublasLtDestroy(self._lt[1])
                self._lt = None


class LibraryCall:
    """A kernel-like object whose launch is a cuBLAS or cuBLASLt call on the handle and
    workspace of its stream (``Blas``)."""


class BlasGemm(LibraryCall):
    """One library GEMM (a ``GemmSpec``) with argument slots 0, 1, 2: A, B, C."""

    name = "cublasGemmEx"

    def __init__(self, blas: Blas, spec: Any) -> None:
        self.blas, self.spec = blas, spec
        self.args: list[Any] = [None, None, None]
        # host scalars (CUBLAS_POINTER_MODE_HOST): read when the call is enqueued or captured
        self.alpha = np.ones(1, dtype=np.float32)
        self.beta = np.zeros(1, dtype=np.float32)

    def set_arg(self, i: int, value: Any) -> None:
        self.args[i] = value

    def launch(self, gsize: Any = None, lsize: Any = None) -> None:
        """Enqueue the product on the current CuPy stream (cuBLAS's C entry points: CuPy's
        binding refuses calls during a capture)."""
        s, lib = self.spec, self.blas.lib
        h = self.blas.handle(int(self.blas.cp.cuda.get_current_stream().ptr))
        dt, item = DATA_TYPE[s.operand], ITEM_BYTES[s.operand]
        a = _p(int(self.args[0].data.ptr) + s.oa * item)
        b = _p(int(self.args[1].data.ptr) + s.ob * item)
        c = _p(int(self.args[2].data.ptr) + s.oc * 4)
        op_a, op_b = (OP_T if s.ta else OP_N), (OP_T if s.tb else OP_N)
        alpha, beta = _p(self.alpha.ctypes.data), _p(self.beta.ctypes.data)
        f32, compute = DATA_TYPE["float32"], COMPUTE[(s.precision, s.operand)]
        head = (_p(h), op_b, op_a, s.N, s.M, s.K, alpha)
        tail = (f32, s.ldc)
        if s.batch == 1:
            args = (*head, b, dt, s.ldb, a, dt, s.lda, beta, c, *tail, compute, ALGO_DEFAULT)
            status = lib.cublasGemmEx(*args)
        else:
            ll = ctypes.c_longlong
            b_, a_ = (b, dt, s.ldb, ll(s.sb)), (a, dt, s.lda, ll(s.sa))
            args = (*head, *b_, *a_, beta, c, *tail, ll(s.sc), s.batch, compute, ALGO_DEFAULT)
            status = lib.cublasGemmStridedBatchedEx(*args)
        if status != 0:
            raise RuntimeError(f"cuBLAS GEMM {s.M}x{s.N}x{s.K} failed with status {status}")


def _p(ptr: int) -> ctypes.c_void_p:
    return ctypes.c_void_p(int(ptr))


def uses_blas(launches: Iterable[Any]) -> bool:
    """Whether any of ``launches`` is a cuBLAS product (its stream needs a handle before a
    capture on it begins)."""
    return any(isinstance(L.kernel, LibraryCall) for L in launches)


def tensor_precisions(major: int) -> tuple[str, ...]:
    """The precisions of a GPU of compute capability ``major``.x: fp32 everywhere; fp16 on
    the tensor cores from 7.0 (Volta), tf32 and bf16 from 8.0 (Ampere)."""
    if major >= 8:
        return ("fp32", "tf32", "fp16", "bf16")
    return ("fp32", "fp16") if major >= 7 else ("fp32",)


def timer_stream(dev: Any) -> Any:
    """``dev``'s one stream for timing captured units with cuBLAS products, its handle made
    now: a fresh stream per timed unit would keep a handle, and its workspace, per unit."""
    stream = dev.__dict__.get("_blas_timer_stream")
    if stream is None:
        stream = dev.cp.cuda.Stream(non_blocking=True)
        dev._blas_timer_stream = stream
    dev.blas.ready([stream])
    return stream
