"""Kernel launches without an event per launch, through the OpenCL C API.

pyopencl's ``enqueue_nd_range_kernel`` always asks the driver for an event and wraps it in a
Python object. On NVIDIA's OpenCL that more than doubles a launch's host cost, and a run of
several hundred launches is bound by it (docs/decisions.md#eventless-launches). A run
that times no single launch needs an event only where something waits: on a unit's last
launch. ``enqueue`` issues a unit's launches with ``clEnqueueNDRangeKernel`` called through
ctypes on the very ICD loader pyopencl uses (found in the process's memory map), asks for an
event on the last launch only, and hands it to pyopencl. Where that loader cannot be found
(not Linux), the launches go through pyopencl, each with its event.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from typing import Any

from hetlab.errors import HetlabError

_ARGTYPES = [ctypes.c_void_p] * 2 + [ctypes.c_uint] + [ctypes.c_void_p] * 3
_ARGTYPES += [ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]


def loaded_loader() -> str | None:
    """The path of the OpenCL ICD loader mapped into this process (pyopencl's), or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and "libOpenCL" in fields[5]:
                    return fields[5].strip()
    except OSError:
        return None
    return None


@functools.cache
def c_enqueue() -> Any:
    """``clEnqueueNDRangeKernel`` of the loaded loader, or None where there is none."""
    path = loaded_loader()
    if path is None:
        return None
    try:
        fn = ctypes.CDLL(path).clEnqueueNDRangeKernel
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = _ARGTYPES, ctypes.c_int
    return fn


def _raw(launch: Any) -> tuple[int, int, Any, Any]:
    """(kernel handle, dimensions, global size, local size) as the C call takes them, kept on
    the launch (its kernel object, and so its bound arguments, never changes)."""
    raw = getattr(launch, "raw", None)
    if raw is None:
        g = (ctypes.c_size_t * len(launch.gsize))(*launch.gsize)
        lsize = launch.lsize
        local = None if lsize is None else (ctypes.c_size_t * len(lsize))(*lsize)
        raw = launch.raw = (launch.kernel.int_ptr, len(launch.gsize), g, local)
    return raw


def enqueue_each(
    cl: Any, queue: Any, launches: Sequence[Any], wait_for: Sequence[Any] = ()
) -> list[Any]:
    """Enqueue ``launches`` in order on ``queue`` through pyopencl, the first waiting on
    ``wait_for``; every launch's event (to time each, or where the C call is not found)."""
    waits = list(wait_for) or None
    return [
        cl.enqueue_nd_range_kernel(
            queue, L.kernel, L.gsize, L.lsize, wait_for=waits if i == 0 else None
        )
        for i, L in enumerate(launches)
    ]


def enqueue(cl: Any, queue: Any, launches: Sequence[Any], wait_for: Sequence[Any] = ()) -> Any:
    """Enqueue ``launches`` in order on ``queue``, the first waiting on ``wait_for``; the
    event of the last one (a marker's when there are none)."""
    fn = c_enqueue()
    if fn is None or not launches:
        events = enqueue_each(cl, queue, launches, wait_for)
        return events[-1] if events else cl.enqueue_marker(queue, wait_for=list(wait_for) or None)
    qp, last = queue.int_ptr, len(launches) - 1
    waits = (ctypes.c_void_p * len(wait_for))(*[e.int_ptr for e in wait_for]) if wait_for else None
    event = ctypes.c_void_p()
    for i, L in enumerate(launches):
        kernel, dims, g, local = _raw(L)
        n_wait, wait_list = (len(wait_for), waits) if i == 0 and waits is not None else (0, None)
        out = ctypes.byref(event) if i == last else None
        rc = fn(qp, kernel, dims, None, g, local, n_wait, wait_list, out)
        if rc != 0:
            raise HetlabError(
                f"OpenCL could not enqueue kernel {L.kernel.function_name} of node {L.node} "
                f"(error {rc})"
            )
    return cl.Event.from_int_ptr(event.value, retain=False)
