"""Measured against predicted: profile a model's nodes on the CPU groups (each node as its own
session, median of ``--samples`` runs), schedule with ``--algo`` (default heft), run the plan
with the executor, and compare the measured median with the plan's makespan (issue 6).

    python benchmarks/executor_fidelity.py [--model NAME|PATH] [--algo heft] [--repeat 20]

This is a crude stand-in for the profiler of issue 5 (links between CPU groups are free:
tensors stay in host memory). Times in ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from executor import pick_model

from hetlab.cost.problem import Problem
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.devices.platform import devices
from hetlab.executor import run
from hetlab.executor.check import random_inputs
from hetlab.graph.onnx_io import load
from hetlab.graph.shapes import parse_shape_args
from hetlab.schedulers import schedule


def profile_nodes(graph, devs, feed, samples: int) -> dict[str, dict[str, float]]:
    """Per-node medians (ms) on each device, every node run alone on its real inputs."""
    cost: dict[str, dict[str, float]] = {n.id: {} for n in graph.nodes}
    for d in devs:
        d.bind_thread()
        values = dict(feed)
        for v in graph.topo_order():
            unit = d.prepare(graph, [v])
            ins = {t: values[t] for t in unit.inputs}
            res = d.run(unit, ins)
            values.update(res.outputs)
            ts = []
            for _ in range(samples):
                t = time.perf_counter()
                d.run(unit, ins)
                ts.append((time.perf_counter() - t) * 1000.0)
            cost[v][d.name] = statistics.median(ts)
    return cost


def breakdown(rep, cost) -> dict[str, dict[str, float]]:
    """Per device, in the median run: units, their measured busy time, the profiled cost of
    their nodes, transfer time, and the time the device's queue sat waiting (ms)."""
    out: dict[str, dict[str, float]] = {}
    nodes_of = {r["unit"]: [] for r in rep.timeline}
    for r in rep.timeline:
        nodes_of[r["unit"]].append(r["node"])
    for ev in rep.events:
        d = out.setdefault(ev.device, {"units": 0, "busy": 0.0, "profiled": 0.0, "xfer": 0.0, "first": ev.start, "last": 0.0})
        if ev.kind == "unit":
            d["units"] += 1
            d["busy"] += ev.finish - ev.start
            d["profiled"] += sum(cost[v][ev.device] for v in nodes_of.get(ev.args["unit"], []))
        else:
            d["xfer"] += ev.finish - ev.start
        d["first"] = min(d["first"], ev.start)
        d["last"] = max(d["last"], ev.finish)
    for d in out.values():
        d["idle"] = d["last"] - d["first"] - d["busy"] - d["xfer"]
        for k in list(d):
            d[k] = round(d[k], 3)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--algo", default="heft")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--spin", default="on", choices=["stop", "on", "off"], help="ORT pool spinning")
    a = ap.parse_args(argv)
    g = load(a.model or pick_model(), parse_shape_args(a.shape))
    devs = [OrtCpuDevice(d.name, d.cores, d.threads, spin=a.spin) for d in devices() if d.kind == "onnxruntime-cpu"]
    feed = random_inputs(g, 0)
    import os

    saved = os.sched_getaffinity(0)
    cost = profile_nodes(g, devs, feed, a.samples)
    os.sched_setaffinity(0, saved)
    names = [d.name for d in devs]
    prob = Problem.from_json({
        "name": g.name, "devices": names,
        "nodes": [{"id": n.id, "op_type": n.op_type, "cost": cost[n.id]} for n in g.nodes],
        "edges": [{"src": e.src, "dst": e.dst, "bytes": e.bytes} for e in g.edges],
    })  # fmt: skip
    out = {"model": g.name, "nodes": len(g.nodes), "devices": [d.info() for d in devs]}
    for algo in [f"single:{names[0]}", a.algo]:
        plan = schedule(prob, algo)
        rep = run(g, plan, devs, repeat=a.repeat, check=True, inputs=feed, warmup=2)
        out[algo] = {"predicted_ms": round(plan.makespan, 3), "measured": rep.latency_ms,
                     "ratio": round(rep.latency_ms["median"] / plan.makespan, 3), "units": rep.units,
                     "devices": rep.devices, "max_rel_err": rep.max_rel_err,
                     "breakdown": breakdown(rep, cost)}  # fmt: skip
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
