"""How reproducible profiles and runs are on this host, across processes (issue 6).

±25% between a plan's prediction and its measured median only means something if both sides
repeat to better than that. Per model: ``--profiles`` profiles in fresh processes with
``--no-cache`` (each device's whole-model median, and the makespan that each ``--algos``
plan gets from each profile), then the plans of the first profile each run by ``hetlab run
--plan --profile --repeat N --json`` in ``--runs`` fresh processes. Prints the spread
(max / min) of each and writes ``--out`` JSON.

    python benchmarks/spread.py --models googlenet --devices cpu0,cpu1 --algos heft,single:cpu0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from mixed_plans import hetlab, model_source, quick_profile, run_plan


def spread(xs: list[float]) -> float:
    return max(xs) / min(xs) if xs and min(xs) > 0 else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="googlenet")
    ap.add_argument("--devices", default="cpu0,cpu1")
    ap.add_argument("--algos", default="heft,single:cpu0")
    ap.add_argument("--profiles", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", default="20")
    ap.add_argument("--work", default="spread-work")
    ap.add_argument("--out", default="spread.json")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    out = []
    for m in a.models.split(","):
        src = model_source(m)
        if src is None:
            continue
        onnx, args = src
        row: dict = {
            "model": m,
            "devices": a.devices,
            "whole_model_ms": {},
            "makespan_ms": {},
            "run_median_ms": {},
        }
        for k in range(a.profiles):
            prob = work / f"{m}.{k}.problem.json"
            quick_profile(onnx, a.devices, args, prob, "--no-cache")
            doc = json.loads(prob.read_text())
            for d, st in doc["profile"].get("whole_model_ms", {}).items():
                row["whole_model_ms"].setdefault(d, []).append(st["median"])
            for algo in a.algos.split(","):
                plan = work / f"{m}.{k}.{algo.replace(':', '-')}.plan.json"
                hetlab("schedule", str(prob), "--algo", algo, "--out", str(plan))
                row["makespan_ms"].setdefault(algo, []).append(
                    json.loads(plan.read_text())["makespan"]
                )
        for algo in a.algos.split(","):
            plan = work / f"{m}.0.{algo.replace(':', '-')}.plan.json"
            for _ in range(a.runs):
                d = run_plan(onnx, plan, work / f"{m}.0.problem.json", args, a.repeat, check=False)
                if d is not None:
                    row["run_median_ms"].setdefault(algo, []).append(d["latency_ms"]["median"])
        out.append(row)
        for key in ("whole_model_ms", "makespan_ms", "run_median_ms"):
            for name, xs in row[key].items():
                print(
                    f"{m:<10} {key:<15} {name:<12} spread x{spread(xs):.2f}  "
                    + " ".join(f"{x:.3f}" for x in xs),
                    flush=True,
                )
        Path(a.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
