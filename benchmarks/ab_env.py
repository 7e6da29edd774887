"""An environment variable's values, A/B, on plans run as a user runs them (issue 6).

Per model: ``hetlab profile`` and ``hetlab schedule`` once, then every plan run by
``hetlab run --plan --profile --check --repeat N --json`` in a fresh process with ``--var``
set to each of ``--values`` in turn, alternating over ``--rounds``. Prints a line per run
(median, measured over ``predicted_host_ms``, the critical path) and writes ``--out`` JSON.
Used for ``HETLAB_SWITCH_INTERVAL_US`` (the executor's GIL switch interval); the
``caller_pin_*`` results came from it with a variable for where onnxruntime's calling thread
was pinned, an experiment that was not kept.

    python benchmarks/ab_env.py --models lstm,dddd_det --var HETLAB_SWITCH_INTERVAL_US --values 100,20
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from mixed_plans import hetlab, profiled_models, run_plan


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lstm")
    ap.add_argument("--devices", default="cpu0,cpu1,cl0")
    ap.add_argument("--algos", default="greedy,heft,dmdar")
    ap.add_argument("--repeat", default="20")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--var", default="HETLAB_SWITCH_INTERVAL_US")
    ap.add_argument("--values", default="100,20")
    ap.add_argument("--work", default="ab-env-work")
    ap.add_argument("--out", default="ab_env.json")
    a = ap.parse_args()
    work = Path(a.work)
    rows = []
    for m, onnx, args, prob in profiled_models(a.models, a.devices, work):
        for algo in a.algos.split(","):
            plan = work / f"{m}.{algo}.plan.json"
            hetlab("schedule", str(prob), "--algo", algo, "--out", str(plan))
            for r in range(a.rounds):
                for variant in a.values.split(","):
                    env = dict(os.environ, **{a.var: variant})
                    d = run_plan(onnx, plan, prob, args, a.repeat, env=env)
                    if d is None:
                        continue
                    host = d.get("predicted_host_ms")
                    cp = d.get("critical_path") or {}
                    row = {
                        "model": m,
                        "algo": algo,
                        "variant": variant,
                        "round": r,
                        "units": d["units"],
                        "median_ms": d["latency_ms"]["median"],
                        "predicted_ms": d["predicted_ms"],
                        "predicted_io_ms": d.get("predicted_io_ms"),
                        "predicted_host_ms": host,
                        "max_rel_err": d["max_rel_err"],
                        "critical_path": cp,
                    }
                    rows.append(row)
                    ratio = row["median_ms"] / host if host else float("nan")
                    print(
                        f"{m:<10} {algo:<7} {variant:<6} r{r} units {d['units']:>3} median {row['median_ms']:.3f} "
                        f"pred {row['predicted_ms']:.3f} host-serial {host or float('nan'):.3f} (x{ratio:.2f}) | path "
                        f"run {cp.get('run_ms', 0):.3f} profiled {cp.get('predicted_run_ms', 0):.3f} dispatch "
                        f"{cp.get('dispatch_ms', 0):.3f} copies {cp.get('copies_ms', 0):.3f} | err {row['max_rel_err']:.1e}",
                        flush=True,
                    )
                    Path(a.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
