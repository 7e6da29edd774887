"""What a one-device run leaves on another device: ``hetlab run --device NAME`` places every
node ``NAME`` supports there and the rest on the first CPU device, and each tensor that
crosses between the two is a round trip through the host. When that makes the run slower
than the CPU alone, the report says why: how many nodes stayed behind, which ops, and how
many tensors crossed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan

SHOWN_OPS = 5  # op types named in the summary line


def left_behind(graph: OpGraph, plan: Plan, device: str) -> dict[str, Any] | None:
    """``{"device", "to", "nodes", "of", "ops", "crossing"}`` for a run of ``graph`` on
    ``device`` whose ``plan`` puts some nodes elsewhere; None when none is."""
    device_of = plan.device_of
    behind = [n for n in graph.nodes if device_of[n.id] != device]
    if not behind:
        return None
    others = Counter(device_of[n.id] for n in behind)
    crossing = {
        (t, device_of[e.dst])
        for e in graph.edges
        if device_of[e.src] != device_of[e.dst]
        for t in e.tensors
    }
    return {
        "device": device,
        "to": others.most_common(1)[0][0],
        "nodes": len(behind),
        "of": len(graph.nodes),
        "ops": dict(Counter(n.op_type for n in behind).most_common()),
        "crossing": len(crossing),
    }


def left_behind_line(doc: Mapping[str, Any], model: str | None = None) -> str:
    """The report's line for ``doc`` (``left_behind``'s dict), with what to try instead."""
    ops = ", ".join(f"{op} ×{k}" for op, k in list(doc["ops"].items())[:SHOWN_OPS])
    more = len(doc["ops"]) - SHOWN_OPS
    ops += f", {more} more op types" if more > 0 else ""
    share = 100.0 * doc["nodes"] / max(doc["of"], 1)
    devs = f"{doc['device']},{doc['to']}"
    return (
        f"{doc['nodes']} of {doc['of']} nodes ({share:.0f}%) ran on {doc['to']}, not "
        f"{doc['device']}: {ops}; {doc['crossing']} tensors crossed between them, each a "
        f"round trip through the host. `hetlab recommend {model or 'MODEL'} --devices {devs}` "
        "weighs a mixed plan against each device alone"
    )
