"""Operator signatures: ops that would cost the same are measured once (PartitionTuner §3.1
gives a partition an id built from its operators' attributes; HOPE §4.1 notes how few
distinct shapes a big model has).

A node's signature is its op type and domain, its attributes, the shape and dtype of every
input and output, which inputs are constants, and the values of small integer constants
(a Reshape's target, a Slice's starts). Control-flow nodes (subgraph attributes) are never
shared. A group's signature chains its members' signatures and its internal wiring.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetlab.graph.ir import OpGraph

SMALL_CONST = 64  # integer constants up to this many elements enter the signature by value


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return {"a": v.dtype.str, "s": list(v.shape), "v": v.ravel().tolist()[:256]}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    if isinstance(v, float) and np.isnan(v):
        return "nan"
    return v


def node_key(
    graph: OpGraph, node_id: str, consts: dict[str, np.ndarray] | None = None
) -> list[Any]:
    """The JSON-able description that ``node_signature`` hashes."""
    n = graph.node(node_id)
    ins = []
    for t in n.inputs:
        if not t:
            ins.append(None)
            continue
        ten = graph.tensors.get(t)
        item: list[Any] = [
            list(ten.shape) if ten and ten.shape is not None else None,
            ten.dtype if ten else "?",
            t in graph.consts,
        ]
        if t in graph.consts and consts is not None and t in consts:
            a = consts[t]
            if a.dtype.kind in "iub" and a.size <= SMALL_CONST:
                item.append(a.ravel().tolist())
        ins.append(item)
    outs = [
        [
            list(graph.tensors[t].shape or ()) if t in graph.tensors else None,
            graph.tensors[t].dtype if t in graph.tensors else "?",
        ]
        for t in n.outputs
        if t
    ]
    attrs = {k: _plain(v) for k, v in sorted(n.attrs.items())}
    key: list[Any] = [n.domain or "", n.op_type, attrs, ins, outs]
    if any(v == "<graph>" for v in n.attrs.values()) or n.outer_inputs:
        key.append({"unique": n.id})  # bodies are not kept in the IR: never share
    return key


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:20]


def node_signature(
    graph: OpGraph, node_id: str, consts: dict[str, np.ndarray] | None = None
) -> str:
    """A short hash of ``node_key``: equal for ops that cost the same."""
    return _digest(node_key(graph, node_id, consts))


def group_signature(
    graph: OpGraph, members: Sequence[str], consts: dict[str, np.ndarray] | None = None
) -> str:
    """Members' node keys in order, plus which member feeds which input of the next."""
    pos = {
        t: (i, j) for i, v in enumerate(members) for j, t in enumerate(graph.node(v).outputs) if t
    }
    wiring = [[pos.get(t) for t in graph.node(v).inputs] for v in members]
    return _digest([[node_key(graph, v, consts) for v in members], wiring])
