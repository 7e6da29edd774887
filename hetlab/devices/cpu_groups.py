"""The default CPU groups, from the cores this process may use.

The cores are those of ``os.sched_getaffinity``, only as many as the container's cgroup CPU
quota grants (``cgroup.py``): fewer than 4 physical cores -> one group per core (``cpu0``,
``cpu1``, ...); 4 or more -> two halves (16 cores -> 8 + 8). With 4 or more physical cores,
each GPU's driving thread may first take one physical core of its own, the last ones (16
cores + one GPU -> cpu0 = 0-7, cpu1 = 8-14, the GPU's thread on 15).
"""

from __future__ import annotations

import os
from typing import Any

from hetlab.devices import cgroup
from hetlab.devices.topology import physical_cores


def available_cores() -> list[int]:
    """Logical processor ids this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def usable_cores() -> list[int]:
    """The cores default CPU groups are sized over: the first N of ``available_cores()``
    when the cgroup's quota grants only N CPUs, else all of them."""
    cores = available_cores()
    return cores[: cgroup.cpu_count(len(cores))]


def default_groups(cores: list[int] | None = None, reserve: int = 0) -> list[dict[str, Any]]:
    """``[{"name", "cores", "threads"}]``: one group per physical core below 4 physical
    cores, else two halves (16 -> 8 + 8); hyperthread siblings stay in one group, and a
    group runs one thread per physical core. ``reserve``: physical cores kept out of the
    groups at the end (see ``host_cores``; ignored below 4 physical cores)."""
    phys = physical_cores(usable_cores() if cores is None else sorted(cores))
    if len(phys) >= 4 and reserve > 0:
        phys = phys[: max(3, len(phys) - reserve)]
    if len(phys) < 4:
        parts = [[p] for p in phys]
    else:
        half = (len(phys) + 1) // 2
        parts = [phys[:half], phys[half:]]
    return [
        {"name": f"cpu{i}", "cores": sorted(c for p in part for c in p), "threads": len(part)}
        for i, part in enumerate(parts)
    ]


def host_cores(n_devices: int, cores: list[int] | None = None) -> list[list[int]]:
    """The logical ids of the last ``n_devices`` physical cores (one each), which
    ``default_groups(reserve=n_devices)`` leaves out; none below 4 physical cores."""
    phys = physical_cores(usable_cores() if cores is None else sorted(cores))
    if len(phys) < 4 or n_devices <= 0:
        return []
    keep = max(3, len(phys) - n_devices)
    return [list(p) for p in phys[keep:]]
