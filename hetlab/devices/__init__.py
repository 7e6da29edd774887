"""Devices: the interface (``base``), onnxruntime CPU groups, OpenCL, a fake, the platform."""

from __future__ import annotations

import importlib

__all__ = ["FakeDevice", "OrtCpuDevice", "devices", "first_cpu", "get"]

_LAZY = {
    "devices": "hetlab.devices.platform",
    "get": "hetlab.devices.platform",
    "first_cpu": "hetlab.devices.platform",
    "OrtCpuDevice": "hetlab.devices.ort_cpu",
    "FakeDevice": "hetlab.devices.fake",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hetlab.devices' has no attribute {name!r}")
