"""An OpenCL device's buffers: the ``Device`` interface's buffer hooks over one context.

Where the device shares memory with the host (``host_unified_memory``: integrated GPUs, CPU
devices such as PoCL) buffers are allocated with ``CL_MEM_ALLOC_HOST_PTR`` and filled or read
through ``clEnqueueMapBuffer``/unmap, so the CPU writes straight into the memory the kernels
read (HOPE §4.4). Otherwise ``enqueue_copy`` moves the data, and so it does on a CPU device
(PoCL): there the device's memory is the host's either way, and a copy is one memcpy and one
host wait, where a map is the same memcpy and two waits (the blocking map, then the finish
after the unmap); docs/decisions.md, "If bodies on a kernel device".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.kernels import CLBuffer


class OpenCLBuffers:
    """The buffer hooks of ``OpenCLDevice``, which gives them its pyopencl module, context,
    queue in use, device and name, and says whether the memory is the host's and whether
    copies map it."""

    cl: Any
    ctx: Any
    queue: Any
    dev: Any
    name: str
    unified: bool
    map_io: bool  # fill and read buffers by map/unmap (see the module doc)

    def raw_buffer(self, nbytes: int) -> Any:
        mf = self.cl.mem_flags
        flags = mf.READ_WRITE | (mf.ALLOC_HOST_PTR if self.unified else 0)
        return self.cl.Buffer(self.ctx, flags, max(int(nbytes), 4))

    def alloc(self, shape: Sequence[int], dtype: str = "float32") -> CLBuffer:
        shape = tuple(int(s) for s in shape)
        n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        return CLBuffer(self.raw_buffer(n), shape, str(np.dtype(dtype)), self.name)

    def view(self, buf: CLBuffer, offset: int, shape: tuple[int, ...], dtype: str) -> CLBuffer:
        """A sub-buffer of ``buf`` from element ``offset`` on (its byte offset a multiple of
        ``view_align``, the device's ``CL_DEVICE_MEM_BASE_ADDR_ALIGN``)."""
        size = np.dtype(dtype).itemsize
        n = int(np.prod(shape, dtype=np.int64)) * size
        return CLBuffer(buf.buf.get_sub_region(offset * size, n), shape, dtype, self.name)

    def write(self, dst: CLBuffer, array: np.ndarray) -> None:
        """Host array -> existing device buffer (mapped where zero-copy, else a copy; see
        the module doc)."""
        self.write_all([(dst, array)])

    def copy_in(self, array: np.ndarray) -> CLBuffer:
        array = np.asarray(array)
        buf = self.alloc(array.shape, str(array.dtype))
        self.write(buf, array)
        return buf

    def copy_out(self, buf: Any) -> np.ndarray:
        return self.copy_out_all([buf])[0]

    def write_all(self, pairs: Sequence[tuple[CLBuffer, np.ndarray]]) -> None:
        """Each (buffer, host array) pair written (mapped, or copied without blocking), then
        one wait for them all."""
        cl, keep = self.cl, []  # keep: the host arrays, alive until the copies end
        for dst, array in pairs:
            a = np.ascontiguousarray(array, dtype=dst.dtype).reshape(-1)
            if not a.size:
                continue
            if self.map_io:
                flags = cl.map_flags.WRITE_INVALIDATE_REGION
                m, _ = cl.enqueue_map_buffer(self.queue, dst.buf, flags, 0, a.shape, a.dtype)
                m[...] = a
                m.base.release(self.queue)
            else:
                cl.enqueue_copy(self.queue, dst.buf, a, is_blocking=False)
            keep.append(a)
        if keep:
            self.queue.finish()

    def copy_out_all(self, bufs: Sequence[Any]) -> list[np.ndarray]:
        """Each buffer on the host (a blocking map, or a copy without blocking), then one
        wait for them all; what is no device buffer is returned as an array."""
        cl, outs, waits = self.cl, [], False
        for buf in bufs:
            if not isinstance(buf, CLBuffer):
                outs.append(np.asarray(buf))
                continue
            out = np.empty(buf.shape, dtype=buf.dtype)
            outs.append(out)
            if not out.size:
                continue
            if self.map_io:
                flags = cl.map_flags.READ
                m, _ = cl.enqueue_map_buffer(self.queue, buf.buf, flags, 0, (out.size,), out.dtype)
                out.reshape(-1)[...] = m
                m.base.release(self.queue)
            else:
                cl.enqueue_copy(self.queue, out, buf.buf, is_blocking=False)
            waits = True
        if waits:
            self.queue.finish()
        return outs

    def free(self, buf: Any) -> None:
        if isinstance(buf, CLBuffer):
            buf.buf.release()

    def memory_bytes(self) -> int | None:
        """The device's global memory (``CL_DEVICE_GLOBAL_MEM_SIZE``)."""
        return int(self.dev.global_mem_size)

    def max_alloc_bytes(self) -> int | None:
        """The largest buffer the driver creates (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``): a larger
        one fails with ``INVALID_BUFFER_SIZE``."""
        return int(self.dev.max_mem_alloc_size)
