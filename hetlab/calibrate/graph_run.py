"""What a run through one captured graph costs the executor beyond its prediction.

A device whose units run as one captured graph (a CUDA device and its streams) pays per run
what no node's cost holds: handing the run to the queue runner's thread, writing the inputs,
launching the graph, waiting for the outputs. ``run_cost_ms`` measures it as the
``run_ms`` of the device's ``extra.queues`` entry, the prediction's ``graph_run`` term
(``prediction.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hetlab.calibrate.prediction import TERMS, predict
from hetlab.cost.calibration import families
from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.executor import run
from hetlab.graph import load
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan

PROBE = Path(__file__).parents[1] / "cost" / "probe.onnx"


def graph_run_ms(device: Any, repeat: int = 50) -> float:
    """What one run through the executor costs on ``device`` beyond its kernels (ms): the
    median run of a one-Relu model (``cost/probe.onnx``), whose kernel takes microseconds."""
    graph = load(str(PROBE))
    report = run(graph, device.name, {device.name: device}, repeat=repeat)
    return float(report.latency_ms["median"])


def model_run_ms(
    device: Any, problem: Problem, graph: OpGraph, host: str, repeat: int = 20
) -> float | None:
    """What a run of this model through the executor costs on ``device`` beyond its
    prediction (ms): the model's run on the device alone, one captured graph with its inputs
    from host memory and its outputs back, less that plan's prediction without the
    ``graph_run`` term and the host dispatch that the graph replaces. Unlike the probe's
    (``graph_run_ms``), it holds the host copies and hand-offs
    as this model makes them. None where the device cannot run the whole model."""
    if device.name not in (problem.extra.get("queues") or {}):
        return None
    alone = {n.id: device.name for n in problem.nodes}
    remote = set(families(problem.extra))
    try:
        # a graph's run is not dispatched unit by unit: what it costs is what is measured here
        terms = [t for t in TERMS if t not in ("host_dispatch", "concurrency", "graph_run")]
        plan = Plan.of(alone, graph.topo_order())
        got = predict(problem, graph, plan, host=host, remote=remote, terms=terms)
        report = run(graph, device.name, {device.name: device}, repeat=repeat)
    except HetlabError:
        return None
    return max(0.0, float(report.latency_ms["median"]) - got.total_ms)


def run_cost_ms(device: Any, problem: Problem, graph: OpGraph, host: str | None) -> float:
    """``run_ms`` for ``device`` (a CUDA device with its queues in ``problem``): the model's
    own run (``model_run_ms``) where the problem has a host to price its copies and the
    device runs the whole model, else the probe's run (``graph_run_ms``)."""
    got = model_run_ms(device, problem, graph, host) if host else None
    return graph_run_ms(device) if got is None else got
