"""Devices that share cores (spec §2's ``shared_cores``): which of a problem's devices cannot
compute at the same time without slowing each other, and how §3 treats them.

The key lists sets of device names; two devices of one set share cores, so §3 runs them as
one resource. A queue view shares what its device shares (``extra.queues``); views of one
device never conflict with each other (their sharing is the queues' ``slowdown``). A problem
written before the key gets it from its ``platform`` section where that says enough: a core
group's ``cores``, and a CPU-type OpenCL device on every usable core. Absent, and not
derivable: nothing is shared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.errors import HetlabError

KEY = "shared_cores"


def check_sets(value: Any, source: str = "problem") -> list[list[str]]:
    """``value`` as a list of device-name lists; anything else is one ``HetlabError`` line."""
    ok = isinstance(value, list) and all(
        isinstance(s, list) and all(isinstance(x, str) for x in s) for s in value
    )
    if not ok:
        raise HetlabError(f"{source}: {KEY} must be a list of lists of device names")
    return [list(s) for s in value]


def device_cores(platform: Mapping[str, Any]) -> dict[str, frozenset[int]]:
    """Each device of a ``platform`` section -> the host cores its compute runs on, for the
    devices the section says enough about: a core group (``cores``), and an OpenCL device of
    type CPU (or, in sections written before the type, PoCL's ``pthread``/``cpu`` device),
    which spreads over every usable core. GPUs and unknown devices are left out."""
    everything = frozenset(range(int(platform.get("usable_cpus") or 0)))
    out: dict[str, frozenset[int]] = {}
    for info in platform.get("devices") or []:
        if not isinstance(info, dict) or "name" not in info:
            continue
        name = str(info["name"])
        if info.get("kind") == "opencl":
            if _cpu_opencl(info) and everything:
                out[name] = everything
        elif isinstance(info.get("cores"), list) and info["cores"]:
            out[name] = frozenset(int(c) for c in info["cores"])
    return out


def _cpu_opencl(info: Mapping[str, Any]) -> bool:
    kind = info.get("type")
    if kind is not None:
        return str(kind).upper() == "CPU"
    dev = str(info.get("device", "")).lower()
    return "portable computing language" in str(info.get("platform", "")).lower() and (
        dev.startswith(("pthread", "cpu"))
    )


def derive(platform: Mapping[str, Any], fam: Mapping[str, str]) -> list[list[str]]:
    """The ``shared_cores`` sets (pairs, sorted) that a ``platform`` section implies: two
    devices of different families whose cores overlap."""
    cores = device_cores(platform)
    fam = {**_views(platform), **fam}
    names = sorted(cores)
    return [
        [a, b]
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if fam.get(a, a) != fam.get(b, b) and cores[a] & cores[b]
    ]


def _views(platform: Mapping[str, Any]) -> dict[str, str]:
    """Each queue view the section lists -> its device (``queue_of``)."""
    return {
        str(i["name"]): str(i["queue_of"])
        for i in platform.get("devices") or []
        if isinstance(i, dict) and "name" in i and i.get("queue_of")
    }


def shared_sets(extra: Mapping[str, Any], fam: Mapping[str, str]) -> list[list[str]]:
    """The problem's ``shared_cores`` sets: the key where given, else what ``platform``
    implies, else none."""
    if KEY in extra:
        return check_sets(extra[KEY])
    plat = extra.get("platform")
    return derive(plat, fam) if isinstance(plat, dict) else []


def occupancy(
    devices: Sequence[str], sets: Sequence[Sequence[str]], fam: Mapping[str, str]
) -> list[list[int]] | None:
    """Per device index: the devices (indices, itself first) that a node computing there
    keeps from computing; None when no two of ``devices`` share cores."""
    root = [fam.get(d, d) for d in devices]
    out = [[i] for i in range(len(devices))]
    for s in sets:
        members = set(s)
        inside = [i for i, d in enumerate(devices) if d in members or root[i] in members]
        for i in inside:
            for j in inside:
                if root[i] != root[j] and j not in out[i]:
                    out[i].append(j)
    if all(len(o) == 1 for o in out):
        return None
    return [[o[0], *sorted(o[1:])] for o in out]


def occupy(free, d: int, f: float, occ: list[list[int]] | None) -> None:
    """Record that device ``d`` computes until ``f`` in ``free`` (a list or array of the
    times each device may next start): its own entry, and those of the devices sharing its
    cores where ``f`` is later."""
    if occ is None:
        free[d] = f
        return
    free[d] = f
    for c in occ[d][1:]:
        free[c] = max(free[c], f)
