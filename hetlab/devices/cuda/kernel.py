"""A CUDA kernel and buffer as the kernel library's builder sees them: a kernel takes its
arguments by slot and launches over OpenCL's global size (``set_arg``, as pyopencl's), and a
buffer is the library's ``CLBuffer`` over a flat CuPy array."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.devices.kernels import CLBuffer


class CudaKernel:
    """One kernel function with its own argument slots (``set_arg``, as pyopencl's)."""

    def __init__(self, fn: Any, name: str) -> None:
        self.fn, self.name = fn, name
        self.args: list[Any] = []

    def set_arg(self, i: int, value: Any) -> None:
        if i >= len(self.args):
            self.args.extend([None] * (i + 1 - len(self.args)))
        self.args[i] = value

    def launch(self, gsize: Sequence[int], lsize: Sequence[int] | None) -> None:
        """Launch on the current stream: OpenCL's global size over CUDA's grid of blocks."""
        block = tuple(lsize) if lsize is not None else block_for(tuple(gsize))
        grid = tuple(g // b for g, b in zip(gsize, block, strict=True))
        self.fn(dim3(grid), dim3(block), tuple(self.args))


def block_for(gsize: tuple[int, ...]) -> tuple[int, ...]:
    """A block shape that divides ``gsize`` (OpenCL picks one where a launch gives none)."""
    first = max(d for d in range(1, min(gsize[0], 256) + 1) if gsize[0] % d == 0)
    return (first,) + (1,) * (len(gsize) - 1)


def dim3(t: tuple[int, ...]) -> tuple[int, int, int]:
    return tuple(t) + (1,) * (3 - len(t))  # type: ignore[return-value]


@dataclass
class CudaBuffer(CLBuffer):
    """A device buffer (a flat CuPy array in ``buf``) holding one tensor."""

    def part(self, offset: int, shape: tuple[int, ...], dtype: str) -> CudaBuffer:
        """A buffer over this one's elements from ``offset`` on: a slice of its CuPy array,
        the same memory at a pointer offset (a device's ``view``)."""
        n = max(int(np.prod(shape, dtype=np.int64)), 1)
        return CudaBuffer(self.buf[offset : offset + n], tuple(shape), dtype, self.device)
