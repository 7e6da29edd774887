"""Problems of random and structured DAGs for executor tests (no ONNX needed)."""

from __future__ import annotations

import random

from hetlab.cost.problem import Problem


def random_problem(n: int, seed: int, devices=("a", "b"), p_edge: float = 0.15) -> Problem:
    rng = random.Random(seed)
    nodes = [
        {"id": f"n{i}", "cost": {d: round(rng.uniform(0.1, 2.0), 3) for d in devices}}
        for i in range(n)
    ]
    edges = []
    for j in range(1, n):
        srcs = {rng.randrange(j)} | {i for i in range(max(0, j - 8), j) if rng.random() < p_edge}
        edges += [
            {"src": f"n{i}", "dst": f"n{j}", "bytes": 4 * rng.randint(1, 64)} for i in sorted(srcs)
        ]
    return Problem.from_json(
        {"name": f"rand{seed}", "devices": list(devices), "nodes": nodes, "edges": edges}
    )


def inception_problem(
    blocks: int = 20, branches: int = 4, depth: int = 5, cost: float = 1.0
) -> Problem:
    """``blocks`` blocks of ``branches`` parallel chains of ``depth`` nodes between a split
    and a concat node: (branches * depth + 1) * blocks + 1 nodes."""
    nodes = [{"id": "in", "cost": {"a": cost, "b": cost}}]
    edges = []
    prev = "in"
    for b in range(blocks):
        ends = []
        for r in range(branches):
            last = prev
            for k in range(depth):
                v = f"b{b}r{r}k{k}"
                nodes.append({"id": v, "cost": {"a": cost, "b": cost}})
                edges.append({"src": last, "dst": v, "bytes": 1024})
                last = v
            ends.append(last)
        cat = f"cat{b}"
        nodes.append({"id": cat, "cost": {"a": cost, "b": cost}})
        edges += [{"src": e, "dst": cat, "bytes": 1024} for e in ends]
        prev = cat
    return Problem.from_json(
        {"name": "inception", "devices": ["a", "b"], "nodes": nodes, "edges": edges}
    )


def random_topo_order(g, rng):
    """Any order of ``g``'s nodes that puts each after its predecessors (``rng``: a
    ``random.Random``)."""
    indeg = {n.id: len(g.preds(n.id)) for n in g.nodes}
    ready = [v for v, d in indeg.items() if d == 0]
    out = []
    while ready:
        v = ready.pop(rng.randrange(len(ready)))
        out.append(v)
        for w in g.succs(v):
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return out
