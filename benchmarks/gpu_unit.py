"""Why a GPU unit runs slower inside a plan than the profile says (issue 6).

On the H100 machine the GPU-only googlenet plan's unit ran 2.2-2.6 ms in the executor against
a profiled 1.97, and ppocr_rec's 266-node GPU unit of its ilp plan 3.7 ms against 2.86. Per
``--models`` model, the largest unit of the plan that puts on the GPU every node it can
(``prefer:GPU``) is timed, in interleaved rounds, as:

- ``loop``: ``device.run`` back to back on the main thread pinned to the GPU's host core
  (how the profiler times it, ``cost.measure``);
- ``io``: the same, with the unit's inputs written before and outputs read after each run,
  as the executor's worker does (only the run is timed);
- ``gap``: a 0.5 ms sleep before each run;
- ``thread``: ``loop`` on a pinned worker thread while the main thread waits on a queue;
- ``python``: ``loop`` while another thread runs pure Python;
- ``executor``: the whole plan by the executor, the unit's own run interval.

For each: the median wall time of the run (ms) and the median span from the first kernel's
start to the last one's end on the GPU's own clock (``gpu``): wall well above the span means
the host did not enqueue fast enough.

    python benchmarks/gpu_unit.py --models googlenet,ppocr_rec --out gpu_unit.json
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics as st
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

VARIANTS = ("loop", "io", "gap", "thread", "python", "executor")


def gpu_span(res) -> float:
    """First kernel start to last kernel end of a run (ms), from its node times."""
    nt = [t for t in res.node_times if t.finish > t.start]
    return (max(t.finish for t in nt) - min(t.start for t in nt)) * 1e3 if nt else float("nan")


def measure(m: str, a: argparse.Namespace, devs: dict) -> dict:
    """The variants' medians for model ``m`` (see the module doc)."""
    from mixed_plans import model_graph

    from hetlab.cost.values import Values
    from hetlab.executor.api import placement
    from hetlab.executor.interpreter import Executor

    gpu = devs[a.gpu]
    g, vals = model_graph(m)
    device_of, _, _, _ = placement(g, a.gpu, devs)
    used = {devs[d] for d in device_of.values()}
    ex = Executor(g, device_of, list(used))
    ex.prepare()
    spec = max((s for s in ex.specs if s.device == a.gpu), key=lambda s: len(s.nodes))
    unit = ex.units[spec.index]
    feed = Values(g, list(g.inputs) + list(unit.inputs), given=vals)
    arrays = feed.get(unit.inputs)
    bufs = {t: gpu.copy_in(arrays[t]) for t in unit.inputs}
    model_feed = feed.get(g.inputs)
    samples: dict[str, list[tuple[float, float]]] = {v: [] for v in VARIANTS}

    def once(pre=None, post=None) -> tuple[float, float]:
        if pre:
            pre()
        r = gpu.run(unit, bufs)
        out = ((r.finish - r.start) * 1e3, gpu_span(r))
        if post:
            for t in unit.outputs:
                gpu.copy_out(r.outputs[t])
        return out

    def write_inputs() -> None:
        for t in unit.inputs:
            gpu.write(bufs[t], arrays[t])

    def loop(n: int, **kw) -> list[tuple[float, float]]:
        gpu.bind_thread()
        return [once(**kw) for _ in range(n)]

    def on_thread(n: int) -> list[tuple[float, float]]:
        q: queue.Queue = queue.Queue()
        th = threading.Thread(target=lambda: q.put(loop(n)))
        th.start()
        got = q.get()
        th.join()
        return got

    def with_python(n: int) -> list[tuple[float, float]]:
        stop = threading.Event()

        def spin() -> None:
            x = 0
            while not stop.is_set():
                x += 1

        th = threading.Thread(target=spin)
        th.start()
        try:
            return loop(n)
        finally:
            stop.set()
            th.join()

    def executor(n: int) -> list[tuple[float, float]]:
        out = []
        for _ in range(n):
            rep = ex.run_once(model_feed)
            ev = next(
                e for e in rep.events if e.kind == "unit" and e.args.get("unit") == spec.index
            )
            out.append((ev.finish - ev.start, float("nan")))
        return out

    run_variant = {
        "loop": lambda n: loop(n),
        "io": lambda n: loop(n, pre=write_inputs, post=True),
        "gap": lambda n: loop(n, pre=lambda: time.sleep(0.0005)),
        "thread": on_thread,
        "python": with_python,
        "executor": executor,
    }
    for v in VARIANTS:  # warm-up
        run_variant[v](5)
    for r in range(a.rounds):
        order = VARIANTS if r % 2 == 0 else tuple(reversed(VARIANTS))
        for v in order:
            samples[v] += run_variant[v](a.runs)
    ex.close()
    row = {
        v: {
            "wall_ms": round(st.median(x for x, _ in s), 4),
            "gpu_span_ms": round(st.median(y for _, y in s), 4) if v != "executor" else None,
        }
        for v, s in samples.items()
    }
    row["unit_nodes"] = len(spec.nodes)
    row["launches"] = len(getattr(unit.handle, "launches", []) or [])
    print(
        m,
        f"unit of {len(spec.nodes)} nodes, {row['launches']} launches:",
        ", ".join(
            f"{v} {row[v]['wall_ms']:.3f}"
            + (f" (gpu {row[v]['gpu_span_ms']:.3f})" if row[v]["gpu_span_ms"] else "")
            for v in VARIANTS
        ),
        flush=True,
    )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="googlenet,ppocr_rec")
    ap.add_argument("--gpu", default="cl0")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per variant per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from hetlab.devices.platform import devices

    devs = {d.name: d for d in devices()}
    results = {m: measure(m, a, devs) for m in a.models.split(",")}
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
