"""HOPE's level of a vertex: its eq. 8, the paper's "upward rank".

``level(v) = 1 + max(level(u) for u in pred(v))``, and 1 for a vertex without predecessors:
the number of vertices on the longest path from an input to ``v``. The graph's nodes
(``Node.level``), HOPE's partition (levels recounted inside each subgraph), the DAG figures'
layers and the course's hand-sized problems all count it here. It is not HEFT's upward rank
(``schedulers/ranks.py``: a node's cost to the exit).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from hetlab.errors import HetlabError

K = TypeVar("K", bound=Hashable)


def hope_levels(order: Iterable[K], preds: Callable[[K], Iterable[K]]) -> dict[K, int]:
    """The level of every vertex of ``order`` (a topological order). A predecessor that is
    not in ``order`` does not count: the levels of a subgraph, recounted inside it."""
    level: dict[K, int] = {}
    for v in order:
        level[v] = 1 + max((level[u] for u in preds(v) if u in level), default=0)
    return level


def index_levels(n: int, edges: Iterable[tuple[int, int]]) -> list[int]:
    """The levels of vertices ``0..n-1`` joined by ``edges`` (index pairs, in any order);
    raises ``HetlabError`` on a cycle."""
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for s, d in edges:
        preds[d].append(s)
        succs[s].append(d)
        indeg[d] += 1
    order = [i for i in range(n) if indeg[i] == 0]
    for v in order:  # Kahn's order: the list grows while it is read
        for w in succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                order.append(w)
    if len(order) != n:
        raise HetlabError("the graph has a cycle: its vertices have no levels")
    level = hope_levels(order, preds.__getitem__)
    return [level[i] for i in range(n)]
