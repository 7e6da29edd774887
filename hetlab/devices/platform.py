"""The devices of this machine: CPU core groups, then every OpenCL device found, then every
CUDA device.

Without a platform file the CPU groups are the defaults (``cpu_groups.py``: the cores this
process may use, as many as the container's quota grants, in one or two groups), and each
OpenCL GPU (or accelerator) first gets one physical core of its own, the last ones, for the
thread that drives it: NVIDIA's driver spin-waits on the host, and an unpinned driving thread
that lands in a group's cores slows that group's onnxruntime pool while the GPU is busy
(docs/decisions.md#gpu-driving-thread). A platform file (``--platform FILE``,
``platform_file.py``) sets the groups and selects, renames, pins and splits into queues the
accelerators.

A whole-CPU device and the groups are alternatives (``covers``): a plan uses one or the
other, and the schedulers try both (``schedulers.base.best_alternative``).

OpenCL discovery (``hetlab.devices.opencl.discover``) and CUDA discovery
(``hetlab.devices.cuda.discover``, through CuPy) are imported lazily; when one is missing or
finds nothing, there are no devices of that kind. CUDA devices follow the OpenCL ones and get
no core of their own by default: a captured graph costs the host one launch per run.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

from hetlab.devices import cpu_groups
from hetlab.devices.base import Device, is_accelerator
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.devices.platform_file import read_platform, validate_platform
from hetlab.errors import HetlabError

_CACHE: dict[Any, list[Device]] = {}


def _discovered(backend: str) -> list[Device]:
    """Every device the ``backend`` package (``opencl``, ``cuda``) finds, or none when the
    backend is absent or finds nothing."""
    try:
        # lazy: each backend is optional (its driver library may be missing or broken)
        module = importlib.import_module(f"hetlab.devices.{backend}")
    except ImportError:
        return []
    try:
        return list(module.discover())
    except HetlabError:
        raise
    except Exception:  # noqa: BLE001 - no ICD, no driver, broken install: no devices
        return []


def opencl_devices() -> list[Device]:
    """Every OpenCL device found, or none when the backend is absent or finds nothing."""
    return _discovered("opencl")


def _selected(found: list[Device], section: dict[str, Any]) -> list[Device]:
    keep = section.get("include")
    return [
        d
        for d in found
        if (keep is None or d.name in keep) and d.name not in section.get("exclude", [])
    ]


def devices(platform: str | os.PathLike | dict | None = None) -> list[Device]:
    """The devices of this machine (CPU groups, OpenCL, then CUDA), per ``platform`` if given
    (a file path or an already parsed document). Cached per platform file and mtime (a
    document by its content), so the sessions a device has built are reused by later runs."""
    if platform is None:
        key: Any = None
        conf: dict[str, Any] = {"cpu": None, "opencl": {"names": {}}, "cuda": {"names": {}}}
    elif isinstance(platform, dict):
        conf = validate_platform(platform)
        key = (
            "document",
            json.dumps(platform, sort_keys=True),
            tuple(cpu_groups.available_cores()),
        )
    else:
        conf = read_platform(platform)
        key = (str(Path(platform).resolve()), Path(platform).stat().st_mtime_ns)
    if key in _CACHE:
        return list(_CACHE[key])

    cl, cu = conf["opencl"], conf.get("cuda", {"names": {}})
    found = _selected(opencl_devices(), cl)
    pinned = dict(cl.get("host_cores", {}))
    groups = conf["cpu"]
    if groups is None:  # defaults: each GPU's driving thread gets a core of its own
        gpus = [d for d in found if _is_gpu(d)]
        groups = cpu_groups.default_groups(reserve=len(cpu_groups.host_cores(len(gpus))))
        for d, cores in zip(gpus, cpu_groups.host_cores(len(gpus)), strict=False):
            pinned.setdefault(d.name, cores)
    out: list[Device] = [
        OrtCpuDevice(g["name"], g["cores"], g.get("threads"), spin=g.get("spin", "auto"))
        for g in groups
    ]
    if conf.get("whole_cpu"):
        out.append(whole_cpu(conf["whole_cpu"], groups))
    out += _configured(found, cl, pinned)
    out += _configured(_selected(_discovered("cuda"), cu), cu, dict(cu.get("host_cores", {})))
    names = [d.name for d in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise HetlabError(f"two devices are named {dup[0]!r}; rename one in the platform file")
    _CACHE[key] = list(out)
    return out


def _configured(found: list[Device], section: dict[str, Any], pinned: dict) -> list[Device]:
    """``found`` pinned, renamed and split into queues as ``section`` says."""
    out: list[Device] = []
    for d in found:
        if d.name in pinned:
            d.host_cores = list(pinned[d.name])
        queues = section.get("queues", {}).get(d.name, 1)
        if d.name in section.get("names", {}):
            d.name = section["names"][d.name]
        out.append(d)
        out += [d.queue_view(k) for k in range(1, queues)]
    return out


def whole_cpu(name: str, groups: list[dict[str, Any]]) -> Device:
    """One onnxruntime device on every core of ``groups``, with one thread per thread of
    theirs; ``covers`` names the groups it is the alternative to. Its pool threads are not
    pinned one per core, as in a plain session: with the whole CPU to itself there is nothing
    to keep apart, and pinned pools measured slower and more erratic on the whole CPU
    (docs/decisions.md#the-whole-cpu)."""

    cores = sorted({c for g in groups for c in g["cores"]})
    threads = sum(int(g.get("threads") or len(g["cores"])) for g in groups)
    dev = OrtCpuDevice(name, cores, threads, pin_pool=False)
    dev.covers = [g["name"] for g in groups]
    return dev


def _is_gpu(d: Device) -> bool:
    try:
        return d.info().get("type") in ("GPU", "ACCELERATOR")
    except Exception:  # noqa: BLE001 - a device that cannot describe itself is not reserved for
        return False


def get(name: str, platform: str | os.PathLike | dict | None = None) -> Device:
    """The device called ``name``; an unknown name is one clear error."""
    devs = devices(platform)
    for d in devs:
        if d.name == name:
            return d
    raise HetlabError(
        f"unknown device {name!r}; devices here: {', '.join(d.name for d in devs)} "
        "(see 'hetlab devices')"
    )


def one_driver_per_gpu(devs: list[Device]) -> list[Device]:
    """``devs`` less the OpenCL devices and queues of GPUs that a CUDA device in ``devs``
    also drives (one PCI address): the CUDA device runs a plan's GPU part as one graph, and
    one GPU profiled twice would be planned as two devices."""
    by_cuda = {d.hardware_id() for d in devs if d.kind == "cuda"} - {None}
    return [d for d in devs if not (d.kind == "opencl" and d.hardware_id() in by_cuda)]


def first_cpu(devs: list[Device]) -> Device:
    """The first non-OpenCL device (where unsupported nodes and fallbacks run)."""
    for d in devs:
        if not is_accelerator(d):
            return d
    raise HetlabError("no CPU device: the platform file must list at least one [[cpu]] group")
