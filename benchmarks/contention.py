"""Contention between devices by onnxruntime spin mode (issue 6): for each ``--spins`` mode,
each model's whole-model time on a device while another device runs the model over and over,
against its time alone (``fidelity.contention``). The standard timing model (spec §3) takes
devices as independent, i.e. every factor 1. Also runs ``cores.py`` first (how many cores the
machine gives at once).

    python benchmarks/contention.py --models lstm,googlenet --spins on,stop,off
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lstm,googlenet")
    ap.add_argument("--spins", default="on,stop,off")
    ap.add_argument("--out", default=None, help="JSON file for the factors")
    a = ap.parse_args()
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cores.py")], check=False)
    from fidelity import contention

    from hetlab import zoo
    from hetlab.devices.ort_cpu import OrtCpuDevice
    from hetlab.devices.platform import devices
    from hetlab.graph import load
    from hetlab.graph.inputs import random_inputs

    plat = devices()
    cpus = [d for d in plat if d.kind == "onnxruntime-cpu"]
    gpus = [d for d in plat if d.kind == "opencl" and d.info().get("type") == "GPU"]
    res = {}
    for m in a.models.split(","):
        graph = load(str(zoo.path(m)))
        feed = random_inputs(graph, 0)
        for spin in a.spins.split(","):
            devs = [OrtCpuDevice(d.name, d.cores, d.threads, spin=spin) for d in cpus] + gpus
            print(f"{m} spin={spin}", flush=True)
            res[f"{m}|{spin}"] = contention(graph, devs, feed)
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
