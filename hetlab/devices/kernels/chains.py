"""Element-wise chains of a unit on a CPU device (planned by ``UnitBuilder`` after the
epilogues, ``fusion.py``): chains of float32 element-wise nodes, each one's output read only
by the next, into one launch (``ops/fused.py``), with the element-wise nodes that make an
operand for a member alone as sub-expressions (up to the chain's four inputs); likewise
chains of nodes computing on float16 tensors (``widen.py``), each term rounded to float16, no
other node reading the float16 tensors inside the chain."""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.fusion import kept
from hetlab.devices.kernels.ops.fused import Chain, fusable
from hetlab.graph.ir import Node


def _chain_next(ub: Any, n: Node) -> Node | None:
    """The node that can extend a chain ending at ``n``: the only reader of its output, in
    the unit, taken by no other fusion; None where ``n`` ends the chain."""
    y = ub.final[n.id]
    cons = ub.consumers.get(y, [])
    if len(cons) != 1 or y in ub.outputs or cons[0] not in ub.position:
        return None
    if n.id in ub.widened and ub.sole_twin.get(y) != y:  # its float16 result read elsewhere
        return None  # too (as float16, or from its twin through a view)
    c = ub.graph.node(cons[0])
    skip = c.id in ub.fused or (c.id in ub.widened) != (n.id in ub.widened) or c.id in ub.chains
    return None if skip or not fusable(c) else c


def _take_side(ub: Any, chain: Chain, node: Node, members: list[Node]) -> None:
    """Before ``node`` joins ``chain``: each operand of it that an element-wise node makes
    for ``node`` alone (of the chain's shape, no unit output, no float16) joins first, with
    its own such operands, as a sub-expression (``Pow(a, 2) + Pow(b, 2)``: one launch)."""
    for t in dict.fromkeys(node.inputs):
        p = ub.producer.get(t)
        if p is None or t in chain.value or ub.consumers.get(t) != [node.id] or kept(ub, t):
            continue
        if p.id in ub.fused or p.id in ub.chains or ub.final.get(p.id) != t or not fusable(p):
            continue
        if p.id in ub.widened or node.id in ub.widened or p in members:
            continue
        _join(ub, chain, p, members)


def _join(ub: Any, chain: Chain, node: Node, members: list[Node]) -> bool:
    """Add ``node`` and its side operands (``_take_side``) to the chain, or none of them."""
    saved = (list(chain.inputs), dict(chain.value), set(chain.deferred), len(members))
    _take_side(ub, chain, node, members)
    if chain.add(node):
        members.append(node)
        return True
    chain.inputs, chain.value, chain.deferred = saved[:3]
    del members[saved[3] :]
    return False


def plan_chains(ub: Any) -> None:
    """On a CPU device, where a launch costs microseconds of the driver's time: each chain of
    two or more element-wise nodes into one launch (``ub.chains``: its last node -> the
    members and their expression), the others fused into the last: the launch goes where
    the last node is, after every input of the chain is computed. A node alone is a chain
    where it rounds a float16 result as it loads it (``ub.deferred``: its maker's rounding
    launch goes)."""
    ub.chains, ub.deferred = {}, set()
    if not ub.device.cpu_kernels:
        return
    for n in ub.nodes:
        if n.id in ub.fused or n.id in ub.chains or not fusable(n):
            continue
        chain, members = Chain(ub, ub.shape(n.outputs[0])), [n]
        if not chain.add(n):
            continue
        while (nxt := _chain_next(ub, members[-1])) is not None and _join(ub, chain, nxt, members):
            pass
        if len(members) < 2 and not chain.deferred or not chain.inputs:
            continue  # one node alone is a chain only where it rounds a float16 result
        last, ids = members[-1].id, {m.id for m in members[:-1]}
        for m in ub.nodes:  # the members, and what was fused into them, run in the last's launch
            if m.id in ids or ub.fused.get(m.id) in ids:
                ub.fused[m.id] = last
        ub.chains[last] = (members, chain)
        ub.deferred |= chain.deferred
