"""Which kernel launches of one program must wait for which, once its launches are spread
over several streams of one device.

A device's units that run as one captured graph are built as one program (one
``UnitBuilder`` over all their nodes), so every fusion and elided Concat of the one-device
build stays; the plan only decides on which stream each launch is issued. A stream keeps
its own launches in order, so a launch waits only for launches on other streams that make
what it reads.

What a launch reads comes from the graph: the inputs of its node and of the nodes fused into
it (an activation, a BatchNormalization, a residual Add). A tensor is made by the last launch
of its producer's host node (the node a fused producer is fused into); a producer with no
launch of its own (a view, an elided Concat whose producers write into their slices, a value
folded at build time) is made by whatever makes its inputs. Every intermediate tensor has a
buffer of its own (``builder.py``), so no launch overwrites what another still reads; the one
exception, a scatter writing into its data's buffer (``kernels/in_place.py``), happens only
where every other reader of that buffer is an ancestor of the scatter, which the waits
below already order before it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.graph.ir import OpGraph


def launch_waits(
    graph: OpGraph,
    launches: Sequence[Any],
    fused: Mapping[str, str],
    stream_of: Mapping[str, str],
    rank: Sequence[int] | None = None,
) -> list[list[int]]:
    """Per launch, the launches on other streams issued before it that it must wait for
    (indices into ``launches``, each with a ``node``); ``stream_of`` maps a launch's node
    to its stream; ``rank`` is each launch's place in the issue order (default: the
    program's)."""
    last: dict[str, int] = {}
    for i, L in enumerate(launches):
        last[L.node] = i
    covered: dict[str, set[str]] = {}
    for nid, host in fused.items():
        covered.setdefault(host, set()).add(nid)
    producer = graph.producer()
    made_by: dict[str, frozenset[int]] = {}

    def makers(nid: str) -> frozenset[int]:
        """The launches whose writes make node ``nid``'s outputs."""
        if nid in made_by:
            return made_by[nid]
        host = fused.get(nid, nid)
        if host in last:
            got = frozenset({last[host]})
        else:
            got = frozenset().union(*(makers(p) for p in _preds(graph.node(nid), producer)))
        made_by[nid] = got
        return got

    at = list(rank) if rank is not None else list(range(len(launches)))
    waits: list[list[int]] = []
    for i, L in enumerate(launches):
        members = {L.node} | covered.get(L.node, set())
        need: set[int] = set()
        for nid in members:
            for p in _preds(graph.node(nid), producer):
                if p not in members:
                    need |= makers(p)
        mine = stream_of[L.node]
        waits.append(
            sorted(j for j in need if at[j] < at[i] and stream_of[launches[j].node] != mine)
        )
    return waits


def issue_order(
    launches: Sequence[Any], fused: Mapping[str, str], order: Sequence[str]
) -> list[int]:
    """The launches' indices in the plan's order: a launch goes where the last node it
    computes (its own or one fused into it) stands in ``order``, a node's launches in
    program order. Each stream then runs its launches in the plan's order for its device."""
    pos = {v: k for k, v in enumerate(order)}
    last = {L.node: pos[L.node] for L in launches}
    for nid, host in fused.items():
        if host in last:
            last[host] = max(last[host], pos[nid])
    return sorted(range(len(launches)), key=lambda i: (last[launches[i].node], i))


def _preds(node: Any, producer: Mapping[str, str]) -> list[str]:
    names = dict.fromkeys(t for t in [*node.inputs, *node.outer_inputs] if t)
    return [producer[t] for t in names if t in producer]
