"""Problems shared by the scheduler tests: the PartitionTuner golden example and random DAGs."""

from __future__ import annotations

import random

from hetlab.cost.problem import Problem


def golden_doc() -> dict:
    """PartitionTuner Table 1 / Figure 1 (issue 3): cpu + npu, free transfers, two groups."""
    c = {
        "v1": (1, 10),
        "v2": (2, None),
        "v3": (10, 2),
        "v4": (10, 2),
        "v5": (1, None),
        "v6": (1, 1.5),
        "v7": (1, None),
        "v8": (5, None),
    }
    edges = [
        ("v1", "v2"),
        ("v2", "v3"),
        ("v2", "v6"),
        ("v3", "v4"),
        ("v4", "v5"),
        ("v5", "v8"),
        ("v6", "v7"),
        ("v7", "v8"),
    ]
    return {
        "name": "partitiontuner-table1",
        "devices": ["cpu", "npu"],
        "nodes": [{"id": k, "cost": {"cpu": a, "npu": b}} for k, (a, b) in c.items()],
        "edges": [{"src": a, "dst": b, "bytes": 0} for a, b in edges],
        "groups": [
            {"nodes": ["v4", "v5"], "cost": {"cpu": 10.5, "npu": 2.5}},
            {"nodes": ["v6", "v7"], "cost": {"cpu": 1.5, "npu": 2.0}},
        ],
    }


def golden() -> Problem:
    return Problem.from_json(golden_doc())


def random_problem(
    seed: int,
    n: int,
    n_dev: int = 2,
    p_edge: float = 0.3,
    p_unsup: float = 0.2,
    comm_scale: float = 2.0,
) -> Problem:
    """A random DAG with per-device costs, some unsupported ops and costly, asymmetric links."""
    rng = random.Random(seed)
    devs = [f"d{i}" for i in range(n_dev)]
    nodes = []
    for i in range(n):
        cost = {d: round(rng.uniform(0.1, 10.0), 3) for d in devs}
        for d in devs[1:]:
            if rng.random() < p_unsup:
                cost[d] = None
        nodes.append({"id": f"n{i}", "cost": cost})
    edges = []
    for j in range(n):
        for i in range(j):
            if rng.random() < p_edge:
                comm = {
                    f"{a}->{b}": round(rng.uniform(0, comm_scale * 5), 3)
                    for a in devs
                    for b in devs
                    if a != b
                }
                edges.append({"src": f"n{i}", "dst": f"n{j}", "bytes": 100, "comm": comm})
    return Problem.from_json(
        {"name": f"rand{seed}", "devices": devs, "nodes": nodes, "edges": edges}
    )


def layered_problem(seed: int, n: int = 1000, width: int = 8, n_dev: int = 2) -> Problem:
    """A NASNet-like layered DAG: wide cells of short and long ops, edges to the last 2 layers,
    a CPU and a GPU-like device (a few ops GPU-unsupported), transfers ~ 0.2-2 ms."""
    rng = random.Random(seed)
    devs = ["cpu", "gpu", "npu", "dsp"][:n_dev]
    layers: list[list[int]] = []
    i = 0
    while i < n:
        w = min(n - i, rng.randint(1, width))
        layers.append(list(range(i, i + w)))
        i += w
    nodes, edges = [], []
    for li, layer in enumerate(layers):
        for v in layer:
            base = rng.choice([rng.uniform(0.02, 0.3), rng.uniform(0.5, 8.0)])
            cost = {"cpu": round(base, 4)}
            for d in devs[1:]:
                cost[d] = None if rng.random() < 0.01 else round(base * rng.uniform(0.4, 1.6), 4)
            nodes.append({"id": f"op{v}", "cost": cost})
            if li:
                srcs = set(rng.sample(layers[li - 1], min(len(layers[li - 1]), rng.randint(1, 2))))
                if li > 1 and rng.random() < 0.3:
                    srcs.add(rng.choice(layers[li - 2]))
                for u in sorted(srcs):
                    c = round(rng.uniform(0.2, 2.0), 4)
                    edges.append(
                        {
                            "src": f"op{u}",
                            "dst": f"op{v}",
                            "bytes": 1000,
                            "comm": {f"{a}->{b}": c for a in devs for b in devs if a != b},
                        }
                    )
    return Problem.from_json(
        {"name": f"layered{seed}", "devices": devs, "nodes": nodes, "edges": edges}
    )
