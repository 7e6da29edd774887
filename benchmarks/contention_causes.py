"""Why a CPU group slows down while the GPU runs (issue 6): a CPU group's whole-model time
(median of ``--n`` runs) alone and under each of these loads, to tell the causes apart:

- ``gpu-thread``: the GPU runs the model over and over on a thread of this process (Python's
  default 5 ms GIL switch interval), as in ``fidelity.contention``;
- ``gpu-thread-0.1ms``: the same with a 0.1 ms switch interval (what the executor sets);
- ``gpu-thread-main``: the same, but timed on the main thread as ``fidelity.contention`` does;
- ``py-thread`` / ``py-thread-0.1ms``: no GPU, a pure-Python busy loop on a thread pinned to
  the GPU's host core (GIL contention alone);
- ``gpu-process``: the GPU loop in a separate process pinned to the host core (no shared GIL:
  what remains is the OS, the driver and the hardware).

Also the interrupts each core took during ``gpu-thread`` and ``gpu-process`` (/proc/interrupts).

    python benchmarks/contention_causes.py --models lstm,googlenet --out causes.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from hostload import interrupts, on_thread, timed


def build(model: str, gpu_only: bool = False):
    from hetlab import zoo
    from hetlab.devices.platform import devices
    from hetlab.graph import load
    from hetlab.graph.inputs import random_inputs

    plat = devices()
    cpus = [d for d in plat if d.kind == "onnxruntime-cpu"]
    cls = [d for d in plat if d.kind == "opencl"]
    gpu = next((d for d in cls if d.info().get("type") == "GPU"), cls[0])
    host = gpu.host_cores or [(os.cpu_count() or 1) - 1]
    graph = load(str(zoo.path(model)))
    feed = random_inputs(graph, 0)
    work = {}
    for d in [gpu] if gpu_only else [*cpus, gpu]:
        u = d.prepare(graph, [n.id for n in graph.nodes])
        work[d.name] = (d, u, {t: d.copy_in(feed[t]) for t in u.inputs})
    return cpus, gpu, host, work


def gpu_loop_process(model: str) -> None:
    """Child mode: run the model on the GPU until stdin closes."""
    _, gpu, host, work = build(model, gpu_only=True)
    os.sched_setaffinity(0, host)
    dev, unit, ins = work[gpu.name]
    dev.bind_thread()
    dev.run(unit, ins)
    print("ready", flush=True)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set():
        dev.run(unit, ins)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lstm,googlenet")
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--out", default=None)
    ap.add_argument("--gpu-loop", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.gpu_loop:
        return gpu_loop_process(a.gpu_loop)
    res: dict = {}
    for m in a.models.split(","):
        cpus, gpu, host, work = build(m)
        for cpu in cpus:
            row: dict = {}
            job = work[cpu.name]

            def load(kind: str, job=job, row=row, gpu=gpu, host=host, work=work) -> float:
                stop = threading.Event()
                interval = 1e-4 if kind.endswith("0.1ms") else 5e-3
                if kind.startswith("gpu-thread"):
                    g = work[gpu.name]

                    def body() -> None:
                        g[0].bind_thread()
                        while not stop.is_set():
                            g[0].run(g[1], g[2])
                else:

                    def body() -> None:
                        os.sched_setaffinity(0, host)
                        x = 0
                        while not stop.is_set():
                            x += 1

                th = threading.Thread(target=body, daemon=True)
                old = sys.getswitchinterval()
                sys.setswitchinterval(interval)
                i0 = interrupts()
                th.start()
                time.sleep(0.05)
                saved = os.sched_getaffinity(0)
                v = timed(job, a.n) if kind.endswith("main") else on_thread(timed, job, a.n)
                os.sched_setaffinity(0, saved)
                stop.set()
                th.join()
                i1 = interrupts()
                sys.setswitchinterval(old)
                if kind == "gpu-thread":
                    row["irq_gpu_thread"] = [y - x for x, y in zip(i0, i1, strict=False)]
                return v

            row["alone"] = on_thread(timed, job, a.n)
            for kind in (
                "gpu-thread",
                "gpu-thread-0.1ms",
                "gpu-thread-main",
                "py-thread",
                "py-thread-0.1ms",
            ):
                row[kind] = load(kind)
            child = subprocess.Popen(
                [sys.executable, __file__, "--gpu-loop", m],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            ok = child.stdout.readline().strip() == "ready"
            i0 = interrupts()
            row["gpu-process"] = on_thread(timed, job, a.n) if ok else None
            i1 = interrupts()
            row["irq_gpu_process"] = [y - x for x, y in zip(i0, i1, strict=False)]
            child.stdin.close()
            child.wait(timeout=30)
            row["alone_after"] = on_thread(timed, job, a.n)
            res[f"{m}|{cpu.name}"] = row
            base = row["alone"]
            print(
                f"{m} {cpu.name}: alone {base:.2f} ms | "
                + ", ".join(
                    f"{k} x{row[k] / base:.2f}"
                    for k in row
                    if not k.startswith(("irq", "alone")) and row[k]
                )
                + f" | alone after {row['alone_after']:.2f} ms",
                flush=True,
            )
            for k in ("irq_gpu_thread", "irq_gpu_process"):
                print(f"    {k} per core: {row[k]}", flush=True)
        res[f"{m}|{gpu.name}"] = {"alone": on_thread(timed, work[gpu.name], a.n)}
        print(f"{m} {gpu.name}: alone {res[f'{m}|{gpu.name}']['alone']:.2f} ms", flush=True)
        for d in [*cpus, gpu]:
            d.close()
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=1))
    return None


if __name__ == "__main__":
    main()
