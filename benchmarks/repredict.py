"""Old runs against the current prediction (issue 6): re-predict saved ``mixed_plans.py`` runs.

Each DIR holds what ``mixed_plans.py --out DIR`` wrote: ``MODEL.problem.json``,
``MODEL.ALGO.plan.json`` and ``MODEL.ALGO[.pK].run.json``. For every run report the plan's
``predicted_host_ms`` is computed again with this checkout's ``hetlab.executor.predict``
(host = the first CPU device, remote = the OpenCL devices named by ``--remote``) from the saved
problem (with what this checkout's profiler derives from the same measurements filled in,
``upgraded``), so a change of the model can be judged on every run measured so far, not only
on the next. Prints one line per plan (its processes' measured / predicted, and its median
process) and the counts within ±25% of runs and of plans' median processes; ``--out`` writes
every run's figures and critical path as JSON.

    python benchmarks/repredict.py CALL1_DIR CALL2_DIR ... --out runs.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def graph_of(model: str, cache: dict):
    """The model's graph (``mixed_plans.model_graph``), loaded once."""
    from benchmarks.mixed_plans import model_graph

    if model not in cache:
        cache[model] = model_graph(model)[0]
    return cache[model]


def upgraded(problem):
    """``problem`` with what the current profiler derives from the same measurements filled in
    where an older one left it out: ``boundary.single_unit``'s ``excess_ms`` (the measured
    whole-model latency less the profile's cost of the model on the device)."""
    from hetlab.executor.boundary import excess_ms

    for dev, v in ((problem.extra.get("boundary") or {}).get("single_unit") or {}).items():
        if "excess_ms" not in v and "measured_ms" in v:
            got = excess_ms(problem, dev, float(v["measured_ms"]))
            if got is not None:
                v["excess_ms"] = got
    return problem


def main() -> int:
    from hetlab.cost.problem import Problem
    from hetlab.executor.predict import host_serial_ms
    from hetlab.schedulers.plan import Plan

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--remote", default="cl0", help="devices without host-shared memory")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    graphs: dict = {}
    rows, inside, total, plans_inside, plans_total = [], 0, 0, 0, 0
    for d in map(Path, a.dirs):
        plans: dict[str, list[float]] = {}
        for f in sorted(d.glob("*.run.json")):
            model, algo = f.name.split(".")[:2]
            prob = upgraded(
                Problem.from_json(json.loads((d / f"{model}.problem.json").read_text()))
            )
            plan = Plan.load(d / f"{model}.{algo}.plan.json")
            rep = json.loads(f.read_text())
            host = next(x for x in prob.devices if x not in a.remote.split(","))
            pred = host_serial_ms(
                prob,
                graph_of(model, graphs),
                plan.device_of,
                plan.order,
                host,
                set(a.remote.split(",")),
                plan.sequential,
            )
            meas = rep["latency_ms"]["median"]
            ratio = meas / pred if pred else None
            plans.setdefault(f"{model} {algo}", []).append(ratio)
            if ratio is not None:
                total += 1
                inside += 0.75 <= ratio <= 1.25
            rows.append(
                {
                    "dir": str(d),
                    "run": f.name,
                    "model": model,
                    "algo": algo,
                    "units": rep.get("units"),
                    "latency_ms": rep["latency_ms"],
                    "predicted_ms": rep.get("predicted_ms"),
                    "predicted_host_ms_then": rep.get("predicted_host_ms"),
                    "predicted_host_ms_now": None if pred is None else round(pred, 4),
                    "ratio_now": None if ratio is None else round(ratio, 3),
                    "critical_path": rep.get("critical_path"),
                }
            )
        for k, v in plans.items():
            got = sorted(x for x in v if x is not None)
            mid = got[len(got) // 2] if got else None  # the median process (upper median)
            if mid is not None:
                plans_total += 1
                plans_inside += 0.75 <= mid <= 1.25
            print(
                f"{d}: {k:<24} "
                + ", ".join("n/a" if x is None else f"x{x:.2f}" for x in v)
                + ("" if mid is None else f"  (median process x{mid:.2f})")
            )
    print(
        f"within ±25% of predicted_host_ms: {inside} of {total} runs; "
        f"median process within ±25%: {plans_inside} of {plans_total} plans"
    )
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
