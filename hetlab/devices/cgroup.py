"""What the container lets this process use: CPUs and memory from its cgroup.

A container (Docker, Kubernetes, Binder) often shows every core of the host in
``os.sched_getaffinity`` while its cgroup grants only a quota of CPU time (``cpu.max``:
"200000 100000" is two CPUs) and a memory limit (``memory.max``). Sizing CPU groups or Dask
workers from the visible cores then oversubscribes the quota. Both cgroup v2 (``cpu.max``,
``memory.max``) and v1 (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``,
``memory.limit_in_bytes``) are read, in the process's own cgroup (``/proc/self/cgroup``) and
its ancestors, the smallest limit winning.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PROC = Path("/proc/self/cgroup")
UNLIMITED = 1 << 60  # v1 writes "no limit" as a huge number of bytes


@dataclass(frozen=True)
class Limits:
    """CPUs (a fraction: 1.5 is one and a half CPUs) and memory bytes; None: no limit."""

    cpus: float | None = None
    memory: int | None = None


def limits(root: str | Path = ROOT, proc: str | Path = PROC) -> Limits:
    """The cgroup limits of this process (``root``, ``proc``: where to read them)."""
    cpus = _smallest(_read_cpu(d) for d in _dirs(Path(root), Path(proc), "cpu"))
    mem = _smallest(_read_memory(d) for d in _dirs(Path(root), Path(proc), "memory"))
    return Limits(cpus, None if mem is None else int(mem))


def cpu_count(visible: int | None = None, lim: Limits | None = None) -> int:
    """How many CPUs to size work for: the visible cores (``os.sched_getaffinity``), fewer
    when the cgroup's quota grants fewer (rounded down, at least 1)."""
    if visible is None:
        visible = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
        visible = visible or os.cpu_count() or 1
    lim = limits() if lim is None else lim
    if lim.cpus is None:
        return visible
    return max(1, min(visible, math.floor(lim.cpus + 1e-9)))


def memory_bytes(lim: Limits | None = None) -> int | None:
    """The memory this process may use: the machine's, or the cgroup's limit if smaller
    (None when neither is known)."""
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        phys = None
    lim = limits() if lim is None else lim
    return _smallest([phys, lim.memory])


def _smallest(values) -> float | None:
    found = [v for v in values if v is not None]
    return min(found) if found else None


def _dirs(root: Path, proc: Path, controller: str) -> list[Path]:
    """The cgroup folders that may limit ``controller`` for this process: its own and each
    ancestor, under the v2 hierarchy and under the v1 mount of that controller."""
    rel = {"v2": "/"}
    try:
        lines = proc.read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, ctrls, path = parts
        if hid == "0" and not ctrls:
            rel["v2"] = path
        elif controller in ctrls.split(","):
            rel[ctrls] = path
    out: list[Path] = []
    for key, path in rel.items():
        bases = [root] if key == "v2" else [root / key, root / controller]
        for base in dict.fromkeys(bases):
            d = base / path.strip("/")
            while True:
                out.append(d)
                if d == base or base not in d.parents:
                    break
                d = d.parent
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _read_cpu(d: Path) -> float | None:
    """CPUs granted by the quota in folder ``d``; None without one."""
    text = _read(d / "cpu.max")
    if text is not None:
        quota, _, period = text.partition(" ")
    else:
        quota, period = _read(d / "cpu.cfs_quota_us") or "", _read(d / "cpu.cfs_period_us") or ""
    try:
        q, p = int(quota), int(period or 100000)
    except ValueError:
        return None  # "max", missing or unreadable: no quota here
    return q / p if q > 0 and p > 0 else None


def _read_memory(d: Path) -> int | None:
    """The memory limit in folder ``d`` (bytes); None without one."""
    text = _read(d / "memory.max")
    if text is None:
        text = _read(d / "memory.limit_in_bytes")
    try:
        v = int(text or "")
    except ValueError:
        return None  # "max" or missing
    return v if 0 < v < UNLIMITED else None
