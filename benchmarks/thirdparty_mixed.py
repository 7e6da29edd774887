"""Mixed plans on real third-party models, checked against onnxruntime (issue 6's acceptance):
a detector (ddddocr's ``dddd_det``), an OCR recognizer with attention (PP-OCRv4 ``ppocr_rec``,
SVTR) and an audio LSTM (``silero_vad``; its LSTM sits inside an ``If``). Per model: profile on
``--devices``, schedule with each ``--algos``, plus ``prefer:GPU`` (every node the GPU can run
on it, the rest on the first CPU group: silero's schedulers keep it all on one CPU group, so
this is its mixed plan), then ``hetlab run --plan --check``. Prints and writes per plan: nodes
per device, units, predicted and measured median (ms), max_rel_err and fallbacks.

    python tests/thirdparty/fetch.py   # the models, into .cache/thirdparty/
    python benchmarks/thirdparty_mixed.py --devices cpu0,cpu1,cl0 --out DIR
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = {  # name -> CLI arguments fixing its inputs
    "dddd_det": [],
    "ppocr_rec": ["--shape", "x=1x3x48x320"],
    "silero_vad": ["--shape", "input=1x512", "--shape", "state=2x1x128", "--input", "sr=16000"],
}


def hetlab(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "hetlab", *args], check=True, stdout=subprocess.DEVNULL)


def prefer_plan(problem_path: Path, gpu: str, out: Path) -> None:
    """Every node with a cost on ``gpu`` there, the rest on the first other device."""
    from hetlab.cost.problem import Problem
    from hetlab.fileio import atomic_write_json, read_json
    from hetlab.schedulers.plan import Plan

    prob = Problem.from_json(read_json(problem_path))
    other = next(d for d in prob.devices if d != gpu)
    dev = {n.id: gpu if n.cost.get(gpu) is not None else other for n in prob.nodes}
    plan = Plan.build(prob, f"prefer:{gpu}", dev, [n.id for n in prob.nodes])
    atomic_write_json(out, plan.to_json())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cpu0,cpu1,cl0")
    ap.add_argument("--algos", default="ilp,greedy,heft")
    ap.add_argument("--gpu", default="cl0", help="the device of the prefer: plan")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--repeat", default="10")
    ap.add_argument("--out", default="thirdparty-out")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for m in a.models.split(","):
        onnx = ROOT / ".cache" / "thirdparty" / f"{m}.onnx"
        if not onnx.exists():
            print(f"{m}: {onnx} missing (run tests/thirdparty/fetch.py); skipped", flush=True)
            continue
        prob = out / f"{m}.problem.json"
        hetlab("profile", str(onnx), "--devices", a.devices, *MODELS[m], "--repeat", "5",
               "--rounds", "1", "--seconds", "0.05", "--quiet", "--out", str(prob))  # fmt: skip
        for algo in [*a.algos.split(","), f"prefer:{a.gpu}"]:
            plan = out / f"{m}.{algo.replace(':', '-')}.plan.json"
            if algo.startswith("prefer:"):
                prefer_plan(prob, a.gpu, plan)
            else:
                hetlab("schedule", str(prob), "--algo", algo, "--out", str(plan))
            rep = out / f"{m}.{algo.replace(':', '-')}.run.json"
            r = subprocess.run([sys.executable, "-m", "hetlab", "run", str(onnx), "--plan", str(plan), *MODELS[m],
                                "--check", "--repeat", a.repeat, "--json"], capture_output=True, text=True)  # fmt: skip
            if r.returncode:
                print(f"{m} {algo}: run failed: {r.stderr.strip()[-300:]}", flush=True)
                continue
            rep.write_text(r.stdout)
            d = json.loads(r.stdout)
            per_dev: dict[str, int] = {}
            for x in json.loads(plan.read_text())["assignments"]:
                per_dev[x["device"]] = per_dev.get(x["device"], 0) + 1
            row = {"model": m, "algo": algo, "nodes": per_dev, "units": d.get("units"),
                   "predicted_ms": d["predicted_ms"], "median_ms": d["latency_ms"]["median"],
                   "p10_ms": d["latency_ms"]["p10"], "p90_ms": d["latency_ms"]["p90"],
                   "max_rel_err": d.get("max_rel_err"), "fallbacks": d.get("fallbacks"),
                   "nodes_executed": d.get("nodes_executed")}  # fmt: skip
            rows.append(row)
            print(f"{m:<10} {algo:<11} nodes {per_dev} units {row['units']} predicted "
                  f"{row['predicted_ms']:.3f} measured {row['median_ms']:.3f} "
                  f"(x{row['median_ms'] / row['predicted_ms']:.2f}) max_rel_err {row['max_rel_err']:.2e} "
                  f"fallbacks {row['fallbacks'] or 'none'}", flush=True)  # fmt: skip
            (out / "thirdparty_mixed.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
