"""Helpers of the issue-6 diagnostics (``contention_causes.py``, ``driver_threads.py``,
``session_residue.py``): timing a prepared whole-model job on a thread of its own, and
reading what the host's cores did (/proc/interrupts)."""

from __future__ import annotations

import statistics
import threading
from pathlib import Path
from typing import Any


def timed(job: tuple, n: int) -> float:
    """Median whole-model ms of ``n`` runs of ``job`` = (device, unit, inputs), on this thread."""
    dev, unit, ins = job
    dev.bind_thread()
    times = []
    for _ in range(n):
        r = dev.run(unit, ins)
        times.append((r.finish - r.start) * 1e3)
    return statistics.median(times)


def on_thread(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on a fresh thread (so pinning it leaves the main thread alone)."""
    out = []
    th = threading.Thread(target=lambda: out.append(fn(*args)))
    th.start()
    th.join()
    return out[0]


def interrupts() -> list[int]:
    """Interrupts taken so far per core (every IRQ line of /proc/interrupts summed)."""
    try:
        lines = Path("/proc/interrupts").read_text().splitlines()
    except OSError:
        return []
    n = len(lines[0].split())
    tot = [0] * n
    for ln in lines[1:]:
        for i, x in enumerate(ln.split()[1 : 1 + n]):
            if x.isdigit():
                tot[i] += int(x)
    return tot
