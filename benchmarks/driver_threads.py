"""The threads of this process after the OpenCL devices and onnxruntime sessions exist (name,
affinity), and a CPU group's whole-model time on ``--model`` while the GPU runs it over and
over: as is, then with every thread that onnxruntime and Python did not start (the OpenCL
driver's) pinned to the GPU's host core. Issue 6 diagnostic.

    python benchmarks/driver_threads.py --model lstm
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def threads() -> dict[int, str]:
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            out[int(t)] = Path(f"/proc/self/task/{t}/comm").read_text().strip()
        except OSError:
            pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="lstm")
    a = ap.parse_args()
    from hetlab import zoo
    from hetlab.devices.platform import devices
    from hetlab.graph import load
    from hetlab.graph.inputs import random_inputs

    before = threads()
    plat = devices()
    after_ctx = threads()
    cpu = next(d for d in plat if d.kind == "onnxruntime-cpu")
    cls = [d for d in plat if d.kind == "opencl"]
    gpu = next((d for d in cls if d.info().get("type") == "GPU"), cls[0])
    graph = load(str(zoo.path(a.model)))
    feed = random_inputs(graph, 0)
    units = {d.name: d.prepare(graph, [n.id for n in graph.nodes]) for d in (cpu, gpu)}
    ins = {d.name: {t: d.copy_in(feed[t]) for t in units[d.name].inputs} for d in (cpu, gpu)}
    gpu.run(units[gpu.name], ins[gpu.name])
    now = threads()
    print(f"threads: {len(before)} at start, {len(after_ctx)} after the devices, {len(now)} after a session and a GPU run")
    for tid, name in sorted(now.items()):
        tag = "start" if tid in before else ("devices" if tid in after_ctx else "later")
        print(f"  {tid} {name!r:22} {tag:8} affinity {sorted(os.sched_getaffinity(tid))}")

    def loop(dev, stop):
        dev.bind_thread()
        while not stop.is_set():
            dev.run(units[dev.name], ins[dev.name])

    def timed(n=9, dev=cpu):
        dev.bind_thread()
        return statistics.median((lambda r: (r.finish - r.start) * 1e3)(dev.run(units[dev.name], ins[dev.name])) for _ in range(n))

    def with_gpu_busy():
        stop = threading.Event()
        th = threading.Thread(target=loop, args=(gpu, stop), daemon=True)
        th.start()
        v = timed()
        stop.set()
        th.join()
        return v

    alone = timed()
    busy = with_gpu_busy()
    gpu_alone = timed(dev=gpu)
    print(f"{cpu.name} alone {alone:.2f} ms, GPU busy {busy:.2f} ms (x{busy / alone:.2f}); {gpu.name} alone {gpu_alone:.2f} ms")
    ours = {threading.get_native_id()}
    moved = []
    for tid, name in threads().items():
        main_name = before[min(before)]
        if tid not in before and tid not in ours and (tid in after_ctx or name != main_name):
            try:
                os.sched_setaffinity(tid, set(gpu.host_cores or [os.cpu_count() - 1]))
                moved.append(f"{tid}:{name}")
            except OSError as e:
                print("cannot pin", tid, name, e)
    print("pinned to the GPU host core:", moved)
    busy2 = with_gpu_busy()
    gpu2 = timed(dev=gpu)
    print(f"driver threads pinned: {cpu.name} with the GPU busy {busy2:.2f} ms (x{busy2 / alone:.2f}); "
          f"{gpu.name} alone {gpu2:.2f} ms (x{gpu2 / gpu_alone:.2f}: does the GPU's own thread suffer?)")


if __name__ == "__main__":
    main()
