"""Grid search over the few stretch candidates left by the constraints (NN-Stretch §4.3):
meeting points (``stage``: every stage boundary; ``merged``: fewest) x scaling strategy
(``free``, ``width``, ``depth``). Each candidate model is built, turned into a problem with
the cost model (or a profiled problem's per-device throughput), scheduled, and the lowest
predicted makespan wins. Times in ms. Stretched weights are fresh: retraining is out of scope.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hetlab.cost.problem import Link, PEdge, PNode, Problem
from hetlab.errors import HetlabError
from hetlab.executor.api import run
from hetlab.graph.ir import OpGraph
from hetlab.graph.onnx_io import load
from hetlab.schedulers.base import schedule
from hetlab.schedulers.plan import Plan
from hetlab.stretch.onnx_rewrite import build
from hetlab.stretch.transform import Constraints, CostModel, StretchPlan, plan_stretch

GRID = [(m, s) for m in ("stage", "merged") for s in ("free", "width", "depth")]
NODE_OVERHEAD_MS = 0.02  # per node dispatch inside one onnxruntime session (estimate)


def measure_costs(
    g: OpGraph, devices: Mapping[str, Any], names: Sequence[str], repeat: int = 2
) -> CostModel:
    """Throughput of each device (FLOPs/ms) from a whole-model run on it (median of ``repeat``)."""

    total = float(sum(n.flops for n in g.nodes))
    thr = {}
    for d in names:
        rep = run(g, d, devices, repeat=repeat, warmup=1)
        thr[d] = total / max(1e-6, rep.latency_ms["median"] - NODE_OVERHEAD_MS * len(g.nodes))
    return CostModel(thr, dict.fromkeys(names, NODE_OVERHEAD_MS))


def costs_from_problem(g: OpGraph, problem: Problem, names: Sequence[str]) -> CostModel:
    """Throughput of each device from a profiled problem of ``g``: FLOPs / summed node costs."""
    flops = {n.id: n.flops for n in g.nodes}
    thr = {}
    for d in names:
        if d not in problem.devices:
            raise HetlabError(f"the problem {problem.name!r} has no device {d!r}")
        nodes = [n for n in problem.nodes if n.cost.get(d) is not None and n.id in flops]
        ms = sum(float(n.cost[d]) for n in nodes)  # type: ignore[arg-type]
        if ms <= 0:
            raise HetlabError(f"the problem {problem.name!r} has no costs on {d!r}")
        thr[d] = sum(flops[n.id] for n in nodes) / ms
    link = (
        problem.comm.get(f"{names[0]}->{names[1]}")
        or problem.comm.get("default")
        or Link(0.05, 5e6)
    )
    return CostModel(thr, dict.fromkeys(names, 0.0), (link.latency, link.bandwidth or 1e12))


def estimated_problem(g: OpGraph, cm: CostModel, names: Sequence[str]) -> Problem:
    """A spec §2 problem of ``g`` with costs from the cost model (FLOPs / throughput + overhead)."""
    nodes = [PNode(n.id, {d: cm.node_ms(d, n.flops) for d in names}, n.op_type) for n in g.nodes]
    edges = [PEdge(e.src, e.dst, float(e.bytes)) for e in g.edges]
    comm = {"default": Link(cm.link[0], cm.link[1])}
    return Problem(g.name, list(names), nodes, edges, comm)


def main_device(cm: CostModel, names: Sequence[str]) -> str:
    """Where the unbranched parts run: the device with the highest throughput (first on ties)."""
    return max(names, key=lambda d: (cm.throughput[d], -list(names).index(d)))


def branch_placement(g: OpGraph, names: Sequence[str], main: str) -> dict[str, str]:
    """NN-Stretch's subgraph placement: branch i on device i, the rest on ``main``."""
    out = {}
    for n in g.nodes:
        dev = main
        if n.id.startswith("stretch/p") and "/b" in n.id:
            i = int(n.id.split("/")[2][1:]) if n.id.split("/")[2].startswith("b") else -1
            if 0 <= i < len(names):
                dev = names[i]
        out[n.id] = dev
    return out


def branch_plan(g: OpGraph, problem: Problem, names: Sequence[str], main: str) -> Plan:
    return Plan.build(problem, "stretch", branch_placement(g, names, main), g.topo_order())


@dataclass
class Candidate:
    plan: StretchPlan
    graph: OpGraph
    predicted_ms: float
    run_plan: Plan


def _load_candidate(g: OpGraph, sp: StretchPlan) -> OpGraph:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "candidate.onnx"
        p.write_bytes(build(g, sp).SerializeToString())
        return load(str(p))


def search(
    g: OpGraph,
    names: Sequence[str],
    cm: CostModel,
    c: Constraints | None = None,
    algo: str = "heft",
    grid: Sequence[tuple[str, str]] = GRID,
) -> tuple[Candidate, list[dict[str, Any]]]:
    """The candidate with the least predicted makespan, and one row per candidate tried.
    Each candidate's prediction is the better of NN-Stretch's branch placement and ``algo``."""

    main = main_device(cm, names)
    rows: list[dict[str, Any]] = []
    best: Candidate | None = None
    seen: set[str] = set()
    errors = []
    for meeting, strategy in grid:
        try:
            sp = plan_stretch(g, names, cm, c, strategy=strategy, meeting=meeting)
        except HetlabError as e:
            errors.append(str(e))
            continue
        key = repr(
            [[(b.layout.depth, b.layout.width) for b in p.branches] + [p.segs] for p in sp.parts]
        )
        if key in seen:
            continue
        seen.add(key)
        cg = _load_candidate(g, sp)
        prob = estimated_problem(cg, cm, names)
        plans = [branch_plan(cg, prob, names, main)]
        if algo:
            plans.append(schedule(prob, algo))
        rp = min(plans, key=lambda p: p.makespan)
        sp.predicted_ms = round(float(rp.makespan), 4)
        rows.append(
            {
                "meeting": meeting,
                "strategy": strategy,
                "predicted_ms": sp.predicted_ms,
                "placement": rp.algo,
                "flops": sum(n.flops for n in cg.nodes),
                "parts": len(sp.parts),
            }
        )
        if best is None or rp.makespan < best.predicted_ms:
            best = Candidate(sp, cg, float(rp.makespan), rp)
    if best is None:
        raise HetlabError(errors[0] if errors else "no stretch candidate")
    return best, rows
