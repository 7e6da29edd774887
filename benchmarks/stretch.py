"""NN-Stretch on this machine: (1) the stretched model on two devices against the
original on its best single device; (2) adaptive against static execution of the stretched
model while a CPU burner contends one device. All through ``hetlab`` commands (subprocesses),
so the numbers are what a user gets:

    python -m benchmarks.stretch [--models resnet50,squeezenet] [--devices cpu0,cpu1]
                                 [--repeat 10] [--rounds 2] [--adaptive-repeat 24] [--out FILE.json]

Per model: ``hetlab stretch MODEL --devices A,B --out S.onnx`` (device throughputs measured
by whole-model runs), then ``hetlab run MODEL --device D --repeat N`` for each device and
``hetlab run S.onnx --plan S.plan.json --repeat N --check``, alternated for ``--rounds``
rounds so load drifts hit all of them; medians in ms (median of the round medians).
Then ``hetlab run S.onnx --plan S.plan.json --adaptive --compare --interfere A:K:M`` with a
burner (3 processes pinned to device A's cores) during runs K..M-1 of the adaptive and the
static pass each. The stretched model has fresh random weights (accuracy needs retraining).

On a GPU host pass its devices, e.g. ``--devices cpu0,cl0`` (cl0 = the GPU's OpenCL device)
or ``--devices cpu0,cpu1,cl0``. The stretched model only wins where the devices are free to run
in parallel; the script's parallel-capacity probe (two pinned sessions at once against one
alone) says how much parallelism the host gives. Figures: docs/log.md#nn-stretch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def hetlab(*args: str) -> dict:
    r = subprocess.run(
        [sys.executable, "-m", "hetlab", *args, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if r.returncode != 0:
        raise SystemExit(f"hetlab {' '.join(args)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def parallel_capacity(devices: list[str], model: str = "squeezenet", n: int = 8) -> dict:
    """How many of ``devices`` can really work at once here: one plain onnxruntime session
    per device (one thread, pinned to the group's first core), alone and all together;
    capacity = len(devices) x alone / together (2.0 = two free cores, 1.0 = one)."""
    import os
    import threading
    import time

    import numpy as np
    import onnxruntime as ort

    from hetlab import zoo
    from hetlab.devices import devices as platform_devices

    cores = {
        d.name: d.cores[0]
        for d in platform_devices()
        if d.name in devices and getattr(d, "cores", None)
    }
    if len(cores) < 2:
        return {"skipped": "needs two CPU groups"}
    path = str(zoo.path(model))
    x = {"input": np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)}

    def session():
        o = ort.SessionOptions()
        o.intra_op_num_threads = o.inter_op_num_threads = 1
        return ort.InferenceSession(path, o)

    sessions = {d: session() for d in cores}
    out: dict[str, float] = {}

    def work(d: str) -> None:
        os.sched_setaffinity(0, {cores[d]})
        sessions[d].run(None, x)
        t = time.perf_counter()
        for _ in range(n):
            sessions[d].run(None, x)
        out[d] = (time.perf_counter() - t) / n * 1000

    first = next(iter(cores))
    t1 = threading.Thread(target=work, args=(first,))  # a thread: the process keeps its affinity
    t1.start()
    t1.join()
    alone = out[first]
    ts = [threading.Thread(target=work, args=(d,)) for d in cores]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    together = statistics.mean(out.values())
    return {
        "model": model,
        "alone_ms": round(alone, 2),
        "together_ms": round(together, 2),
        "capacity": round(len(cores) * alone / together, 2),
    }


def bench_model(model: str, devices: list[str], repeat: int, rounds: int, tmp: Path) -> dict:
    out = tmp / f"{model}-stretched.onnx"
    st = hetlab("stretch", model, "--devices", ",".join(devices), "--out", str(out))
    runs: dict[str, list[float]] = {}
    errs = []
    for _ in range(rounds):
        for d in devices:
            rep = hetlab("run", model, "--device", d, "--repeat", str(repeat))
            runs.setdefault(f"original@{d}", []).append(rep["latency_ms"]["median"])
        rep = hetlab("run", str(out), "--plan", st["plan"], "--repeat", str(repeat), "--check")
        runs.setdefault("stretched@" + "+".join(devices), []).append(rep["latency_ms"]["median"])
        errs.append(rep["max_rel_err"])
    med = {k: round(statistics.median(v), 2) for k, v in runs.items()}
    best = min((k for k in med if k.startswith("original@")), key=med.get)
    sk = "stretched@" + "+".join(devices)
    return {
        "model": model,
        "flops_original": st["original_flops"],
        "flops_stretched": st["flops"],
        "throughput_gflops": st["throughput_gflops"],
        "config": st["parts"],
        "candidates": st["candidates"],
        "median_ms": med,
        "round_medians_ms": runs,
        "best_single": best,
        "max_rel_err": max(errs),
        "speedup_vs_best_single": round(med[best] / med[sk], 3),
        "stretched_path": str(out),
        "plan": st["plan"],
    }


def bench_adaptive(res: dict, devices: list[str], repeat: int) -> dict:
    k0, k1 = repeat // 5, repeat - repeat // 5
    rep = hetlab(
        "run",
        res["stretched_path"],
        "--plan",
        res["plan"],
        "--repeat",
        str(repeat),
        "--adaptive",
        "--compare",
        "--interfere",
        f"{devices[0]}:{k0}:{k1}",
    )
    return {
        "model": res["model"],
        "interfere": f"{devices[0]} runs {k0}..{k1 - 1}",
        "repeat": repeat,
        "adaptive_median_ms": rep["latency_ms"]["median"],
        "static_median_ms": rep["static_median_ms"],
        "switches": rep["adaptive"]["switches"],
        "adaptive": rep["adaptive"],
        "static": rep["static"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,squeezenet")
    ap.add_argument("--devices", default="cpu0,cpu1")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--adaptive-repeat", type=int, default=24)
    ap.add_argument("--out", default="stretch.json")
    a = ap.parse_args()
    devices = a.devices.split(",")
    cap = parallel_capacity(devices)
    print(f"parallel capacity of {','.join(devices)}: {cap}", flush=True)
    doc = {
        "devices": devices,
        "repeat": a.repeat,
        "rounds": a.rounds,
        "parallel_capacity": cap,
        "models": [],
        "adaptive": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.models.split(","):
            res = bench_model(m, devices, a.repeat, a.rounds, Path(tmp))
            print(
                f"{m:11s} "
                + "  ".join(f"{k} {v:.1f} ms" for k, v in res["median_ms"].items())
                + f"  speedup vs {res['best_single']} {res['speedup_vs_best_single']:.2f}x"
                + f"  max_rel_err {res['max_rel_err']:.1e}",
                flush=True,
            )
            ad = bench_adaptive(res, devices, a.adaptive_repeat)
            print(
                f"{m:11s} under a burner on {ad['interfere']}: adaptive median {ad['adaptive_median_ms']:.1f} ms, "
                f"static {ad['static_median_ms']:.1f} ms, switches {[(s['run'], s['to']) for s in ad['switches']]}",
                flush=True,
            )
            for r in (res, ad):
                r.pop("stretched_path", None)
                r.pop("plan", None)
            doc["models"].append(res)
            doc["adaptive"].append(ad)
    Path(a.out).write_text(json.dumps(doc, indent=1))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
