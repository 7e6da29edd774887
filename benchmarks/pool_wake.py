"""What a unit pays when it runs after a pause, as units of a mixed plan do (issue 6).

In the H100 host's lstm plans a unit of one MatMul (1x1024 by 1024x1024, profiled 0.035 ms
on cpu0) took 0.26-0.30 ms inside the executor. Candidates: the unit's onnxruntime pool
threads sleep between its runs and must be woken (the executor runs sessions with
``force_spinning_stop``), its weights are cold, or both. For one MatMul unit and one
elementwise unit of ``--model`` on each CPU group, median ms of ``--repeat`` runs:

- ``back``: back to back (what the profiler measures);
- ``sleep``: after ``--pause`` ms of ``time.sleep`` (the group's cores idle);
- ``spin``: after the same pause spent busy on this thread (its core stays awake);
- ``evict``: right after another MatMul unit with other weights (cache, no idling);
- ``one-thread``: a one-thread session of the same unit after a sleep.

Plus ``whole`` against ``dup``: the whole model as one session, and with every reader of a
weight given its own copy (as the executor's per-unit sessions have).

    python benchmarks/pool_wake.py --model lstm --devices cpu0,cpu1 --out pool_wake.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def median_ms(fn, n: int, before=None) -> float:
    ts = []
    for _ in range(n):
        if before is not None:
            before()
        a = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - a)
    return float(np.median(ts) * 1e3)


def dup_weights(model_path: str) -> bytes:
    import onnx
    from onnx import numpy_helper

    from hetlab.graph.onnx_io import read_model

    m = onnx.ModelProto()
    m.CopyFrom(read_model(model_path))
    inits = {t.name: t for t in m.graph.initializer}
    k = 0
    for n in m.graph.node:
        for i, t in enumerate(n.input):
            if t in inits and numpy_helper.to_array(inits[t]).nbytes >= 65536:
                c = onnx.TensorProto()
                c.CopyFrom(inits[t])
                c.name = f"{t}__copy{k}"
                k += 1
                m.graph.initializer.append(c)
                n.input[i] = c.name
    return m.SerializeToString()


def measure(dev, g, picks: dict, vals, pause: float, repeat: int) -> dict:
    """One CPU group's figures (see the module doc); this thread is pinned to its cores."""
    import onnxruntime as ort

    from hetlab.executor.check import random_inputs
    from hetlab.graph.onnx_io import extract

    units = {k: dev.prepare(g, [n.id]) for k, n in picks.items()}
    feeds = {k: vals.get(u.inputs) for k, u in units.items()}

    def call(k: str, sess=None):
        u = units[k]
        s = sess or u.handle
        return lambda: s.run(u.outputs, feeds[k])

    def spin() -> None:
        end = time.perf_counter() + pause
        while time.perf_counter() < end:
            pass

    row: dict = {
        "device": dev.name,
        "pause_ms": pause * 1e3,
        "nodes": {k: n.id for k, n in picks.items()},
    }
    for k in ("matmul", "elementwise"):
        f = call(k)
        so1 = dev.session_options(threads=1)
        g1 = call(
            k,
            ort.InferenceSession(
                extract(g, [picks[k].id]), so1, providers=["CPUExecutionProvider"]
            ),
        )
        for _ in range(5):
            f()
            g1()
        row[k] = {
            "back": median_ms(f, repeat),
            "sleep": median_ms(f, repeat, lambda: time.sleep(pause)),
            "spin": median_ms(f, repeat, spin),
            "evict": median_ms(f, repeat, call("other_matmul")),
            "one-thread": median_ms(g1, repeat, lambda: time.sleep(pause)),
        }
    feed = random_inputs(g, 0)
    so = dev.session_options(whole=True)
    whole = ort.InferenceSession(str(g.model_path), so, providers=["CPUExecutionProvider"])
    dup = ort.InferenceSession(
        dup_weights(str(g.model_path)), so, providers=["CPUExecutionProvider"]
    )
    for s in (whole, dup):
        for _ in range(3):
            s.run(None, feed)
    row["whole"] = median_ms(lambda: whole.run(None, feed), 20)
    row["dup"] = median_ms(lambda: dup.run(None, feed), 20)
    row["whole_again"] = median_ms(lambda: whole.run(None, feed), 20)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="lstm")
    ap.add_argument("--devices", default="cpu0,cpu1")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--pause", type=float, default=1.0, help="ms between runs")
    ap.add_argument("--out", default="pool_wake.json")
    a = ap.parse_args()

    from hetlab.cost.values import Values
    from hetlab.devices.platform import devices
    from hetlab.graph import load

    g = load(a.model)
    mats = [n for n in g.nodes if n.op_type in ("MatMul", "Conv", "Gemm") and n.flops > 1e6]
    elem = [n for n in g.nodes if n.op_type in ("Add", "Mul", "Sigmoid", "Tanh", "Relu")]
    picks = {
        "matmul": mats[len(mats) // 2],
        "other_matmul": mats[len(mats) // 2 + 1],
        "elementwise": elem[len(elem) // 2],
    }
    vals = Values(g, {t for n in picks.values() for t in n.inputs if t and t not in g.consts})
    rows = []
    for dev in (d for d in devices() if d.name in a.devices.split(",")):
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, dev.cores)
        try:
            row = measure(dev, g, picks, vals, a.pause / 1e3, a.repeat)
            row["model"] = a.model
            dev.forget()
        finally:
            os.sched_setaffinity(0, saved)
        rows.append(row)
        print(
            f"{dev.name} {a.model}: "
            + "; ".join(
                f"{k} " + ", ".join(f"{v} {row[k][v]:.4f}" for v in row[k])
                for k in ("matmul", "elementwise")
            )
            + f"; whole {row['whole']:.3f}/{row['whole_again']:.3f} dup weights {row['dup']:.3f} ms",
            flush=True,
        )
        Path(a.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
