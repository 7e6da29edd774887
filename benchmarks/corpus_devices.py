"""Each corpus model on each device alone, as ``hetlab run MODEL --device D --check`` runs it,
and the ``ilp`` and ``greedy`` plans over device pairs, profiled short and run checked.

One JSON line per model and run: the nodes per device (what ``D`` refuses stays on ``cpu0``),
the median, ``max_rel_err``, onnxruntime's own ``reference_spread`` and whether the error is
within max(1e-4, 3 x spread). Each device's row after ``cpu0``'s also has ``vs_cpu0``, its
median over ``cpu0``'s (a kernel device on the CPU, PoCL, should stay within 5), and one line
per model prints those ratios. The corpus acceptance on a host with several OpenCL devices and
a GPU:

    python -m benchmarks.corpus_devices --devices cpu0,cl0,cl1,cuda0 --pairs cpu0+cuda0 \\
        --out corpus_devices.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import hetlab
from hetlab.corpus import MODELS
from hetlab.devices import select
from hetlab.errors import HetlabError
from hetlab.executor import load_inputs

SHORT = {"repeat": 3, "warmup": 1, "rounds": 1, "seconds": 0.02, "context": 0, "comm": False}
TOL = 1e-4


def checked(rep: Any, spread: float | None) -> dict[str, Any]:
    """A run's nodes per device, median, error and whether it is within the tolerance: the
    corpus rule, or the one the report declares (a model with float16 outputs)."""
    declared = (rep.extra.get("tolerance") or {}).get("value")
    tol = max(TOL, 3 * (spread or 0.0), declared or 0.0)
    return {
        "per_device": dict(rep.devices),
        "median_ms": rep.latency_ms["median"],
        "max_rel_err": rep.max_rel_err,
        "ok": rep.max_rel_err is not None and rep.max_rel_err <= tol,
    }


def model_rows(name: str, singles: list[str], pairs: list[list[str]], repeat: int):
    """The rows of one model: each device alone, then each pair's plans."""
    m = MODELS[name]
    if not m.path.exists():
        yield {"model": name, "run": "missing"}
        return
    try:
        g = hetlab.load(str(m.path), m.shapes or None, m.inputs() or None)
        feed = load_inputs(g, m.inputs())
    except HetlabError as e:
        yield {"model": name, "run": "load", "error": str(e)[:300]}
        return
    spread, base = None, None
    for d in singles:
        try:
            devs = select(["cpu0", d] if d != "cpu0" else ["cpu0"])
            rep = hetlab.run(g, d, devs, check=True, inputs=feed, repeat=repeat)
            spread = rep.extra.get("reference_spread")
            row = {"model": name, "run": d, "nodes": len(g.nodes), "reference_spread": spread}
            row.update(checked(rep, spread))
            if d == "cpu0":
                base = row["median_ms"]
            elif base:
                row["vs_cpu0"] = round(row["median_ms"] / base, 2)
            yield row
        except HetlabError as e:
            yield {"model": name, "run": d, "error": str(e)[:300]}
    for pair in pairs:
        try:
            devs = select(pair)
            prob = hetlab.profile(g, devs, cache=False, inputs=m.inputs() or None, **SHORT)
            for algo in ("ilp", "greedy"):
                rep = hetlab.run(g, hetlab.schedule(prob, algo), devs, check=True, inputs=feed)
                yield {"model": name, "run": f"{'+'.join(pair)}:{algo}", **checked(rep, spread)}
        except HetlabError as e:
            yield {"model": name, "run": "+".join(pair), "error": str(e)[:300]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--devices", default="cpu0,cl0", help="each run alone (--device D)")
    ap.add_argument("--pairs", default="", help="device pairs for ilp and greedy, e.g. cpu0+cl0")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out", default="corpus_devices.jsonl")
    args = ap.parse_args(argv)
    pairs = [p.split("+") for p in args.pairs.split(",") if p]
    with open(args.out, "w") as out:
        for name in args.models.split(","):
            t0 = time.time()
            ratios = []
            for row in model_rows(name, args.devices.split(","), pairs, args.repeat):
                out.write(json.dumps(row) + "\n")
                out.flush()
                if "vs_cpu0" in row:
                    ratios.append(f"{row['run']}/cpu0 {row['vs_cpu0']:.2f}")
            print(f"{name}: {time.time() - t0:.0f} s {' '.join(ratios)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
