"""How much slower one CPU group runs while the other is busy (issue 6: contention between
groups). On the H100 host the critical path of googlenet's heft plan on cpu0 + cpu1 spent
1.6-1.9x the profiled time inside its units' runs, while the same units run one after
another on one group took about the whole model's time (``unit_cost.py``).

For each model and each CPU group: the median whole-model time of ``--repeat`` runs
- ``alone``;
- ``process``: the other group runs the same model in a loop in another process (what the
  hardware shares: caches, memory bandwidth, clocks);
- ``thread``: the same loop on a thread of this process, at the executor's 0.1 ms GIL
  switch interval (hardware plus the GIL);
- ``python``: a pure-Python loop on a thread pinned to the other group (the GIL alone).
Prints a line per model and group and writes ``--out`` JSON.

    python benchmarks/corun.py --models googlenet,lstm --devices cpu0,cpu1 --out corun.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.hostload import on_thread, timed


def job(model: str, name: str) -> tuple:
    from hetlab.devices.platform import devices
    from hetlab.executor.check import random_inputs
    from hetlab.graph import load

    g = load(model)
    dev = next(d for d in devices() if d.name == name)
    unit = dev.prepare(g, [n.id for n in g.nodes])
    return dev, unit, random_inputs(g, 0)


def loop(model: str, name: str, stop: object, ready: object) -> None:
    dev, unit, ins = job(model, name)
    dev.bind_thread()
    dev.run(unit, ins)
    ready.set()
    while not stop.is_set():
        dev.run(unit, ins)


def pure_python(cores: list[int], stop: threading.Event) -> None:
    os.sched_setaffinity(0, cores)
    x = 0
    while not stop.is_set():
        for i in range(1000):
            x += i


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="googlenet,lstm,inception_v3")
    ap.add_argument("--devices", default="cpu0,cpu1")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--out", default="corun.json")
    a = ap.parse_args()
    names = a.devices.split(",")
    rows = []
    ctx = mp.get_context("spawn")
    for m in a.models.split(","):
        for me, other in ((names[0], names[1]), (names[1], names[0])):
            mine = job(m, me)

            def timed_n(mine: tuple = mine) -> float:
                return on_thread(timed, mine, a.repeat)

            on_thread(timed, mine, 5)
            row = {"model": m, "device": me, "other": other, "alone": timed_n()}
            stop, ready = ctx.Event(), ctx.Event()
            p = ctx.Process(target=loop, args=(m, other, stop, ready), daemon=True)
            p.start()
            ready.wait(120)
            time.sleep(0.2)
            row["process"] = timed_n()
            stop.set()
            p.join(10)
            old = sys.getswitchinterval()
            sys.setswitchinterval(1e-4)
            try:
                tstop, tready = threading.Event(), threading.Event()
                th = threading.Thread(target=loop, args=(m, other, tstop, tready), daemon=True)
                th.start()
                tready.wait(120)
                row["thread"] = timed_n()
                tstop.set()
                th.join(10)
                pstop = threading.Event()
                from hetlab.devices.platform import devices

                other_cores = next(d.cores for d in devices() if d.name == other)
                th = threading.Thread(target=pure_python, args=(other_cores, pstop), daemon=True)
                th.start()
                row["python"] = timed_n()
                pstop.set()
                th.join(10)
            finally:
                sys.setswitchinterval(old)
            row["alone_after"] = timed_n()
            rows.append({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()})
            base = (row["alone"] + row["alone_after"]) / 2
            print(
                f"{m:<13} {me} alone {row['alone']:.3f}/{row['alone_after']:.3f} ms | other group busy: "
                f"process x{row['process'] / base:.2f}, thread x{row['thread'] / base:.2f}, "
                f"pure Python x{row['python'] / base:.2f}",
                flush=True,
            )
            Path(a.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
