"""Profiler figures: profiling time, sum-of-ops vs whole model,
profile-to-profile rank correlation, measured edge transfers vs the fitted link model.

    python -m benchmarks.profiler [--models squeezenet,googlenet,inception_v3]
        [--devices cpu0,cpu1] [--repeat 20] [--out FILE.json]

For each model: two fresh profiles (``hetlab.profile``, no cache) on the devices, timed; the
whole model run on each CPU device as ``hetlab run --device`` runs it (one unit), median and
p10 of 20 runs measured right before and right after the profiles; Spearman correlation of
the two profiles' per-op costs per device; and for every device pair, how the per-shape
transfers compare to ``latency + bytes / bandwidth``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

import hetlab
from hetlab.cost import spearman
from hetlab.devices import devices as all_devices


def whole_model_ms(graph, dev, devs, n: int = 20) -> dict[str, float]:
    """The whole model on ``dev`` as ``hetlab run --device`` runs it (one unit, after the
    run's warm-up): median and p10 ms of ``n`` runs."""
    lat = hetlab.run(graph, dev.name, devs, repeat=n).latency_ms
    return {"run_ms": lat["median"], "run_p10_ms": lat["p10"]}


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
    ap.add_argument("--out", default="")
    ap.add_argument("--save-dir", default="", help="also write each model's first problem here")
    a = ap.parse_args()
    devs = all_devices()
    devs = [d for n in a.devices.split(",") for d in devs if d.name == n] if a.devices else devs[:2]
    cpus = [d for d in devs if d.kind == "onnxruntime-cpu"]
    res: dict = {"devices": [d.info() for d in devs], "models": {}}
    for name in a.models.split(","):
        g = hetlab.load(name)
        before = {d.name: whole_model_ms(g, d, devs) for d in cpus}
        profs, secs = [], []
        for _ in range(2):
            t0 = time.perf_counter()
            profs.append(hetlab.profile(g, devs, repeat=a.repeat, cache=False))
            secs.append(time.perf_counter() - t0)
        after = {d.name: whole_model_ms(g, d, devs) for d in cpus}
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
                w = statistics.median([before[d.name]["run_ms"], after[d.name]["run_ms"]])
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
                w10 = min(before[d.name]["run_p10_ms"], after[d.name]["run_p10_ms"])
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
