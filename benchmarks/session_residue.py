"""Does what profiling leaves in the process slow the CPU groups down (issue 6)? Per CPU group:
the whole model's median time in a fresh process, after profiling the model in the same
process (``hetlab.cost.profile``, which prepares a session per op and per context window), with
new whole-model sessions, after a garbage collection, and after the OpenCL devices are closed. Also the process's thread
count, the CPU time its other threads burn in one idle second and the interrupts per core in
that second, at each step.

    python benchmarks/session_residue.py --model googlenet --devices cpu0,cpu1,cl0
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from hostload import interrupts


def idle_cpu_s(seconds: float = 1.0) -> float:
    """CPU seconds the process's other threads use while this one sleeps ``seconds``."""
    tick = os.sysconf("SC_CLK_TCK")
    me = threading.get_native_id()

    def used() -> int:
        tot = 0
        for t in os.listdir("/proc/self/task"):
            if int(t) == me:
                continue
            try:
                raw = Path(f"/proc/self/task/{t}/stat").read_text()
            except OSError:
                continue
            f = raw[raw.rindex(")") + 2 :].split()
            tot += int(f[11]) + int(f[12])
        return tot

    a = used()
    time.sleep(seconds)
    return (used() - a) / tick


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="googlenet")
    ap.add_argument("--devices", default="cpu0,cpu1,cl0")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from hetlab import zoo
    from hetlab.cost import profile
    from hetlab.devices.platform import devices
    from hetlab.graph import load
    from hetlab.graph.inputs import random_inputs

    want = a.devices.split(",")
    devs = [d for d in devices() if d.name in want]
    cpus = [d for d in devs if d.kind == "onnxruntime-cpu"]
    graph = load(str(zoo.path(a.model)))
    feed = random_inputs(graph, 0)
    whole = {d.name: d.prepare(graph, [n.id for n in graph.nodes]) for d in cpus}

    def timed(d) -> float:
        u = whole[d.name]
        ins = {t: feed[t] for t in u.inputs}
        out = []

        def body() -> None:
            d.bind_thread()
            for _ in range(3):
                d.run(u, ins)
            for _ in range(a.n):
                r = d.run(u, ins)
                out.append((r.finish - r.start) * 1e3)

        th = threading.Thread(target=body)
        th.start()
        th.join()
        return round(statistics.median(out), 3)

    res: dict = {}

    def step(name: str) -> None:
        row = {d.name: timed(d) for d in cpus}
        row["threads"] = len(os.listdir("/proc/self/task"))
        row["sessions"] = {d.name: len(getattr(d, "_sessions", {})) for d in cpus}
        i0 = interrupts()
        row["idle_cpu_s"] = round(idle_cpu_s(), 3)
        row["irq_per_s"] = [y - x for x, y in zip(i0, interrupts(), strict=False)]
        res[name] = row
        print(f"{name:<16} " + json.dumps(row), flush=True)

    step("fresh")
    t = time.monotonic()
    profile(graph, devs, repeat=10, warmup=2, rounds=1, seconds=0.05)
    print(f"profiled in {time.monotonic() - t:.1f} s", flush=True)
    step("after profile")
    for d in cpus:
        d.forget()
    whole.update({d.name: d.prepare(graph, [n.id for n in graph.nodes]) for d in cpus})
    step("new sessions")
    gc.collect()
    step("after gc")
    for d in devs:
        if d not in cpus:
            d.close()
    gc.collect()
    step("opencl closed")
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
