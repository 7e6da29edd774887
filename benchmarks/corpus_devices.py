"""Each corpus model on each device alone, as ``hetlab run MODEL --device D --check`` runs it,
and the ``ilp`` and ``greedy`` plans over device pairs, profiled short and run checked.

One JSON line per model and run: the nodes per device (what ``D`` refuses stays on ``cpu0``),
the median, ``max_rel_err``, onnxruntime's own ``reference_spread`` and whether the error is
within max(1e-4, 3 x spread). The corpus acceptance on a host with several OpenCL devices and
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
    """A run's nodes per device, median, error and whether it is within the tolerance."""
    tol = max(TOL, 3 * (spread or 0.0))
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
    g = hetlab.load(str(m.path), m.shapes or None, m.inputs() or None)
    feed = load_inputs(g, m.inputs())
    spread = None
    for d in singles:
        try:
            devs = select(["cpu0", d] if d != "cpu0" else ["cpu0"])
            rep = hetlab.run(g, d, devs, check=True, inputs=feed, repeat=repeat)
            spread = rep.extra.get("reference_spread")
            row = {"model": name, "run": d, "nodes": len(g.nodes), "reference_spread": spread}
            yield {**row, **checked(rep, spread)}
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
            for row in model_rows(name, args.devices.split(","), pairs, args.repeat):
                out.write(json.dumps(row) + "\n")
                out.flush()
            print(f"{name}: {time.time() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
