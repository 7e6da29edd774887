"""Views: a Slice, Split or Gather output that is a contiguous range of its input's buffer
gets a buffer object over that range (an OpenCL sub-buffer, a CUDA pointer offset) and no
launch.

A tensor is a view when the builder's ``views`` maps it to (root, element offset): the root
is a tensor the unit computes into a buffer of its own, and the view's buffer is made over
that buffer when the plan's buffers are made (``view_buffer``). A view is made only where
nothing can write through it or over its root while it is read:

- the device declares views (``KernelDevice.view_align``, the bytes a view's start must be
  a multiple of), and the range starts on that alignment;
- the root is computed in the unit, in a buffer of its own: not a unit input (rebound each
  run), not a constant, not a slice of a Concat's buffer (``sub``);
- the view is not a unit output and not a Concat input written in place;
- a Split's parts that cannot be views of the input (the alignment) can be views of one
  buffer of the unit's, each part at an aligned start, filled by one copy (``pack``);
- every intermediate tensor has a buffer of its own (``builder.py``) and launches write only
  their node's outputs, so the root holds its value for the whole run. An op that writes in
  place into a tensor it reads asks ``viewed`` first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.devices.kernels import CLBuffer


def contiguous(xs: Sequence[int], extents: Sequence[int]) -> bool:
    """Whether a box of ``extents`` (from any start) in a C-contiguous tensor of shape ``xs``
    is one contiguous range of it: every axis before the box's first axis of extent above 1
    has extent 1, and every axis after it is whole."""
    outer = next((a for a, e in enumerate(extents) if e > 1), len(xs))
    return all(e == d for e, d in zip(extents[outer + 1 :], xs[outer + 1 :], strict=True))


def make_view(ub: Any, out: str, src: str, offset: int) -> bool:
    """Record ``out`` as the elements of ``src`` from ``offset`` on (``ub.views``) where the
    module doc's conditions hold; whether it did (else the op copies)."""
    root = ub.alias.get(src, src)
    if root in ub.views:  # a view of a view: the range of the first view's root
        root, base = ub.views[root]
        offset += base
    if not _may_view(ub, out, root, offset):
        return False
    ub.views[out] = (root, int(offset))
    return True


def _may_view(ub: Any, out: str, root: str | CLBuffer, offset: int) -> bool:
    align = ub.device.view_align
    if align is None or out in ub.outputs or out in ub.sub:
        return False
    if not isinstance(root, str):  # a packed buffer of the unit's (``pack``)
        dtype = root.dtype
    elif (
        root in ub.sub
        or root in ub.weights
        or root not in ub.producer
        or ub.producer[root].id in getattr(ub, "widened", {})
    ):
        return False
    else:
        dtype = ub.dtype(root)
    n = int(np.prod(ub.shape(out), dtype=np.int64))
    size = np.dtype(dtype).itemsize
    return n > 0 and ub.dtype(out) == dtype and offset * size % align == 0


def pack(ub: Any, outs: list[str], n: int) -> tuple[CLBuffer, int] | None:
    """Views of one new buffer of the unit's for ``outs``, ``n`` elements each, each view
    starting on the device's alignment: the buffer and the elements from one start to the
    next. One copy then fills them all where one launch per output would copy each. None
    where the device makes no views or an output is the unit's."""
    align, dtype = ub.device.view_align, ub.dtype(outs[0])
    size = np.dtype(dtype).itemsize
    if align is None or align % size or any(o in ub.outputs or o in ub.sub for o in outs):
        return None
    step = -(-n * size // align) * align // size
    buf = ub.device.alloc((step * len(outs),), dtype)
    ub.keep.append(buf)
    for k, o in enumerate(outs):
        ub.views[o] = (buf, k * step)
    return buf, step


def view_buffer(ub: Any, name: str, buffers: dict[str, Any]) -> Any:
    """The buffer of view ``name`` over its root's buffer (allocated here if not yet)."""
    root, offset = ub.views[name]
    if not isinstance(root, str):
        return ub.device.view(root, offset, ub.shape(name), ub.dtype(name))
    if root not in buffers:
        buffers[root] = ub.device.alloc(ub.shape(root), ub.dtype(root))
    return ub.device.view(buffers[root], offset, ub.shape(name), ub.dtype(name))


def viewed(ub: Any, name: str) -> bool:
    """Whether ``name``'s buffer is a view or the root of one: not to be written in place."""
    root = ub.alias.get(name, name)
    return root in ub.views or any(r == root for r, _ in ub.views.values())
