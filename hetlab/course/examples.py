"""Hand-sized problems the course works by hand before it turns to real models.

- ``small_dag``: six operators on a CPU and a GPU, transfers of 1 ms between them;
- ``two_branch_dag``: ten operators in two branches, for HOPE's partition (Algorithm 1);
- ``lookahead_dag``: a chain whose first operator is cheaper on the CPU and every later one
  on the GPU, where PEFT's look-ahead beats HEFT's earliest finish;
- ``partitiontuner_example``: PartitionTuner's eight operators on a CPU and an NPU, with fused
  group costs (Jeong et al., ETRI J. 2022, Table 1 / Fig. 1).
"""

from __future__ import annotations

from typing import Any

from hetlab.cost.problem import Group, Link, PEdge, PNode, Problem
from hetlab.schedulers import base


def small_dag() -> Problem:
    """A -> (B, C, D); B, C -> E; D, E -> F on cpu/gpu; every transfer costs 1 ms."""
    cost = {"A": (2, 3), "B": (4, 1), "C": (3, 2), "D": (1, 4), "E": (3, 3), "F": (1, 2)}
    nodes = [PNode(k, {"cpu": float(c), "gpu": float(g)}) for k, (c, g) in cost.items()]
    pairs = [("A", "B"), ("A", "C"), ("A", "D"), ("B", "E"), ("C", "E"), ("D", "F"), ("E", "F")]
    edges = [PEdge(a, b, 1000.0, {"cpu->gpu": 1.0, "gpu->cpu": 1.0}) for a, b in pairs]
    return Problem("small-dag", ["cpu", "gpu"], nodes, edges)


def two_branch_dag() -> Problem:
    """Ten operators: a stem, two branches of unequal depth, and a head; transfers cost 0.5 ms."""
    cost = {
        "in": (3, 5),
        "a1": (2, 3),
        "a2": (3, 4),
        "a3": (3, 4),
        "b1": (4, 1),
        "b2": (1, 3),
        "cat": (4, 3),
        "c1": (4, 2),
        "c2": (3, 1),
        "out": (3, 5),
    }
    nodes = [PNode(k, {"cpu": float(c), "gpu": float(g)}) for k, (c, g) in cost.items()]
    pairs = [
        ("in", "a1"),
        ("a1", "a2"),
        ("a2", "a3"),
        ("in", "b1"),
        ("b1", "b2"),
        ("a3", "cat"),
        ("b2", "cat"),
        ("cat", "c1"),
        ("c1", "c2"),
        ("c2", "out"),
    ]
    edges = [PEdge(a, b, 1000.0, {"cpu->gpu": 0.5, "gpu->cpu": 0.5}) for a, b in pairs]
    return Problem("two-branch", ["cpu", "gpu"], nodes, edges)


def lookahead_dag() -> Problem:
    """prep -> conv1 -> conv2 -> out on cpu/gpu, transfers of 4 ms: prep finishes first on
    the CPU, but everything after it is far cheaper on the GPU. An operator that looks only
    at its own finish time (HEFT, dmda) starts on the CPU and pays a transfer; one that looks
    ahead (PEFT's optimistic cost table) keeps the chain on the GPU. A chain leaves no idle
    gap to insert into, so the difference does not depend on gap insertion."""
    cost = {"prep": (1, 2), "conv1": (8, 1), "conv2": (8, 1), "out": (1, 1.5)}
    nodes = [PNode(k, {"cpu": float(c), "gpu": float(g)}) for k, (c, g) in cost.items()]
    pairs = [("prep", "conv1"), ("conv1", "conv2"), ("conv2", "out")]
    edges = [PEdge(a, b, 1000.0, {"cpu->gpu": 4.0, "gpu->cpu": 4.0}) for a, b in pairs]
    return Problem("lookahead", ["cpu", "gpu"], nodes, edges)


def partitiontuner_example() -> Problem:
    """v1 -> v2 -> (v3 -> v4 -> v5 | v6 -> v7) -> v8 on cpu/npu; groups v4+v5 and v6+v7."""
    cpu = [1, 2, 10, 10, 1, 1.0, 1.0, 5.0]
    npu = [10, None, 2, 2, None, 1.5, None, None]
    ops = ["Conv", "Pool", "Conv", "Conv", "Relu", "Conv", "Relu", "Dense"]
    nodes = [
        PNode(f"v{i + 1}", {"cpu": c, "npu": n}, o)
        for i, (c, n, o) in enumerate(zip(cpu, npu, ops, strict=True))
    ]
    pairs = [(1, 2), (2, 3), (3, 4), (4, 5), (2, 6), (6, 7), (5, 8), (7, 8)]
    edges = [PEdge(f"v{a}", f"v{b}", 0.0) for a, b in pairs]
    groups = [
        Group(["v4", "v5"], {"cpu": 10.5, "npu": 2.5}),
        Group(["v6", "v7"], {"cpu": 1.5, "npu": 2.0}),
    ]
    return Problem(
        "partitiontuner-8", ["cpu", "npu"], nodes, edges, {"default": Link(0.0, None)}, groups
    )


def defaults(algo: str, problem: Problem | None = None) -> dict[str, Any]:
    """An algorithm's parameter defaults, from the scheduler registry (the one source); with
    ``problem``, the defaults that depend on it (greedy's K) are resolved."""

    return dict(base.defaults(algo, problem))
