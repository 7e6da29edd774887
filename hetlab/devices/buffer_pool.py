"""One device buffer per tensor, kept across runs: what the host writes into a device.

A run writes the same tensors each time (model inputs, what another device sends), with the
same shapes unless the input values change them. The executor's workers, OpenCL's
ahead-of-time runner and CUDA's graph runner keep one buffer per such tensor, allocated at
its first write, allocated again (the old one freed) when its shape or dtype changes, and
freed when the plan is let go.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol


class Allocator(Protocol):
    """What a pool needs of a device (a ``Device`` is one)."""

    def alloc(self, shape: Sequence[int], dtype: str = "float32") -> Any: ...

    def free(self, buf: Any) -> None: ...


class BufferPool:
    """Tensor name -> a buffer of ``device``'s, reused while its shape and dtype stay."""

    def __init__(self, device: Allocator) -> None:
        self.device = device
        self._bufs: dict[str, Any] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._bufs

    def get(self, name: str, shape: Sequence[int], dtype: str) -> tuple[Any, bool]:
        """``name``'s buffer of ``shape`` and ``dtype``, and whether it is new: allocated
        now, at the first write or after one of another shape or dtype (freed here)."""
        shape = tuple(shape)
        buf = self._bufs.get(name)
        if (
            buf is not None
            and tuple(getattr(buf, "shape", ())) == shape
            and getattr(buf, "dtype", None) == dtype
        ):
            return buf, False
        if buf is not None:
            self.device.free(buf)
        buf = self._bufs[name] = self.device.alloc(shape, dtype)
        return buf, True

    def release(self) -> None:
        """Free every buffer; a lost device cannot free its buffers, and nothing more is
        to be done about it."""
        for buf in self._bufs.values():
            with contextlib.suppress(Exception):
                self.device.free(buf)
        self._bufs.clear()
