"""CuPy and the NVIDIA driver: importing CuPy (and its cuBLAS binding) with one clear error, and saying why no CUDA
device is listed where the machine has an NVIDIA driver."""

from __future__ import annotations

import ctypes
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hetlab.errors import HetlabError


def cupy_module() -> Any:
    """CuPy, or a HetlabError that says how to get it."""
    try:
        # lazy: CuPy is optional (the ``cuda`` extra) and slow to import
        import cupy
    except (ImportError, OSError) as e:
        raise HetlabError(
            f"CuPy is not importable ({e}); install hetlab[cuda] to use CUDA"
        ) from None
    return cupy


def kernel_limits(props: dict[str, Any]) -> SimpleNamespace:
    """What the op builders read of an OpenCL device's ``dev`` (``KernelDevice``), from a CUDA
    device's properties: its multiprocessors, threads per block and shared memory per block."""
    return SimpleNamespace(
        max_compute_units=int(props["multiProcessorCount"]),
        max_work_group_size=int(props["maxThreadsPerBlock"]),
        local_mem_size=int(props["sharedMemPerBlock"]),
    )


def cublas_module() -> Any:
    """CuPy's cuBLAS binding (``cupy_backends.cuda.libs.cublas``), or a HetlabError."""
    cupy_module()
    try:
        # lazy: part of CuPy, optional as CuPy is
        from cupy_backends.cuda.libs import cublas
    except (ImportError, OSError) as e:
        raise HetlabError(f"cuBLAS is not loadable through CuPy ({e})") from None
    return cublas


def cublas_library() -> Any:
    """The cuBLAS shared library CuPy's binding loaded, through ctypes: CuPy's binding
    refuses every cuBLAS call while a stream captures, which cuBLAS itself supports."""
    return _loaded("libcublas.so")


def cublaslt_library() -> Any:
    """cuBLASLt, which cuBLAS loads beside itself (``blas_lt.py``), through ctypes."""
    return _loaded("libcublasLt.so")


def _loaded(name: str) -> Any:
    """The shared library ``name`` (a file name's start) that CuPy's cuBLAS import mapped."""
    cublas_module()  # its import loads cuBLAS and cuBLASLt
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1] if line.split() else ""
        if Path(path).name.startswith(name):
            return ctypes.CDLL(path)
    raise HetlabError(f"{name} is loaded by CuPy but its file was not found")


CUDA_EXTRAS = {12: "cuda12", 13: "cuda13"}  # CUDA major version -> hetlab's extra


def why_no_cuda() -> str | None:
    """Why no CUDA device is listed although this machine has an NVIDIA driver (CuPy
    missing, or built for another CUDA than the driver's), with the extra to install; None
    where CUDA devices are found or no NVIDIA driver is here."""
    driver = _driver_cuda_major()
    if driver is None:
        return None
    extra = CUDA_EXTRAS.get(driver, f"cuda{driver}")
    hint = f"pip install 'hetlab[{extra}]' (the driver runs CUDA {driver})"
    try:
        import cupy  # lazy: optional, slow to import
    except (ImportError, OSError) as e:
        return f"no CUDA devices: CuPy is not importable ({str(e)[:120]}); {hint}"
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return None
        return "no CUDA devices: CuPy finds no GPU"
    except Exception as e:  # noqa: BLE001 - the runtime's own words say what is wrong
        return f"no CUDA devices: CuPy {cupy.__version__} fails ({str(e)[:120]}); {hint}"


def _driver_cuda_major() -> int | None:
    """The CUDA major version the NVIDIA driver supports (libcuda's cuDriverGetVersion);
    None without a driver."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int()
        if lib.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except OSError:
        return None
    return version.value // 1000
