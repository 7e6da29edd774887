"""A hand-sized problem and its graph, for tests of figures and of the workbench."""

from __future__ import annotations

from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.graph.ir import Edge, Node, OpGraph, Tensor


def tiny_problem(name: str = "tiny") -> Problem:
    """8 ops in two branches; 'gpu' cannot run op 'h' (the head)."""
    ids = list("abcdefgh")
    ops = ["Conv", "Relu", "Conv", "Conv", "Relu", "Relu", "Concat", "Softmax"]
    cpu = [4.0, 1.0, 6.0, 5.0, 1.0, 1.0, 0.5, 0.2]
    gpu = [1.0, 0.6, 1.5, 1.2, 0.6, 0.6, 0.4, None]
    nodes = [
        PNode(i, {"cpu": c, "gpu": g}, o) for i, o, c, g in zip(ids, ops, cpu, gpu, strict=False)
    ]
    pairs = [
        ("a", "b"),
        ("b", "c"),
        ("b", "d"),
        ("c", "e"),
        ("d", "f"),
        ("e", "g"),
        ("f", "g"),
        ("g", "h"),
    ]
    edges = [PEdge(s, d, 4000.0) for s, d in pairs]
    comm = {"default": Link(0.3, 1e5)}
    return Problem(name, ["cpu", "gpu"], nodes, edges, comm)


def tiny_graph(name: str = "tiny") -> OpGraph:
    p = tiny_problem(name)
    nodes = [
        Node(n.id, n.op_type, [f"in_{n.id}"], [f"t_{n.id}"], flops=1000 * (i + 1))
        for i, n in enumerate(p.nodes)
    ]
    tensors = {f"t_{n.id}": Tensor(f"t_{n.id}", (1, 8, 4, 4)) for n in p.nodes}
    g = OpGraph(name, nodes, [Edge(e.src, e.dst, 512, [f"t_{e.src}"]) for e in p.edges], tensors)
    g.compute_levels()
    return g
