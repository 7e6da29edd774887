"""OpenCL C kernels (``devices/kernels/cl/*.cl``) as CUDA C for NVRTC.

The CUDA device runs the very kernels the OpenCL device runs, so both compute the same
thing and one set of op builders serves both. The kernels keep to a small part of OpenCL C:
address-space qualifiers, work-item functions, ``barrier``, ``mad``/``clamp``, ``int4`` and
scalar math (no OpenCL vector types beyond CUDA's). Of the scalar types the typed kernels are
compiled for (``DT``, ``IT``, ``OT`` of ``eltwise.cl``: float, int, long, uchar, ushort),
``uchar`` and ``ushort`` get a typedef and ``long`` is CUDA's own, 64 bits as in OpenCL wherever the host is LP64
(Linux; the prelude asserts it). A prelude maps the rest onto CUDA, and three rewrites handle
what a macro cannot:

- ``__kernel`` becomes ``extern "C" __global__`` (unmangled names for ``get_function``);
- ``__attribute__((reqd_work_group_size(x, y, z)))`` becomes ``__launch_bounds__(x*y*z)``;
- a file-scope ``inline`` helper becomes ``__device__ inline``.

Build options ``-D NAME[=VALUE]`` pass through unchanged (NVRTC takes the same form). The
global-memory access macros every kernel file uses (``LD``, ``ST``, ``VIEW`` of
``kernels/bounds.h``, prepended by ``opencl.device.source``) are plain indexing in the normal
build and translate as they are; the bounds-checked build (``-DHETLAB_BOUNDS``) is OpenCL's.
"""

from __future__ import annotations

import re

PRELUDE = r"""
#define __global
#define __local __shared__
#define __constant const
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define barrier(flags) __syncthreads()
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define FLT_MAX 3.402823466e+38F
typedef unsigned char uchar;
typedef unsigned short ushort;
static_assert(sizeof(long) == 8, "OpenCL C's long is 64 bits; this host's CUDA long is not");
__device__ __forceinline__ unsigned int _hl_dim(const uint3 v, int d) {
    return d == 0 ? v.x : (d == 1 ? v.y : v.z);
}
__device__ __forceinline__ unsigned int _hl_dim(const dim3 v, int d) {
    return d == 0 ? v.x : (d == 1 ? v.y : v.z);
}
#define get_local_id(d) ((int)_hl_dim(threadIdx, (d)))
#define get_group_id(d) ((int)_hl_dim(blockIdx, (d)))
#define get_local_size(d) ((int)_hl_dim(blockDim, (d)))
#define get_num_groups(d) ((int)_hl_dim(gridDim, (d)))
#define get_global_id(d) (get_group_id(d) * get_local_size(d) + get_local_id(d))
#define get_global_size(d) (get_num_groups(d) * get_local_size(d))
__device__ __forceinline__ float mad(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ float clamp(float v, float lo, float hi) {
    return fminf(fmaxf(v, lo), hi);
}
__device__ __forceinline__ int clamp(int v, int lo, int hi) { return min(max(v, lo), hi); }
"""

_KERNEL = re.compile(
    r"__kernel\s+(__attribute__\s*\(\(\s*reqd_work_group_size\s*\(([^)]*)\)\s*\)\))?"
)
_INLINE = re.compile(r"^(\s*)(static\s+)?inline\b", re.MULTILINE)


def _kernel_head(m: re.Match[str]) -> str:
    if not m.group(1):
        return 'extern "C" __global__ '
    dims = [d.strip() for d in m.group(2).split(",")]
    return f'extern "C" __global__ __launch_bounds__(({")*(".join(dims)})) '


def to_cuda(src: str) -> str:
    """``src`` (OpenCL C) as a CUDA C translation unit."""
    body = _KERNEL.sub(_kernel_head, src)
    body = _INLINE.sub(r"\1__device__ inline", body)
    return PRELUDE + "#line 1\n" + body


def options_to_nvrtc(options: str) -> tuple[str, ...]:
    """OpenCL build options as NVRTC options: ``-D`` defines pass through, the rest goes."""
    out, words = [], options.split()
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-D" and i + 1 < len(words):
            out.append(f"-D{words[i + 1]}")
            i += 2
            continue
        if w.startswith("-D"):
            out.append(w)
        i += 1
    return tuple(out)
