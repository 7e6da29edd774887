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
    """``clEnqueueNDRangeKernel`` of the loaded loader, or None where there is none. It has
    no ``argtypes``: every call passes ready ctypes values (``_c_args``), which ctypes hands
    on without converting them (a third of the call's host cost)."""
    path = loaded_loader()
    if path is None:
        return None
    try:
        fn = ctypes.CDLL(path).clEnqueueNDRangeKernel
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_int
    return fn


NO_WAIT = ctypes.c_uint(0)


def _c_args(launch: Any) -> tuple[Any, ...]:
    """The C call's arguments after the queue as ctypes values (kernel handle, dimensions,
    no offset, global size, local size, no wait list, no event), kept on the launch: its
    kernel object, and so its bound arguments, never changes."""
    args = getattr(launch, "c_args", None)
    if args is None:
        g = (ctypes.c_size_t * len(launch.gsize))(*launch.gsize)
        lsize = launch.lsize
        local = None if lsize is None else (ctypes.c_size_t * len(lsize))(*lsize)
        kernel, dims = ctypes.c_void_p(launch.kernel.int_ptr), ctypes.c_uint(len(launch.gsize))
        args = launch.c_args = (kernel, dims, None, g, local, NO_WAIT, None, None)
    return args


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
    event of the last one (a marker's when there are none). Between the first and the last
    launch, a launch is one C call with its stored arguments."""
    fn = c_enqueue()
    if fn is None or not launches:
        events = enqueue_each(cl, queue, launches, wait_for)
        return events[-1] if events else cl.enqueue_marker(queue, wait_for=list(wait_for) or None)
    qp, event = ctypes.c_void_p(queue.int_ptr), ctypes.c_void_p()
    first, last = launches[0], launches[-1]
    if wait_for or len(launches) == 1:
        kernel, dims, _, g, local, *_ = _c_args(first)
        waits = (ctypes.c_void_p * len(wait_for))(*[e.int_ptr for e in wait_for]) or None
        out = ctypes.byref(event) if len(launches) == 1 else None
        _check(
            fn(qp, kernel, dims, None, g, local, ctypes.c_uint(len(wait_for)), waits, out), first
        )
        middle = launches[1:-1]
    else:
        middle = launches[:-1]
    for L in middle:
        rc = fn(qp, *_c_args(L))
        if rc:
            _check(rc, L)
    if len(launches) > 1:
        kernel, dims, _, g, local, *_ = _c_args(last)
        _check(fn(qp, kernel, dims, None, g, local, NO_WAIT, None, ctypes.byref(event)), last)
    return cl.Event.from_int_ptr(event.value, retain=False)


def _check(rc: int, launch: Any) -> None:
    if rc != 0:
        raise HetlabError(
            f"OpenCL could not enqueue kernel {launch.kernel.function_name} of node "
            f"{launch.node} (error {rc})"
        )
