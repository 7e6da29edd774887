"""Devices: the interface (``base``), onnxruntime CPU groups, OpenCL, the platform; ``replay``
replays a problem's costs (a profile measured elsewhere, and the tests)."""

from __future__ import annotations

import importlib

__all__ = ["OrtCpuDevice", "devices", "first_cpu", "get"]

_LAZY = {
    "devices": "hetlab.devices.platform",
    "get": "hetlab.devices.platform",
    "first_cpu": "hetlab.devices.platform",
    "OrtCpuDevice": "hetlab.devices.ort_cpu",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hetlab.devices' has no attribute {name!r}")
