"""Profiler figures: profiling time, sum-of-ops vs whole model,
profile-to-profile rank correlation, measured edge transfers vs the fitted link model.

    python -m benchmarks.profiler [--models squeezenet,googlenet,inception_v3]
        [--devices cpu0,cpu1] [--repeat 20] [--out FILE.json]

For each model: two fresh profiles (no cache) on the devices, timed; the whole model run as
one unit on each CPU device (``device.prepare`` of every node = the model file, as
``hetlab run --device`` does), median of 20 runs measured right before and right after the
profiles; Spearman correlation of the two profiles' per-op costs per device; and for every
device pair, how the per-shape transfers compare to ``latency + bytes / bandwidth``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from hetlab.cost.measure import Budget, make_runner, time_unit
from hetlab.cost.profiler import profile
from hetlab.cost.stats import spearman
from hetlab.graph.inputs import random_inputs
from hetlab.graph.onnx_io import load


def whole_model_ms(graph, dev, n: int = 20) -> dict[str, float]:
    """The whole model as one unit on ``dev`` (``device.prepare`` of every node = the model
    file, as ``hetlab run --device`` does): median and p10 ms of ``n`` runs through
    ``device.run``, and the median through the profiler's own timer."""
    unit = dev.prepare(graph, [v.id for v in graph.nodes])
    feeds = {t: dev.copy_in(a) for t, a in random_inputs(graph).items() if t in unit.inputs}
    aff = os.sched_getaffinity(0)
    dev.bind_thread()  # as the executor's worker thread and the profiler do
    try:
        return _whole(dev, unit, feeds, n)
    finally:
        os.sched_setaffinity(0, aff)


def _whole(dev, unit, feeds, n: int) -> dict[str, float]:
    for _ in range(3):
        dev.run(unit, feeds)
    runs = []
    for _ in range(n):
        r = dev.run(unit, feeds)
        runs.append((r.finish - r.start) * 1e3)
    run_once, _ = make_runner(dev, unit, feeds)
    tm = time_unit(run_once, Budget(repeat=n, warmup=2, min_repeat=n, seconds=60))
    return {
        "device_run": statistics.median(runs),
        "device_run_p10": float(np.percentile(runs, 10)),
        "timer": tm["median"],
    }


def comm_vs_link(p) -> dict[str, dict[str, float]]:
    out = {}
    for key, link in p.comm.items():
        rel, absd, meas = [], [], []
        for e in p.edges:
            if key in e.comm:
                m, pred = e.comm[key], link.time(e.bytes)
                meas.append(m)
                absd.append(abs(m - pred))
                rel.append(abs(m - pred) / max(m, 1e-9))
        if meas:
            out[key] = {
                "edges": len(meas),
                "latency_ms": link.latency,
                "bandwidth_B_per_ms": link.bandwidth,
                "median_measured_ms": float(np.median(meas)),
                "median_abs_err_ms": float(np.median(absd)),
                "median_rel_err": float(np.median(rel)),
                "max_abs_err_ms": float(max(absd)),
                "r2": p.extra["calibration"][key]["r2"],
                "fit_max_rel_err": p.extra["calibration"][key]["max_rel_err"],
            }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="squeezenet,googlenet,inception_v3")
    ap.add_argument("--devices", default="")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument(
        "--clock",
        choices=["wall", "thread"],
        default="wall",
        help="thread: time onnxruntime units in thread CPU time (one-thread devices on a busy box)",
    )
    ap.add_argument("--out", default="")
    ap.add_argument("--save-dir", default="", help="also write each model's first problem here")
    a = ap.parse_args()
    if a.clock == "thread":
        from hetlab.cost import measure

        measure.CLOCK = time.thread_time
    from hetlab.devices.platform import devices as all_devices

    devs = all_devices()
    devs = [d for n in a.devices.split(",") for d in devs if d.name == n] if a.devices else devs[:2]
    cpus = [d for d in devs if d.kind == "onnxruntime-cpu"]
    res: dict = {"devices": [d.info() for d in devs], "clock": a.clock, "models": {}}
    for name in a.models.split(","):
        g = load(name)
        before = {d.name: whole_model_ms(g, d) for d in cpus}
        profs, secs = [], []
        for _ in range(2):
            t0 = time.perf_counter()
            profs.append(profile(g, devs, repeat=a.repeat, cache=False))
            secs.append(time.perf_counter() - t0)
        after = {d.name: whole_model_ms(g, d) for d in cpus}
        row = {
            "nodes": len(g.nodes),
            "signatures": profs[0].extra["profile"]["signatures"],
            "profile_seconds": [round(s, 2) for s in secs],
            "devices": {},
        }
        for d in devs:
            c = [[n.cost[d.name] for n in p.nodes] for p in profs]
            ok = [i for i in range(len(g.nodes)) if c[0][i] is not None and c[1][i] is not None]
            entry = {
                "sum_ops_ms": [round(sum(x for x in ci if x is not None), 3) for ci in c],
                "spearman": round(spearman([c[0][i] for i in ok], [c[1][i] for i in ok]), 4),
                "overhead_ms": profs[0].extra["profile"]["overhead_ms"][d.name],
            }
            if d.name in before:
                k = "device_run" if a.clock == "wall" else "timer"
                w = statistics.median([before[d.name][k], after[d.name][k]])
                entry["whole_ms_before_after"] = [before[d.name], after[d.name]]
                entry["ratio_sum_to_whole"] = [round(s / w, 3) for s in entry["sum_ops_ms"]]
                # the same with each run's p10: less sensitive to other processes on the box
                ov = entry["overhead_ms"]
                p10 = [
                    sum(
                        max(n.extra["stats"][d.name]["p10"] - ov, 0.0)
                        for n in p.nodes
                        if d.name in n.extra["stats"]
                    )
                    for p in profs
                ]
                w10 = min(before[d.name]["device_run_p10"], after[d.name]["device_run_p10"])
                entry["ratio_sum_to_whole_p10"] = [round(s / w10, 3) for s in p10]
                iso = [
                    sum(
                        max(n.extra["stats"][d.name]["median"] - ov, 1e-4)
                        for n in p.nodes
                        if d.name in n.extra["stats"]
                    )
                    for p in profs
                ]
                entry["ratio_isolated_sum_to_whole"] = [round(s / w, 3) for s in iso]
            row["devices"][d.name] = entry
        row["comm_vs_link"] = comm_vs_link(profs[0])
        if a.save_dir:
            profs[0].save(Path(a.save_dir) / f"{name}.problem.json")
        res["models"][name] = row
        print(json.dumps({name: row}, indent=1), flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
