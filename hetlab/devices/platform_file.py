"""A platform file (``--platform FILE``, TOML or JSON): read and checked, every mistake one
clear line. It sets the CPU groups and selects, names, pins and splits the accelerators::

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

The JSON form has the same keys. Cores are checked against those this process may use
(``cpu_groups.available_cores``).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from hetlab.devices import cpu_groups
from hetlab.errors import HetlabError

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


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
    have = set(cpu_groups.available_cores())
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
