"""How many cores other processes kept busy while a block of this process ran.

The busy check's reference (``busy.py``) runs the whole model on one device; load on fewer
cores than the machine has can leave it untouched (the OS moves the other work off the core
it runs on) while a plan that switches cores at every unit slows down. This is the direct
signal: the CPU time the cores this process may use spent busy (``/proc/stat``: user, nice,
system, irq, softirq, steal; not idle or iowait), less this process's own CPU time (all its
threads, which include onnxruntime's and PoCL's), per second of wall time: the average number
of cores other work kept busy. Where ``/proc/stat`` is absent (macOS, Windows) there is no
signal (None) and the reference alone decides (docs/decisions.md#busy-calibrations).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

OTHER_LOAD = 0.25  # other processes' average busy cores above which a run counts as busy
BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user, nice, system, irq, softirq, steal (after the name)
STAT = "/proc/stat"


@dataclass(frozen=True)
class Sample:
    """One reading: the busy jiffies of the cores this process may use, its own CPU time and
    the wall clock (seconds)."""

    busy_jiffies: int
    own_s: float
    wall_s: float


def busy_jiffies(stat: str, cores: Iterable[int] | None = None) -> int | None:
    """The busy jiffies in ``/proc/stat`` text: summed over the ``cpuN`` lines of ``cores``
    when given and all present, else the first (all-cores) ``cpu`` line; None without one."""
    rows: dict[str, list[int]] = {}
    for line in stat.splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and len(fields) >= 4:
            rows[name] = [int(f) for f in fields]
    names = [f"cpu{c}" for c in cores] if cores is not None else []
    picked = [rows[n] for n in names] if names and all(n in rows for n in names) else None
    if picked is None:
        picked = [rows["cpu"]] if "cpu" in rows else []
    if not picked:
        return None
    return sum(r[i] for r in picked for i in BUSY_FIELDS if i < len(r))


def other_cores(before: Sample, after: Sample, hz: float, cores: int) -> float | None:
    """The average number of cores other processes kept busy between two samples (0 to
    ``cores``); None over no wall time."""
    wall = after.wall_s - before.wall_s
    if wall <= 0:
        return None
    other_s = (after.busy_jiffies - before.busy_jiffies) / hz - (after.own_s - before.own_s)
    return min(float(cores), max(0.0, other_s / wall))


def usable_cores() -> list[int] | None:
    getaffinity = getattr(os, "sched_getaffinity", None)
    return sorted(getaffinity(0)) if getaffinity is not None else None


def read_stat() -> str | None:
    try:
        with open(STAT) as f:
            return f.read()
    except OSError:
        return None


def own_seconds() -> float:
    t = os.times()
    return t.user + t.system


def sample(cores: list[int] | None = None) -> Sample | None:
    """A reading now; None where ``/proc/stat`` is absent or unreadable."""
    text = read_stat()
    jiffies = busy_jiffies(text, cores) if text is not None else None
    if jiffies is None:
        return None
    return Sample(jiffies, own_seconds(), time.monotonic())


def clock_hz() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100.0


def measure_load(fn: Callable[[], T]) -> tuple[T, float | None]:
    """``fn()``'s result and the average number of cores other processes kept busy while it
    ran, rounded to 0.01 (None without ``/proc/stat``)."""
    cores = usable_cores()
    before = sample(cores)
    got = fn()
    after = sample(cores) if before is not None else None
    if before is None or after is None:
        return got, None
    n = len(cores) if cores else os.cpu_count() or 1
    other = other_cores(before, after, clock_hz(), n)
    return got, None if other is None else round(other, 2)
