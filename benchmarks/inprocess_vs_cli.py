"""The same plans run in this process after profiling it (what the workbench's Run button
does: ``hetlab.run`` with the profile) and by ``hetlab run --plan`` in a process of its own
(issue 6: in-process figures of ``fidelity.py`` were far above the CLI's). Per model and
``--algos``: the median of ``--repeat`` runs each way, alternated ``--rounds`` times.

    python benchmarks/inprocess_vs_cli.py --models lstm --devices cpu0,cpu1,cl0 --algos heft,greedy
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
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lstm")
    ap.add_argument("--devices", default="cpu0,cpu1,cl0")
    ap.add_argument("--algos", default="single:cpu0,heft,greedy,dmdar")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from hetlab import zoo
    from hetlab.cost import profile
    from hetlab.devices.platform import devices
    from hetlab.executor import run
    from hetlab.graph import load
    from hetlab.schedulers import schedule

    want = a.devices.split(",")
    devs = [d for d in devices() if d.name in want]
    tmp = Path(tempfile.mkdtemp(prefix="hetlab-ipc-"))
    rows = []
    for m in a.models.split(","):
        graph = load(str(zoo.path(m)))
        prob = profile(graph, devs, repeat=5, rounds=1, seconds=0.05)
        prob.save(tmp / f"{m}.json")
        for algo in a.algos.split(","):
            plan = schedule(prob, algo)
            plan.save(tmp / f"{m}.{algo.replace(':', '-')}.plan.json")
            inproc, cli = [], []
            for _ in range(a.rounds):
                rep = run(graph, plan, devs, repeat=a.repeat, problem=prob)
                inproc.append(rep.latency_ms["median"])
                r = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "hetlab",
                        "run",
                        m,
                        "--plan",
                        str(tmp / f"{m}.{algo.replace(':', '-')}.plan.json"),
                        "--profile",
                        str(tmp / f"{m}.json"),
                        "--repeat",
                        str(a.repeat),
                        "--json",
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                cli.append(json.loads(r.stdout)["latency_ms"]["median"])
            ext = rep.to_json()
            row = {
                "model": m,
                "algo": algo,
                "units": rep.units,
                "predicted_ms": rep.predicted_ms,
                "predicted_host_ms": ext.get("predicted_host_ms"),
                "in_process_ms": round(statistics.median(inproc), 4),
                "cli_ms": round(statistics.median(cli), 4),
                "in_process_rounds": inproc,
                "cli_rounds": cli,
            }
            rows.append(row)
            print(
                f"{m:<10} {algo:<12} units {rep.units:>3} predicted {rep.predicted_ms:.3f} "
                f"(host-serial {row['predicted_host_ms']}) in process {row['in_process_ms']:.3f} "
                f"{[round(x, 2) for x in inproc]} cli {row['cli_ms']:.3f} {[round(x, 2) for x in cli]}",
                flush=True,
            )
            if a.out:
                Path(a.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
