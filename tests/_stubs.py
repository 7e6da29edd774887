"""Stand-ins for hetlab parts that other work provides (loader, devices, profiler,
schedulers, executor), used by the viz/widget/browser tests only where the real part is
missing. ``install()`` patches only what cannot be imported and returns what it stubbed.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.graph.ir import Edge, Node, OpGraph, Tensor
from hetlab.schedulers.base import REGISTRY, Decision, Param, register


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
    g.compute_upranks()
    return g


def _eft(problem: Problem, order: list[str], bias: dict[str, str] | None = None) -> Decision:
    """Earliest-finish list scheduling (ignoring comm), optionally forcing some devices."""
    free = dict.fromkeys(problem.devices, 0.0)
    fin: dict[str, float] = {}
    dev: dict[str, str] = {}
    for v in order:
        n = problem.nodes[problem.index[v]]
        ready = max(
            (fin[problem.nodes[u].id] for u, _ in problem.preds[problem.index[v]]), default=0.0
        )
        ok = [d for d in problem.devices if n.cost.get(d) is not None]
        want = (bias or {}).get(v)
        d = want if want in ok else min(ok, key=lambda d: max(ready, free[d]) + n.cost[d])
        fin[v] = max(ready, free[d]) + n.cost[d]
        free[d] = fin[v]
        dev[v] = d
    return Decision(dev, order)


def _stub_greedy(problem: Problem, k: int = 3) -> Decision:
    order = [problem.nodes[i].id for i in problem.topo]
    slow = problem.devices[0]
    return _eft(problem, order, {v: slow for i, v in enumerate(order) if i % (k + 1) == k})


def _stub_ilp(problem: Problem, epsilon: float = 0.2, nt: int = 12) -> Decision:
    order = [problem.nodes[i].id for i in problem.topo]
    slow = problem.devices[0]
    return _eft(problem, order, {v: slow for i, v in enumerate(order) if i % max(2, nt) == 1})


class StubDevice:
    def __init__(self, name: str, kind: str) -> None:
        self.name, self.kind = name, kind

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind}


def _stub_profile(graph: OpGraph, devices: list[Any], progress: Any = None) -> Problem:
    p = tiny_problem(graph.name) if {n.id for n in graph.nodes} == set("abcdefgh") else None
    if p is None:
        raise RuntimeError("stub profiler only knows the tiny graph")
    names = [d.name for d in devices]
    for i, n in enumerate(p.nodes):
        c = list(n.cost.values())
        n.cost = {d: c[j % len(c)] for j, d in enumerate(names)}
        if all(v is None for v in n.cost.values()):
            n.cost[names[0]] = 0.2
        if progress:
            progress(i + 1, len(p.nodes))
    p.devices = names
    return p


def _stub_run(
    graph: OpGraph,
    plan: Any,
    devices: list[Any],
    repeat: int = 5,
    check: bool = True,
    problem: Any = None,
) -> dict:
    tl = [
        {
            "node": a.node,
            "device": a.device,
            "start": a.start * 1.1,
            "finish": a.finish * 1.1 + 0.01,
        }
        for a in plan.assignments
    ]
    mk = max(t["finish"] for t in tl)
    return {
        "model_path": "/stub.onnx",
        "latency_ms": {"median": mk, "p10": mk, "p90": mk},
        "predicted_ms": plan.makespan,
        "max_rel_err": 1e-7,
        "timeline": tl,
        "devices": {d.name: 1 for d in devices},
    }


def _importable(mod: str, attr: str) -> bool:
    try:
        m = importlib.import_module(mod)
        f = getattr(m, attr)
        if mod == "hetlab.graph.onnx_io":  # the skeleton's placeholder raises NotImplementedError
            return "being written" not in (f.__doc__ or "")
        return True
    except (ImportError, AttributeError):
        return False


def install(setitem: Any = None, force: bool = False) -> list[str]:
    """Stub every missing piece (every piece with ``force``); ``setitem`` is
    ``monkeypatch.setitem`` in tests, so that it is undone after the test."""
    put = setitem or (lambda d, k, v: d.__setitem__(k, v))
    done = []
    for algo, func, params in (
        ("greedy", _stub_greedy, [Param("k", "int", 3, 1, 10)]),
        (
            "ilp",
            _stub_ilp,
            [Param("epsilon", "float", 0.2, 0.0, 1.0), Param("nt", "int", 12, 2, 200)],
        ),
    ):
        if force or not _importable(f"hetlab.schedulers.{algo}", "__name__"):
            put(
                sys.modules,
                f"hetlab.schedulers.{algo}",
                types.ModuleType(f"hetlab.schedulers.{algo}"),
            )
            saved = REGISTRY.get(algo)
            register(algo, f"stub {algo}", params)(func)
            new = REGISTRY[algo]
            if saved is None:
                del REGISTRY[algo]
            put(REGISTRY, algo, new)
            done.append(algo)
    from hetlab.widgets import backend

    repl = {
        ("hetlab.devices.platform", "devices"): (
            "local_devices",
            lambda: [StubDevice("cpu0", "stub-cpu"), StubDevice("cl0", "stub-opencl")],
        ),
        ("hetlab.cost.profiler", "profile"): ("profile", _stub_profile),
        ("hetlab.executor", "run"): ("run", _stub_run),
        ("hetlab.graph.onnx_io", "load"): ("load_graph", lambda m, s=None: tiny_graph(m)),
    }
    for (mod, attr), (name, func) in repl.items():
        if force or not _importable(mod, attr):
            if setitem:
                setitem(backend.__dict__, name, func)
            else:
                setattr(backend, name, func)
            if name == "run":
                put(backend.__dict__, "executor_available", lambda: None)
            done.append(name)
    return done
