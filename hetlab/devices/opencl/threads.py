"""The threads an OpenCL driver starts inside this process, and pinning them.

A GPU driver starts helper threads of its own when the platform is enumerated, a context is
created or a program is built. A new thread inherits the affinity of the thread that caused
it, usually the main thread with every core allowed, so the helpers may run on the CPU
groups' cores. ``OpenCLDevice`` records the threads started during its driver calls
(``Started``) and, with ``HETLAB_PIN_DRIVER_THREADS=1``, pins them with its driving thread to
its ``host_cores`` (``pin``). Off by default: pinning does not take away a CPU group's
slowdown while the GPU runs, and it makes the GPU's own transfers much slower, because the
driver's threads then share one core with the driving thread, which waits on the GPU
spinning (docs/decisions.md#driver-threads).
Linux only; elsewhere nothing is recorded.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from typing import Self

ENV = "HETLAB_PIN_DRIVER_THREADS"
SETTLE_CHECKS, SETTLE_S = 4, 0.005


def enabled() -> bool:
    """Whether driver threads are pinned (``HETLAB_PIN_DRIVER_THREADS``, default off)."""
    return os.environ.get(ENV, "0").strip().lower() in ("1", "true", "yes", "on")


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

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled  # off: nothing is recorded (nothing will be pinned)
        self.tids: set[int] = set()
        self._before: set[int] = set()
        self._mask: set[int] | None = None

    def __enter__(self) -> Self:
        if self.enabled:
            self._before = native_threads()
            self._mask = affinity(0)
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        new = native_threads() - self._before - python_threads()
        # a thread may pin itself just after it starts (onnxruntime's pools do): it counts
        # only if it keeps the inherited affinity over a few checks SETTLE_S apart
        for i in range(SETTLE_CHECKS if new else 1):
            if i:
                time.sleep(SETTLE_S)
            new = {t for t in new if affinity(t) == self._mask}
        self.tids = new


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
