"""A unit's prebuilt launch plan: the kernel launches, the tensors they read (``Ref``) and
the buffers that hold them. ``UnitBuilder`` (``builder.py``) makes one; the backend's
device runs it, rebinding only the buffers of the unit's inputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hetlab.devices.kernels.bounds import Checks
from hetlab.devices.unit import node_time
from hetlab.timeline import Interval


@dataclass
class Ref:
    """A kernel argument that is a tensor's buffer, resolved when the plan is finished."""

    name: str


@dataclass
class Launch:
    node: str
    kernel: Any
    gsize: tuple[int, ...]
    lsize: tuple[int, ...] | None
    args: list[Any]


@dataclass
class LaunchPlan:
    """A prepared kernel unit's launches and buffers: the handle its device runs."""

    device: Any
    launches: list[Launch]
    node_ids: list[str]
    fused: dict[str, str]
    alias: dict[str, str]
    buffers: dict[str, Any]
    slots: dict[str, list[tuple[Launch, int]]]
    shapes: dict[str, tuple[int, ...]]
    keep: list[Any] = field(default_factory=list)
    checks: Checks | None = None  # the bounds-checked build's error record (bounds.py)
    dtypes: dict[str, str] = field(default_factory=dict)  # tensors that are not float32
    _bound: dict[str, Any] = field(default_factory=dict)
    _stage: dict[str, Any] = field(default_factory=dict)

    def staging(self, name: str) -> Any:
        root = self.alias.get(name, name)
        if root not in self._stage:
            self._stage[root] = self.device.alloc(
                self.shapes[root], self.dtypes.get(root, "float32")
            )
        return self._stage[root]

    def bind(self, name: str, buf: Any) -> None:
        root = self.alias.get(name, name)
        if self._bound.get(root) is buf:
            return
        for launch, i in self.slots.get(root, []):
            launch.kernel.set_arg(i, buf.buf)
            if self.checks is not None:
                self.checks.bound(launch, i, buf.buf)
        self._bound[root] = buf

    def result(self, name: str) -> Any:
        root = self.alias.get(name, name)
        buf = self.buffers.get(root) or self._bound[root]
        if buf.shape != self.shapes[name]:
            buf = type(buf)(buf.buf, self.shapes[name], buf.dtype, buf.device)
        return buf


def node_times(h: Any, span: dict[str, list[float]], idle: float, device: str) -> list[Interval]:
    """The node times on ``device`` of the unit whose handle is ``h`` from its launches'
    ``span``: a node fused into its producer's launch sits at that launch's end, and a node
    with no launch (a pure view: Reshape, Identity...) at ``idle``."""
    out = []
    for nid in h.node_ids:
        host = h.fused.get(nid)
        if host is not None and host in span:
            out.append(node_time(device, nid, span[host][1], span[host][1]))
        elif nid in span:
            out.append(node_time(device, nid, *span[nid]))
        else:
            out.append(node_time(device, nid, idle, idle))
    return out
