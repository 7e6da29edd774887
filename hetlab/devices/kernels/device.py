"""What the kernel library reads of a device beyond ``Device``: the interface every backend
that runs hetlab's kernels (OpenCL, CUDA) declares, so the builder and the ops read
declared attributes and never probe a device for what it might have."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from hetlab.devices.base import Device


class KernelDevice(Device):
    """A device that compiles and launches the kernel library's programs.

    - ``bounds_check``: programs built from now on check every global index
      (``bounds.py``); a debug build, slower.
    - ``gemm_splits``: every tiled GEMM split this many ways over K, whatever its shape
      (tests exercising the split-K path); None: chosen by shape (``ops/gemm.py``).
    - ``launches_from_graph``: the device's plans replay their launches from a captured
      graph, so a launch costs no host time of its own and GEMMs split more readily.
    - ``cpu_kernels``: the device is a CPU (PoCL): GEMMs and convolutions run on kernels
      shaped for a CPU compiler (``cl/gemm_cpu.cl``), without local memory or barriers.
    - ``step_launches``: recurrences run a launch or more per step even where one work-group
      could run the whole sequence (``ops/rnn_gpu.py``; tests of the step-by-step path).
    - ``force_library``: convolutions and matrix products take the library path
      (``ops/library.py``: im2col, a library GEMM, the epilogue) at any precision; on a
      device without a library GEMM, around its own float32 GEMM (tests of that path).
    - ``library_epilogue``: the library GEMM also applies a bias and a ReLU in the same
      call (``library.py``'s fused path), which saves the epilogue's launch.
    - ``view_align``: the device makes views (``view``), each starting at a multiple of
      this many bytes; None: it makes none, and Slice, Split and Gather copy (``views.py``).
    - ``dev.max_compute_units``: the device's compute units, which size the GEMM splits;
      ``dev.max_work_group_size`` and ``dev.local_mem_size`` (bytes), what one work-group
      may hold, which decide whether a recurrence runs as one launch (``ops/rnn_gpu.py``).

    ``precision`` (``Device``'s) is read when a unit is built: at a precision other than
    fp32, convolutions and matrix products run on ``library_gemm``'s kernels.
    """

    bounds_check: bool = False
    gemm_splits: int | None = None
    launches_from_graph: bool = False
    cpu_kernels: bool = False
    step_launches: bool = False
    force_library: bool = False
    library_epilogue: bool = False
    view_align: int | None = None
    dev: Any

    def view(self, buf: Any, offset: int, shape: tuple[int, ...], dtype: str) -> Any:
        """A buffer of ``shape`` over ``buf``'s elements from ``offset`` on, sharing its
        memory (a device with ``view_align``; ``offset`` in elements of ``dtype``)."""
        raise NotImplementedError(f"{self.name} makes no views")

    def library_gemm(self, spec: Any) -> Any:
        """A kernel-like object (``set_arg``, ``launch``) that runs the library GEMM of
        ``spec`` (``ops/library.GemmSpec``: its arguments are A's, B's and C's buffers; with
        ``spec.relu`` or ``spec.plane``, A, B, the bias plane and D), or None on a device
        without one. ``library_epilogue``: whether the library can take the epilogue."""
        return None

    @abstractmethod
    def kernel(self, filename: str, name: str, options: str = "") -> Any:
        """A fresh kernel of ``kernels/cl/<filename>`` built with ``options`` (compiled
        once per device), with its own argument slots (``set_arg``)."""
