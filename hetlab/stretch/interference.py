"""Interference generators for adaptive-execution demos (NN-Stretch §7.4 used Gables):
``CpuBurner`` spins processes pinned to a CPU group's cores; ``OpenClBusyQueue`` keeps an
OpenCL device's queue busy. Both are stoppable, bounded by ``duration_s`` (they stop by
themselves even if the caller dies), and usable as context managers.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from hetlab.devices.base import Device
from hetlab.errors import HetlabError


def _burn(cores: list[int], deadline: float, stop: Any) -> None:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, cores)
    x = 0
    while not stop.is_set() and time.monotonic() < deadline:
        for i in range(20000):
            x += i * i
    # deliberately nothing returned: the process only burns cycles


def cores_of(device: Device) -> list[int]:
    """The cores of a CPU-group device (``Device.cores``)."""
    if not device.cores:
        raise HetlabError(f"device {device.name!r} has no CPU cores to burn; pick a CPU group")
    return list(device.cores)


class CpuBurner:
    """``procs`` busy processes (default one per core) pinned to ``cores`` for at most
    ``duration_s`` seconds. ``start()``/``stop()``, or ``with CpuBurner(...):``."""

    def __init__(
        self, cores: Sequence[int], duration_s: float = 60.0, procs: int | None = None
    ) -> None:
        if not cores:
            raise HetlabError("CpuBurner needs at least one core")
        if duration_s <= 0 or duration_s > 3600:
            raise HetlabError(f"burner duration must be in (0, 3600] s, got {duration_s}")
        self.cores = list(cores)
        self.duration_s = float(duration_s)
        self.procs = int(procs or len(self.cores))
        self._ctx = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
        self._stop = self._ctx.Event()
        self._ps: list[Any] = []

    @property
    def running(self) -> bool:
        return any(p.is_alive() for p in self._ps)

    def start(self) -> Self:
        if self.running:
            return self
        self._stop.clear()
        deadline = time.monotonic() + self.duration_s
        self._ps = [
            self._ctx.Process(target=_burn, args=(self.cores, deadline, self._stop), daemon=True)
            for _ in range(self.procs)
        ]
        for p in self._ps:
            p.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for p in self._ps:
            p.join(timeout=2)
            if p.is_alive():
                p.terminate()
                p.join(timeout=1)
        self._ps = []

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class OpenClBusyQueue:
    """A thread that keeps enqueuing a compute-heavy kernel on ``device`` (an
    ``OpenCLDevice``'s queue) for at most ``duration_s`` seconds."""

    SRC = """__kernel void spin(__global float* a, int n) { int i = get_global_id(0); float x = a[i];
      for (int k = 0; k < n; ++k) x = x * 0.999f + 0.001f; a[i] = x; }"""

    def __init__(
        self, device: Any, duration_s: float = 60.0, work: int = 1 << 16, loops: int = 2000
    ) -> None:
        # lazy: pyopencl is optional and slow to import
        import pyopencl as cl

        if device.kind != "opencl":
            raise HetlabError(f"device {device.name!r} is not an OpenCL device")
        ctx = device.ctx
        self.cl = cl
        self.queue = cl.CommandQueue(ctx)
        self.prog = cl.Program(ctx, self.SRC).build()
        self.buf = cl.Buffer(
            ctx,
            cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
            hostbuf=np.ones(work, np.float32),
        )
        self.work, self.loops, self.duration_s = work, loops, float(duration_s)
        self._stop = threading.Event()
        self._t: threading.Thread | None = None

    def _loop(self) -> None:
        deadline = time.monotonic() + self.duration_s

        while not self._stop.is_set() and time.monotonic() < deadline:
            self.prog.spin(self.queue, (self.work,), None, self.buf, np.int32(self.loops))
            self.queue.finish()

    def start(self) -> Self:
        self._stop.clear()
        self._t = threading.Thread(target=self._loop, name="hetlab-cl-busy", daemon=True)
        self._t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._t is not None:
            self._t.join(timeout=5)
            self._t = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
