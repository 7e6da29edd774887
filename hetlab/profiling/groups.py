"""Grouped operators (PartitionTuner §3.1): chains of adjacent ops measured as one fused unit.

A pattern is a sequence of op types, e.g. ``("Conv", "Relu")``. A chain ``v1 -> ... -> vk``
matches when its op types equal the pattern and every intermediate output is read only by
the next member (never by another node, never a model output). Longer patterns win; a
node joins at most one group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph

DEFAULT_PATTERNS: tuple[tuple[str, ...], ...] = (
    ("Conv", "BatchNormalization", "Relu"),
    ("Conv", "Relu"),
    ("MatMul", "Add"),
)


def parse_patterns(specs: Iterable[str | Sequence[str]]) -> list[tuple[str, ...]]:
    """``"Conv->Relu"`` strings (or op-type sequences) -> patterns of at least two ops."""
    out: list[tuple[str, ...]] = []
    for s in specs:
        p = tuple(x.strip() for x in (s.split("->") if isinstance(s, str) else s))
        if len(p) < 2 or not all(p):
            raise HetlabError(
                f"group pattern {s!r} must name at least two op types, e.g. Conv->Relu"
            )
        out.append(p)
    return out


def find_groups(
    graph: OpGraph, patterns: Iterable[Sequence[str]] = DEFAULT_PATTERNS
) -> list[list[str]]:
    """Disjoint chains of node ids matching ``patterns`` (longest pattern first, model order)."""
    pats = sorted({tuple(p) for p in patterns}, key=len, reverse=True)
    readers: dict[str, set[str]] = {}
    for n in graph.nodes:
        for t in list(n.inputs) + n.outer_inputs:
            if t:
                readers.setdefault(t, set()).add(n.id)
    model_out = set(graph.outputs)
    taken: set[str] = set()
    groups: list[list[str]] = []

    def next_of(v: str) -> str | None:
        outs = [t for t in graph.node(v).outputs if t]
        if not outs or any(t in model_out for t in outs):
            return None
        rd = set().union(*(readers.get(t, set()) for t in outs))
        return next(iter(rd)) if len(rd) == 1 else None

    for pat in pats:
        for n in graph.nodes:
            if n.id in taken or n.op_type != pat[0]:
                continue
            chain = [n.id]
            while len(chain) < len(pat):
                w = next_of(chain[-1])
                if w is None or w in taken or graph.node(w).op_type != pat[len(chain)]:
                    break
                chain.append(w)
            if len(chain) == len(pat):
                groups.append(chain)
                taken.update(chain)
    groups.sort(key=lambda c: graph.node(c[0]).index)
    return groups
