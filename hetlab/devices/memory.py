"""Whether a graph's tensors fit the devices that would hold them, checked before anything
is allocated, with one line naming what does not fit and where."""

from __future__ import annotations

from collections.abc import Iterable

from hetlab.devices.base import Device
from hetlab.devices.cgroup import memory_bytes as host_memory_bytes
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph, Tensor


def check_fits(graph: OpGraph, placed: Iterable[tuple[str, Device]]) -> None:
    """Refuse, before anything is allocated, a graph whose tensors cannot exist on the
    devices that would hold them: a model input or output larger than the host's memory, a
    tensor that a node reads or writes larger than its device's largest buffer, or a node
    whose inputs and outputs together exceed its device's memory. ``placed``: (node id,
    device) pairs. One line names the tensor (or node), its size and the device's."""
    seen: set[tuple[str, str]] = set()
    limits: dict[str, tuple[int | None, int | None]] = {}
    nodes = {n.id: n for n in graph.nodes}
    for v, d in placed:
        node = nodes.get(v)
        if node is None:  # a plan's unknown node: the plan's own check names it
            continue
        io = [
            graph.tensors[t]
            for t in dict.fromkeys(node.inputs + node.outputs)
            if t in graph.tensors
        ]
        io = [t for t in io if t.nbytes > 0]
        if d.name not in limits:
            limits[d.name] = (d.max_alloc_bytes(), d.memory_bytes())
        cap, mem = limits[d.name]
        for ten in io:
            if (ten.name, d.name) in seen:
                continue
            seen.add((ten.name, d.name))
            if cap is not None and ten.nbytes > cap:
                what = "memory" if cap == mem else "largest buffer"
                raise HetlabError(f"{_tensor_text(ten)} does not fit {d.name}'s {what} {_fix(cap)}")
        total = sum(t.nbytes for t in io)
        if mem is not None and total > mem:
            parts = ", ".join(f"{t.name!r} {human_bytes(t.nbytes)}" for t in io)
            raise HetlabError(
                f"node {v!r} ({node.op_type}) reads and writes {human_bytes(total)} ({parts}), "
                f"more than {d.name}'s memory {_fix(mem)}"
            )
    host = host_memory_bytes()
    for t in list(graph.inputs) + list(graph.outputs):
        ten = graph.tensors.get(t)
        if ten is not None and host is not None and ten.nbytes > host:
            raise HetlabError(f"{_tensor_text(ten)} does not fit the host's memory {_fix(host)}")


def human_bytes(n: float) -> str:
    """``n`` bytes in binary units, three significant digits (``3.64 TiB``, ``24 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"


def _tensor_text(t: Tensor) -> str:
    dims = "x".join(str(int(x)) for x in t.shape or ()) or "scalar"
    return f"tensor {t.name!r} ({dims} {t.dtype}, {human_bytes(t.nbytes)})"


def _fix(limit: int) -> str:
    return f"({human_bytes(limit)}); choose a smaller --shape or a device with more memory"
