"""The OpenCL driver's threads and what they cost a CPU group (issue 6). Per ``--models``
model: a CPU group's whole-model time alone and while the GPU runs the model over and over,
first with the driver's threads left where they start (every core), then pinned to the GPU's
host core as ``OpenCLDevice.bind_thread`` does (``hetlab/devices/opencl/threads.py``); and the
GPU's own time in both states. Lists the process's threads (name, affinity, whether hetlab
recorded it as a driver thread) with the CPU time each used and the core it last ran on during
the GPU-busy window, so a busy thread hetlab did not record shows up.

    python benchmarks/driver_threads.py --models lstm,googlenet --out driver_threads.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from hostload import on_thread, timed

os.environ["HETLAB_PIN_DRIVER_THREADS"] = "0"  # start free; pinned by hand below

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def stat() -> dict[int, tuple[str, float, int]]:
    """tid -> (name, CPU seconds used so far, core it last ran on)."""
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            raw = Path(f"/proc/self/task/{t}/stat").read_text()
        except OSError:
            continue
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        f = raw[raw.rindex(")") + 2 :].split()
        out[int(t)] = (name, (int(f[11]) + int(f[12])) / TICK, int(f[36]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lstm,googlenet")
    ap.add_argument("--n", type=int, default=9, help="timed runs per figure (median)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from hetlab import zoo
    from hetlab.devices.opencl.threads import affinity, pin
    from hetlab.devices.platform import devices
    from hetlab.graph import load
    from hetlab.graph.inputs import random_inputs

    plat = devices()
    cpus = [d for d in plat if d.kind == "onnxruntime-cpu"]
    cls = [d for d in plat if d.kind == "opencl"]
    gpu = next((d for d in cls if d.info().get("type") == "GPU"), cls[0])  # PoCL: a smoke test
    gpu.host_cores = gpu.host_cores or [(os.cpu_count() or 1) - 1]
    print(
        f"{gpu.name}: host cores {gpu.host_cores}, driver threads recorded {sorted(gpu.driver_threads)}"
    )
    res: dict = {"gpu": gpu.info(), "models": {}}
    for m in a.models.split(","):
        graph = load(str(zoo.path(m)))
        feed = random_inputs(graph, 0)
        work = {}
        for d in [*cpus, gpu]:
            u = d.prepare(graph, [n.id for n in graph.nodes])
            work[d.name] = (d, u, {t: d.copy_in(feed[t]) for t in u.inputs})
        row: dict = {}
        for state in ("free", "pinned"):
            if state == "pinned":
                gpu.pin_driver_threads = True
                print(f"  pinned to {gpu.host_cores}: {gpu.pin_driver()}")
            for cpu in cpus:
                alone = on_thread(timed, work[cpu.name], a.n)
                b, used = busy(work[cpu.name], work[gpu.name], a.n)
                key = f"{cpu.name}|{state}"
                row[key] = {
                    "alone_ms": round(alone, 3),
                    "gpu_busy_ms": round(b, 3),
                    "factor": round(b / alone, 2),
                }
                print(
                    f"{m} driver threads {state}: {cpu.name} alone {alone:.2f} ms, GPU busy {b:.2f} ms (x{b / alone:.2f})"
                )
                top = sorted(used.items(), key=lambda kv: -kv[1][1])[:8]
                for tid, (name, sec, core) in top:
                    tag = "driver" if tid in gpu.driver_threads else ""
                    print(
                        f"    {tid} {name!r:20} cpu {sec:.3f} s, last core {core:>2}, affinity "
                        f"{sorted(affinity(tid) or [])} {tag}"
                    )
                row[key]["threads"] = {
                    str(t): [n, s, c, t in gpu.driver_threads] for t, (n, s, c) in top
                }
            g = on_thread(timed, work[gpu.name], a.n)
            row[f"{gpu.name}|{state}"] = {"alone_ms": round(g, 3)}
            print(f"{m} driver threads {state}: {gpu.name} alone {g:.2f} ms")
        pin(gpu.driver_threads, set(range(os.cpu_count() or 1)))  # free again for the next model
        gpu.pin_driver_threads = False
        res["models"][m] = row
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=1))


def busy(job: tuple, gpu_job: tuple, n: int) -> tuple[float, dict]:
    """``timed(job)`` while the GPU runs ``gpu_job`` over and over, and each thread's
    (name, CPU seconds, last core) over that window."""
    stop = threading.Event()

    def loop() -> None:
        dev, unit, ins = gpu_job
        dev.bind_thread()
        while not stop.is_set():
            dev.run(unit, ins)

    th = threading.Thread(target=loop, daemon=True)
    s0 = stat()
    th.start()
    v = on_thread(timed, job, n)
    stop.set()
    th.join()
    s1 = stat()
    return v, {t: (s1[t][0], round(s1[t][1] - s0.get(t, ("", 0.0, 0))[1], 3), s1[t][2]) for t in s1}


if __name__ == "__main__":
    main()
