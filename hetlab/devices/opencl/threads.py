"""The threads an OpenCL driver starts inside this process, and pinning them (issue 6).

A GPU driver starts helper threads of its own when the platform is enumerated, a context is
created or a program is built. A new thread inherits the affinity of the thread that caused
it, usually the main thread with every core allowed, so the helpers run on the CPU groups'
cores. Each parallel op of a group waits for its slowest pool thread, and a pool thread that
shares its core with a busy helper waits a scheduler time slice (milliseconds): on the lent
H100 machine a CPU group ran ``lstm`` (~260 small ops) 68-397x slower while the GPU ran it.
``OpenCLDevice`` records the threads started during its driver calls (``Started``) and pins
them, with its driving thread, to its ``host_cores`` (``pin``). Set ``HETLAB_PIN_DRIVER_THREADS=0``
to leave them where they are (to measure the difference). Linux only; elsewhere nothing is
recorded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

ENV = "HETLAB_PIN_DRIVER_THREADS"


def enabled() -> bool:
    """Whether driver threads are pinned (``HETLAB_PIN_DRIVER_THREADS``, default on)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def native_threads() -> set[int]:
    """Kernel thread ids of this process (empty where ``/proc/self/task`` does not exist)."""
    try:
        return {int(t) for t in os.listdir("/proc/self/task")}
    except OSError:
        return set()


def python_threads() -> set[int]:
    """Kernel thread ids of the threads Python's ``threading`` started or knows."""
    return {t.native_id for t in threading.enumerate() if t.native_id is not None}


def affinity(tid: int) -> set[int] | None:
    """The cores thread ``tid`` may run on; None if it has ended or cannot be read."""
    try:
        return set(os.sched_getaffinity(tid))
    except (OSError, AttributeError):
        return None


class Started:
    """``with Started() as s: ...`` then ``s.tids``: the native threads started inside the
    block that still exist, are not Python's, and still have the affinity the calling thread
    had when the block began (i.e. inherited it; threads that pinned themselves, such as
    onnxruntime's pinned pools, are left out)."""

    def __init__(self) -> None:
        self.tids: set[int] = set()
        self._before: set[int] = set()
        self._mask: set[int] | None = None

    def __enter__(self) -> Started:
        self._before = native_threads()
        self._mask = affinity(0)
        return self

    def __exit__(self, *exc: object) -> None:
        new = native_threads() - self._before - python_threads()
        self.tids = {t for t in new if affinity(t) == self._mask}


def pin(tids: Iterable[int], cores: Iterable[int]) -> list[int]:
    """Pin each thread of ``tids`` that still exists to ``cores``; the ids pinned."""
    want = set(cores)
    done = []
    for t in sorted(tids):
        try:
            os.sched_setaffinity(t, want)
        except (OSError, AttributeError):  # ended meanwhile, or not Linux
            continue
        done.append(t)
    return done
