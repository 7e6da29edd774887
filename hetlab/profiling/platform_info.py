"""What a profile was measured on: CPU model, core groups, OpenCL platform/device/driver."""

from __future__ import annotations

import os
import platform as _pf
from collections.abc import Sequence
from typing import Any

from hetlab.devices.base import Device


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (else ``platform.processor()``)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _pf.processor() or _pf.machine()


def describe(devices: Sequence[Device]) -> dict[str, Any]:
    """``problem["platform"]``: host, CPU, the devices' ``info()`` (core groups carry their
    cores and threads, OpenCL devices their platform, device and driver)."""
    import onnxruntime as ort

    infos = []
    for d in devices:
        try:
            infos.append(d.info())
        except Exception as e:  # noqa: BLE001 - a broken info() must not lose the profile
            infos.append({"name": d.name, "kind": d.kind, "error": str(e)[:200]})
    return {
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "machine": _pf.machine(),
        "system": f"{_pf.system()} {_pf.release()}",
        "python": _pf.python_version(),
        "onnxruntime": ort.__version__,
        "core_groups": [i for i in infos if "cores" in i],
        "opencl": [i for i in infos if i.get("kind") == "opencl"],
        "devices": infos,
    }
