"""The prepared units' routes: where each unit's inputs come from and its outputs go.

The units themselves (``UnitSpec``, ``build_units``) are the bound plan's
(``devices/bound.py``); their routes follow the tensors the prepared units read and write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.devices.base import is_accelerator
from hetlab.devices.bound import UnitSpec
from hetlab.devices.runner import Routes
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph

HOST = "host"


class RunError(HetlabError):
    """A unit failed during a run (not a bad input): names the unit, its device and nodes."""

    exit_code = 1


def route(
    graph: OpGraph, specs: Sequence[UnitSpec], units: Sequence[Any], devices: Mapping[str, Any]
) -> Routes:
    """The prepared ``units``' routes (``devices.runner.Routes``): a tensor that changes device goes to the
    host once, from its producer, and into each receiving device once, by its first reader
    there. One line where a unit reads what no unit makes nor the model feeds."""
    producer: dict[str, int] = {}
    for s, u in zip(specs, units, strict=False):
        for t in u.outputs:
            producer[t] = s.index
    n = len(specs)
    recv: list[list[str]] = [[] for _ in range(n)]
    publish: list[list[str]] = [[] for _ in range(n)]
    free_after: list[list[str]] = [[] for _ in range(n)]
    have: dict[tuple[str, str], int] = {}  # (device, tensor) -> unit that brought/made it
    last: dict[tuple[str, str], int] = {}
    published: set[str] = set()
    for s, u in zip(specs, units, strict=False):
        for t in u.inputs:
            p = producer.get(t)
            if p is None and t not in graph.inputs:  # devices hold their own weights (Unit doc)
                what = (
                    "a constant the device should hold" if t in graph.consts else "no unit's output"
                )
                raise RunError(
                    f"{s.label} reads {t!r} as an input: it is {what} and no model input"
                )
            src = HOST if p is None else specs[p].device
            if src != s.device and (s.device, t) not in have:
                recv[s.index].append(t)
                have[s.device, t] = s.index
                if p is not None and t not in published:
                    publish[p].append(t)
                    published.add(t)
            last[s.device, t] = s.index
        for t in u.outputs:
            have[s.device, t] = s.index
            last.setdefault((s.device, t), s.index)
            if t in graph.outputs and t not in published:
                publish[s.index].append(t)
                published.add(t)
    missing = [t for t in graph.outputs if t not in published]
    if missing:
        raise RunError(f"no unit produces model output {missing[0]!r}")
    for (_d, t), i in last.items():
        free_after[i].append(t)
    kernel = {d for d, dev in devices.items() if is_accelerator(dev)}
    return Routes(producer, recv, publish, free_after, fixed_inputs(specs, units, producer, kernel))


def fixed_inputs(
    specs: Sequence[UnitSpec], units: Sequence[Any], producer: Mapping[str, int], kernel: set[str]
) -> dict[str, int]:
    """Each tensor the host hands to a device of ``kernel`` (a model input, or another
    device's output) -> the first unit there that reads it. Kernel units are built for the
    graph's shapes; ``check_fixed`` holds each such tensor to them at run time."""
    out: dict[str, int] = {}
    for s, u in zip(specs, units, strict=False):
        if s.device not in kernel:
            continue
        for t in u.inputs:
            p = producer.get(t)
            if p is None or specs[p].device not in kernel:
                out.setdefault(t, s.index)
    return out


def check_fixed(
    graph: OpGraph, specs: Sequence[UnitSpec], fixed_in: Mapping[str, int], tensor: str, value: Any
) -> None:
    """One line, where ``value`` has another shape than the kernel unit reading ``tensor``
    (``fixed_inputs``) was built for: its shape followed input values the graph's did not."""
    i = fixed_in.get(tensor)
    info = graph.tensors.get(tensor)
    if i is None or info is None or info.shape is None:
        return
    got = tuple(getattr(value, "shape", ()))
    if got != tuple(info.shape):
        raise HetlabError(
            f"{specs[i].label} was built for {tensor!r} of shape {list(info.shape)}, but this "
            f"run gives it shape {list(got)}: its shape depends on the input values, and "
            "kernel devices run the shapes they were built for; place the nodes that read it "
            "on a CPU device"
        )
