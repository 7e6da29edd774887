"""Devices: the interface (``base``; what a backend declares: ``Capabilities``), a plan bound
to a model and its devices (``bind`` -> ``BoundPlan``), onnxruntime
CPU groups, OpenCL, CUDA, the platform and the choice of devices by name with its options
(``select``); ``replay_devices`` replays a problem's costs (a profile measured elsewhere, and
the tests); ``cgroup`` reads what the container grants (``cgroup.limits()``,
``cgroup.cpu_count()``, ``cgroup.memory_bytes()``)."""

from __future__ import annotations

from hetlab.lazy import lazy_names

__all__ = [
    "BoundPlan",
    "Capabilities",
    "Device",
    "OrtCpuDevice",
    "at_precision",
    "bind",
    "cgroup",
    "default_groups",
    "devices",
    "first_cpu",
    "get",
    "graph_from_problem",
    "implied_queues",
    "is_accelerator",
    "opencl_devices",
    "parse_precision",
    "parse_queues",
    "platform_devices",
    "replay_devices",
    "select",
]

_LAZY = {
    "BoundPlan": "hetlab.devices.bound",
    "bind": "hetlab.devices.binding",
    "Capabilities": "hetlab.devices.capabilities",
    "Device": "hetlab.devices.base",
    "is_accelerator": "hetlab.devices.base",
    "default_groups": "hetlab.devices.cpu_groups",
    "select": "hetlab.devices.choice",
    "platform_devices": "hetlab.devices.choice",
    "parse_queues": "hetlab.devices.choice",
    "parse_precision": "hetlab.devices.precision_choice",
    "at_precision": "hetlab.devices.precision_choice",
    "implied_queues": "hetlab.devices.choice",
    "devices": "hetlab.devices.platform",
    "get": "hetlab.devices.platform",
    "first_cpu": "hetlab.devices.platform",
    "opencl_devices": "hetlab.devices.platform",
    "OrtCpuDevice": "hetlab.devices.ort_cpu",
    "replay_devices": "hetlab.devices.replay",
    "graph_from_problem": "hetlab.devices.replay",
}
# submodules the face exports whole, imported on first use
_MODULES = {"cgroup"}


__getattr__ = lazy_names(__name__, _LAZY, _MODULES)
