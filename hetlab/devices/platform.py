"""The devices of this machine: CPU core groups, then every OpenCL device found.

Default CPU groups come from the cores this process may use (``os.sched_getaffinity``), only
as many as the container's cgroup CPU quota grants (``hetlab.devices.cgroup``): fewer than 4 cores -> one group per core (``cpu0``, ``cpu1``, ...); 4 or more -> two
halves (16 cores -> 8 + 8). With 4 or more physical cores, each OpenCL GPU (or accelerator)
first gets one physical core of its own, the last ones, for the thread that drives it
(16 cores + one GPU -> cpu0 = 0-7, cpu1 = 8-14, the GPU's thread on 15): NVIDIA's driver
spin-waits on the host, and an unpinned driving thread that lands in a group's cores slows
that group's onnxruntime pool while the GPU is busy (docs/decisions.md#gpu-driving-thread).
A platform file (``--platform FILE``, TOML or JSON) overrides
them and names devices::

    [[cpu]]
    name = "big"
    cores = [0, 1, 2, 3]
    threads = 4          # optional, default len(cores)
    spin = "auto"        # optional: onnxruntime pool spinning: auto (default), on, stop, off

    [opencl]
    include = ["cl0"]    # optional: keep only these OpenCL devices (default: all)
    exclude = []         # optional
    names = {cl0 = "gpu"}  # optional: rename
    host_cores = {cl0 = [15]}  # optional: pin the thread driving cl0 (default: unpinned)
    queues = {cl0 = 4}   # optional: cl0 as 4 queues, cl0 (queue 0), cl0.q1, cl0.q2, cl0.q3

    [cuda]               # optional: CUDA devices (cuda0...), the same keys as [opencl];
    queues = {cuda0 = 4} # queues are streams: cuda0, cuda0.q1, cuda0.q2, cuda0.q3

    whole_cpu = "cpu"     # optional: also the CPU groups' cores as one device of that name

A whole-CPU device and the groups are alternatives (``covers``): a plan uses one or the
other, and the schedulers try both (``schedulers.base.best_alternative``).

The JSON form has the same keys. OpenCL discovery (``hetlab.devices.opencl.discover``) and
CUDA discovery (``hetlab.devices.cuda.discover``, through CuPy) are imported lazily; when one
is missing or finds nothing, there are no devices of that kind. CUDA devices follow the
OpenCL ones and get no core of their own by default: a captured graph costs the host one
launch per run.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from hetlab.devices import cgroup
from hetlab.devices.base import Device, is_accelerator
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.devices.topology import physical_cores
from hetlab.errors import HetlabError

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_CACHE: dict[Any, list[Device]] = {}


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


def read_platform(path: str | os.PathLike) -> dict[str, Any]:
    """Parse and validate a platform file (TOML, or JSON by extension or content)."""
    p = Path(path)
    if not p.is_file():
        raise HetlabError(f"platform file not found: {p}")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise HetlabError(f"cannot read platform file {p}: {e}") from None
    if p.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise HetlabError(
                f"platform file {p} is not valid JSON (line {e.lineno}: {e.msg})"
            ) from None
    else:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise HetlabError(f"platform file {p} is not valid TOML ({e})") from None
    return validate_platform(doc, str(p))


def validate_platform(doc: Any, source: str = "platform") -> dict[str, Any]:
    """Check a platform document; returns ``{"cpu": [groups] | None, "opencl": {...}}``."""
    if not isinstance(doc, dict):
        raise HetlabError(f"{source}: a platform must be a table/object with 'cpu' and/or 'opencl'")
    if not {"cpu", "opencl", "cuda", "whole_cpu"} & set(doc):
        # other keys are ignored, but one of these is the point
        raise HetlabError(
            f"{source}: no 'cpu' groups and no 'opencl' section; is this a platform file?"
        )
    have = set(available_cores())
    groups = _cpu_groups(doc["cpu"], source, have) if "cpu" in doc else None
    out_cl = _accelerator_section(doc.get("opencl", {}), source, have, "opencl")
    out_cuda = _accelerator_section(doc.get("cuda", {}), source, have, "cuda")
    whole = doc.get("whole_cpu")
    if whole is not None and (not isinstance(whole, str) or not NAME_RE.match(whole)):
        raise HetlabError(f'{source}: whole_cpu must be a device name such as "cpu"')
    return {"cpu": groups, "opencl": out_cl, "cuda": out_cuda, "whole_cpu": whole}


def _cpu_groups(raw: Any, source: str, have: set[int]) -> list[dict[str, Any]]:
    """The platform's ``cpu`` groups, checked: names unique, cores existing and disjoint."""
    if not isinstance(raw, list) or not raw:
        raise HetlabError(f"{source}: 'cpu' must be a non-empty list of groups ([[cpu]] in TOML)")
    groups: list[dict[str, Any]] = []
    used: dict[int, str] = {}
    names: set[str] = set()
    for i, g in enumerate(raw):
        groups.append(_cpu_group(i, g, source, have, used, names))
    return groups


def _cpu_group(
    i: int, g: Any, source: str, have: set[int], used: dict[int, str], names: set[str]
) -> dict[str, Any]:
    """Group ``i`` checked; ``used`` (core -> group) and ``names`` collect what it takes."""
    where = f"{source}: cpu group {i + 1}"
    if not isinstance(g, dict):
        raise HetlabError(f"{where} must be a table with name and cores")
    name = g.get("name", f"cpu{i}")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise HetlabError(f"{where}: bad name {name!r} (letters, digits, _ . -)")
    if name in names:
        raise HetlabError(f"{where}: duplicate device name {name!r}")
    names.add(name)
    cores = g.get("cores")
    if (
        not isinstance(cores, list)
        or not cores
        or not all(isinstance(c, int) and not isinstance(c, bool) for c in cores)
    ):
        raise HetlabError(f"{where} ({name}): 'cores' must be a non-empty list of core ids")
    bad = sorted({c for c in cores if c not in have})
    if bad:
        raise HetlabError(
            f"{where} ({name}): core(s) {bad} do not exist here; "
            f"this process can use cores {sorted(have)}"
        )
    for c in cores:
        if c in used:
            raise HetlabError(f"{where} ({name}): core {c} is already in group {used[c]!r}")
        used[c] = name
    threads = g.get("threads", len(cores))
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 1024:
        raise HetlabError(f"{where} ({name}): 'threads' must be a positive integer")
    spin = g.get("spin", "auto")
    if spin not in ("auto", "on", "stop", "off"):
        raise HetlabError(f"{where} ({name}): 'spin' must be auto, on, stop or off")
    return {"name": name, "cores": sorted(set(cores)), "threads": threads, "spin": spin}


def _accelerator_section(cl: Any, source: str, have: set[int], key: str) -> dict[str, Any]:
    """The platform's ``opencl`` or ``cuda`` table (``key``), checked: include/exclude, names,
    host_cores, queues."""
    if not isinstance(cl, dict):
        raise HetlabError(f"{source}: '{key}' must be a table with include/exclude/names")
    out_cl: dict[str, Any] = {}
    for k in ("include", "exclude"):
        v = cl.get(k)
        if v is not None:
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise HetlabError(f"{source}: {key}.{k} must be a list of device names")
            out_cl[k] = list(v)
    names = cl.get("names", {})
    if not isinstance(names, dict) or not all(
        isinstance(v, str) and NAME_RE.match(v) for v in names.values()
    ):
        raise HetlabError(f"{source}: {key}.names must map device names to new names")
    out_cl["names"] = dict(names)
    hc = cl.get("host_cores", {})
    if not isinstance(hc, dict) or not all(
        isinstance(v, list)
        and v
        and all(isinstance(c, int) and not isinstance(c, bool) and c in have for c in v)
        for v in hc.values()
    ):
        raise HetlabError(
            f"{source}: {key}.host_cores must map device names to lists of cores of this machine"
        )
    out_cl["host_cores"] = {k: sorted(set(v)) for k, v in hc.items()}
    queues = cl.get("queues", {})
    if not isinstance(queues, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 16 for v in queues.values()
    ):
        raise HetlabError(
            f"{source}: {key}.queues must map device names to a number of queues from 1 to 16"
        )
    out_cl["queues"] = dict(queues)
    return out_cl


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
        key = ("document", json.dumps(platform, sort_keys=True), tuple(available_cores()))
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
        groups = default_groups(reserve=len(host_cores(len(gpus))))
        for d, cores in zip(gpus, host_cores(len(gpus)), strict=False):
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
