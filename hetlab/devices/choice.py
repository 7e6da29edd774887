"""Devices by name, with the platform options given as arguments instead of a file.

What a platform file says about queues and the whole CPU (``platform.py``) can be given
directly: ``queues={"cuda0": 4}`` exposes ``cuda0`` as four streams (``cuda0``,
``cuda0.q1``, ``cuda0.q2``, ``cuda0.q3``), ``whole_cpu="cpu"`` adds the CPU groups' cores as
one device. A queue view's name says which queues its device needs (``cuda0.q3`` needs four),
so a plan or a problem that names views finds them without any option (``implied_queues``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hetlab.devices import platform as machine
from hetlab.devices.base import Device
from hetlab.devices.platform_file import NAME_RE, read_platform
from hetlab.devices.precision_choice import PrecisionChoice, at_precision
from hetlab.errors import HetlabError

Platform = str | os.PathLike | dict | None
VIEW_RE = re.compile(r"^(?P<device>.+)\.q(?P<index>[1-9][0-9]*)$")
MAX_QUEUES = 16


def parse_queues(text: str | Sequence[str] | None) -> dict[str, int]:
    """``"cuda0=4,cl0=2"`` (or a list of such) as ``{"cuda0": 4, "cl0": 2}``; one clear line
    for anything else."""
    if not text:
        return {}
    parts = [text] if isinstance(text, str) else list(text)
    out: dict[str, int] = {}
    for item in (p.strip() for part in parts for p in part.split(",")):
        if not item:
            continue
        name, sep, count = item.partition("=")
        if not sep or not NAME_RE.match(name.strip()) or not count.strip().isdigit():
            raise HetlabError(f"--queues wants DEVICE=N (e.g. cuda0=4), got {item!r}")
        out[name.strip()] = int(count)
    return check_queues(out)


def check_queues(queues: Mapping[str, int]) -> dict[str, int]:
    """``queues`` checked: each count from 1 to ``MAX_QUEUES``."""
    for name, n in queues.items():
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_QUEUES:
            raise HetlabError(f"{name} may have 1 to {MAX_QUEUES} queues, not {n!r}")
    return dict(queues)


def implied_queues(names: Iterable[str]) -> dict[str, int]:
    """The queues that the views among ``names`` need: ``cuda0.q3`` -> ``{"cuda0": 4}``."""
    out: dict[str, int] = {}
    for name in names:
        m = VIEW_RE.match(name)
        if m:
            dev = m["device"]
            out[dev] = max(out.get(dev, 1), int(m["index"]) + 1)
    return out


def platform_doc(
    platform: Platform = None,
    queues: Mapping[str, int] | None = None,
    whole_cpu: str | None = None,
) -> Platform:
    """``platform`` (a file, a document or None for this machine's defaults) with ``queues``
    and ``whole_cpu`` applied; ``platform`` itself where there is nothing to apply."""
    queues = check_queues(queues or {})
    if not queues and not whole_cpu:
        return platform
    if platform is None:
        doc: dict[str, Any] = {}
    elif isinstance(platform, dict):
        doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in platform.items()}
    else:
        doc = read_platform(platform)
        doc = {k: v for k, v in doc.items() if v is not None}
    for section in ("opencl", "cuda"):  # a device's section is the one that discovers it
        table = dict(doc.get(section) or {})
        table["queues"] = {**(table.get("queues") or {}), **queues}
        doc[section] = table
    if whole_cpu:
        doc["whole_cpu"] = whole_cpu
    return doc


def platform_devices(
    platform: Platform = None,
    queues: Mapping[str, int] | None = None,
    whole_cpu: str | None = None,
) -> list[Device]:
    """This machine's devices with the options applied; a queue count for a device that is
    not here is one clear line."""
    found = machine.devices(platform_doc(platform, queues, whole_cpu))
    names = {d.name for d in found}
    missing = sorted(set(queues or {}) - names)
    if missing:
        raise HetlabError(
            f"--queues names {missing[0]!r}, which is not a device here; devices: "
            f"{', '.join(sorted(n for n in names if not VIEW_RE.match(n)))}"
        )
    return found


def select(
    names: str | Sequence[str | Device],
    platform: Platform = None,
    queues: Mapping[str, int] | None = None,
    whole_cpu: str | None = None,
    precision: PrecisionChoice = None,
) -> list[Device]:
    """The devices called ``names`` (a list, or ``"a,b"``), in that order, each queue view
    of ``queues`` included after its device; devices given as objects are kept as they are.
    ``precision``: what they run at (``precision_choice.at_precision``)."""
    wanted = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    wanted = [n for n in wanted if n != ""]
    if not wanted:
        raise HetlabError(
            "--devices names no device; e.g. --devices cpu0,cl0 (see 'hetlab devices')"
        )
    labels = [n if isinstance(n, str) else n.name for n in wanted]
    if len(set(labels)) != len(labels):
        raise HetlabError(f"a device is named twice: {','.join(labels)}")
    queues = {**implied_queues(n for n in wanted if isinstance(n, str)), **(queues or {})}
    have = {d.name: d for d in platform_devices(platform, queues, whole_cpu)}
    out: list[Device] = []
    for n in wanted:
        if not isinstance(n, str):
            out.append(n)
            continue
        if n not in have:
            raise HetlabError(
                f"unknown device {n!r}; devices here: {', '.join(have) or 'none'} "
                "(see 'hetlab devices')"
            )
        out.append(have[n])
        out += [have[f"{n}.q{k}"] for k in range(1, queues.get(n, 1)) if f"{n}.q{k}" not in labels]
    return at_precision(list(dict.fromkeys(out)), precision)
