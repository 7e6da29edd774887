"""Why the units of a split plan run slower than the profile says (issue 6).

On the 2-core VM, lstm's heft plan (122 units on cpu0 + cpu1) spent 13.3 ms running units on
its critical path whose profiled cost is 5.8 ms (``critical_path`` of the run report), and the
plan's units run one after another on one core took 16.4 ms against 10.0 ms for the whole
model as one session. This script measures, per model, with CPU-session variants:

- ``default``: as ``hetlab run`` does;
- ``small1``: units under 1 MFLOP on one thread (no pool to wake).

(A third variant, one copy of each weight shared by a device's sessions through
``SessionOptions.add_initializer``, with and without onnxruntime's prepacking, made no
difference that the noise did not swamp on either host, and 1.5-2x slower without
prepacking; it was not kept: ``results/nvidia-h100-16core/unit_cost_share.log``.)

Part 1, ``split``: the plan's units all on cpu0, run in order from one thread, against the
whole model as one session. Part 2, ``plan``: the plan itself (``hetlab.run`` with the
profile): median latency, predictions and the critical path. Variants alternate over
``--rounds``. Medians of ``--repeat`` runs; prints a line each and writes ``--out`` JSON.

    python benchmarks/unit_cost.py --models lstm,googlenet --algos heft,greedy --out F.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VARIANTS = {"default": {}, "small1": {"small_flops": 1_000_000}}


def configure(devs: dict, variant: str) -> None:
    for d in devs.values():
        if d.kind == "opencl":
            continue
        d.forget()
        d.small_flops = 0
        for k, v in VARIANTS[variant].items():
            setattr(d, k, v)


def split_ms(graph, specs, dev, feed, repeat: int) -> float:
    """The units run in order on ``dev`` from this thread (ms, median)."""
    import os

    units = [dev.prepare(graph, s.nodes) for s in specs]
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, dev.cores)
    ts = []
    try:
        for k in range(repeat + 3):
            env = dict(feed)
            t0 = time.perf_counter()
            for u in units:
                env.update(
                    zip(
                        u.outputs,
                        u.handle.run(u.outputs, {t: env[t] for t in u.inputs}),
                        strict=False,
                    )
                )
            if k >= 3:
                ts.append(time.perf_counter() - t0)
    finally:
        os.sched_setaffinity(0, saved)
        dev.forget()
    return float(np.median(ts) * 1e3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lstm,googlenet")
    ap.add_argument("--devices", default="cpu0,cpu1")
    ap.add_argument("--algos", default="heft,greedy")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", default="unit-cost-work")
    ap.add_argument("--out", default="unit_cost.json")
    a = ap.parse_args()

    from hetlab.cost.problem import Problem
    from hetlab.devices.platform import devices as platform_devices
    from hetlab.executor.api import run
    from hetlab.executor.check import random_inputs
    from hetlab.executor.units import build_units
    from hetlab.graph import load
    from hetlab.schedulers.plan import Plan

    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    names = a.devices.split(",")
    devs = {d.name: d for d in platform_devices() if d.name in names}
    variants = a.variants.split(",")
    rows = []
    for m in a.models.split(","):
        prob_path = work / f"{m}.problem.json"
        hetlab = [sys.executable, "-m", "hetlab"]
        subprocess.run(
            [
                *hetlab,
                "profile",
                m,
                "--devices",
                a.devices,
                "--repeat",
                "5",
                "--rounds",
                "1",
                "--seconds",
                "0.05",
                "--quiet",
                "--out",
                str(prob_path),
            ],
            check=True,
        )
        prob = Problem.from_json(json.loads(prob_path.read_text()))
        g = load(m)
        feed = random_inputs(g, 0)
        cpu0 = devs[names[0]]
        for algo in a.algos.split(","):
            plan_path = work / f"{m}.{algo}.plan.json"
            subprocess.run(
                [*hetlab, "schedule", str(prob_path), "--algo", algo, "--out", str(plan_path)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            plan = Plan.from_json(json.loads(plan_path.read_text()))
            specs = build_units(g, plan.device_of, plan.order)
            configure(devs, "default")
            whole = split_ms(
                g, build_units(g, {n.id: cpu0.name for n in g.nodes}), cpu0, feed, a.repeat
            )
            for r in range(a.rounds):
                for v in variants:
                    configure(devs, v)
                    split = split_ms(g, specs, cpu0, feed, a.repeat)
                    configure(devs, v)
                    rep = run(
                        g,
                        plan,
                        devs,
                        repeat=a.repeat,
                        warmup=3,
                        check=True,
                        problem=prob,
                        inputs=feed,
                    )
                    d = rep.to_json()
                    row = {
                        "model": m,
                        "algo": algo,
                        "variant": v,
                        "round": r,
                        "units": rep.units,
                        "whole_on_cpu0_ms": round(whole, 4),
                        "split_on_cpu0_ms": round(split, 4),
                        "median_ms": d["latency_ms"]["median"],
                        "predicted_ms": d["predicted_ms"],
                        "predicted_host_ms": d.get("predicted_host_ms"),
                        "max_rel_err": d["max_rel_err"],
                        "critical_path": d.get("critical_path"),
                    }
                    rows.append(row)
                    cp = row["critical_path"] or {}
                    print(
                        f"{m} {algo} {v:<12} r{r} units {rep.units} | split on {cpu0.name} {split:.3f} "
                        f"(whole {whole:.3f}) | plan {row['median_ms']:.3f} pred {row['predicted_ms']:.3f} "
                        f"host-serial {row['predicted_host_ms'] or float('nan'):.3f} | path run "
                        f"{cp.get('run_ms', float('nan')):.3f} (profiled {cp.get('predicted_run_ms', float('nan')):.3f}) "
                        f"dispatch {cp.get('dispatch_ms', float('nan')):.3f} copies {cp.get('copies_ms', float('nan')):.3f} "
                        f"| err {row['max_rel_err']:.1e}",
                        flush=True,
                    )
                    Path(a.out).write_text(json.dumps(rows, indent=1))
    configure(devs, "default")
    return 0


if __name__ == "__main__":
    sys.exit(main())
