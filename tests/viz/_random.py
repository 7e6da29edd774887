"""Random DAG problems for the figure tests: layered like a network, with skip edges."""

from __future__ import annotations

import numpy as np

from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.schedulers.plan import Plan

OPS = ["Conv", "Relu", "Add", "Concat", "MaxPool", "BatchNormalization", "Gemm"]


def random_problem(n: int, seed: int = 0, scope: int = 20) -> Problem:
    """``n`` ops named ``/block_K/opI/TYPE`` (a new block every ``scope`` ops), each fed by
    its previous op and, one time in three, by one of the ten before it; 'gpu' cannot run
    one op in fifty."""
    rng = np.random.default_rng(seed)
    ops = [OPS[int(k)] for k in rng.integers(0, len(OPS), n)]
    ids = [f"/block_{i // scope}/op{i}/{ops[i]}" for i in range(n)]
    nodes = []
    for i in range(n):
        cpu = float(rng.uniform(0.05, 5.0))
        gpu = None if i % 50 == 49 else float(cpu * rng.uniform(0.1, 2.0))
        nodes.append(PNode(ids[i], {"cpu": cpu, "gpu": gpu}, ops[i]))
    pairs = {(i - 1, i) for i in range(1, n)}
    for i in range(2, n):
        if rng.random() < 1 / 3:
            pairs.add((int(rng.integers(max(0, i - 10), i - 1)), i))
    edges = [PEdge(ids[s], ids[d], float(rng.uniform(1e3, 1e6))) for s, d in sorted(pairs)]
    return Problem(f"random{n}", ["cpu", "gpu"], nodes, edges, {"default": Link(0.05, 1e6)})


def random_plan(p: Problem, seed: int = 0, extra: dict | None = None) -> Plan:
    """Every op on a random device that can run it, in topological order."""
    rng = np.random.default_rng(seed)
    dev = {}
    for n in p.nodes:
        ok = [d for d in p.devices if n.cost.get(d) is not None]
        dev[n.id] = ok[int(rng.integers(0, len(ok)))]
    return Plan.build(p, "random", dev, [p.nodes[i].id for i in p.topo], extra=extra)
