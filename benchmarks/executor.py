"""Executor overhead: a plan with everything on one CPU group against a plain onnxruntime
session with the same threads on the same ``model_path`` (the ratio executor / plain; the
executor's goal is at most 1.15).

    python -m benchmarks.executor [--model NAME|PATH] [--shape NAME=DIMS] [--device cpu0]
                                  [--repeat 30] [--rounds 5] [--chunks 8] [--json]

The model defaults to a zoo model when ``hetlab.zoo`` exists, else a generated
inception-like model. Plain and executor runs alternate in blocks of ``--repeat`` (``--rounds`` times) so that load
drifts hit both: alternating run by run would measure how much each session's spinning pool
threads slow the other down, not the executor.
``--chunks K`` also runs the same device split into K units (forced by placing each chunk
on a distinct alias of the same group) to estimate the per-unit dispatch overhead.
Times are per-inference medians in ms.

The executor's runs are ``hetlab.run``'s, a block per call (its executor built and warmed up
before the block's timed runs, closed after them), timed by the run itself. The one-unit plan
loads ``model_path`` itself, so the difference is the executor's dispatch (the main thread
pinned to the group, queues, events). Figures: docs/log.md#executor-overhead.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hetlab
from hetlab.devices import OrtCpuDevice, devices
from hetlab.graph import parse_shape_args, random_inputs

ZOO_PREFERENCE = ("googlenet", "inception_v3", "squeezenet", "resnet18", "mobilenet_v2")


def pick_model() -> str:
    try:
        from hetlab import zoo
    except ImportError:
        return generated_model()
    names = list(zoo.names())
    for n in ZOO_PREFERENCE:
        if n in names:
            return n
    return names[0] if names else generated_model()


def generated_model(blocks: int = 4, channels: int = 32, size: int = 28) -> str:
    """An inception-like model (4 conv branches per block) saved to a temp file."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits, nodes, C = [], [], channels

    def w(name, *shape):
        inits.append(
            numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)
        )
        return name

    x = "x"
    for b in range(blocks):
        outs = []
        for r, k in enumerate((1, 3, 5, 3)):
            t = f"b{b}r{r}"
            nodes.append(
                helper.make_node(
                    "Conv",
                    [x, w(f"{t}w", C // 4, C, k, k), w(f"{t}b", C // 4)],
                    [f"{t}c"],
                    pads=[k // 2] * 4,
                )
            )
            nodes.append(helper.make_node("Relu", [f"{t}c"], [f"{t}o"]))
            outs.append(f"{t}o")
        nodes.append(helper.make_node("Concat", outs, [f"cat{b}"], axis=1))
        x = f"cat{b}"
    nodes += [
        helper.make_node("GlobalAveragePool", [x], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", w("fw", 10, C), w("fb", 10)], ["y"], transB=1),
    ]
    g = helper.make_graph(
        nodes,
        "gen_inception",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = min(m.ir_version, 9)
    path = Path(tempfile.gettempdir()) / "hetlab_bench_gen_inception.onnx"
    onnx.save(m, str(path))
    return str(path)


def plain_session(path: str, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def executor_block(graph, plan, devs, feed, repeat: int):
    """``repeat`` timed runs of ``plan`` through ``hetlab.run`` (after two unmeasured ones):
    its report, whose ``samples_ms`` are the runs' wall clocks."""
    return hetlab.run(graph, plan, devs, repeat=repeat, warmup=2, inputs=feed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--device", default=None, help="CPU group (default: the first)")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--chunks", type=int, default=0)
    ap.add_argument(
        "--spin", default="auto", choices=["auto", "on", "stop", "off"], help="ORT pool spinning"
    )
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    model = a.model or pick_model()
    g = hetlab.load(model, parse_shape_args(a.shape))
    devs = [d for d in devices() if d.kind == "onnxruntime-cpu"]
    dev = next(d for d in devs if d.name == a.device) if a.device else devs[0]
    dev = OrtCpuDevice(dev.name, dev.cores, dev.threads, spin=a.spin)
    feed = random_inputs(g, 0)
    sess = plain_session(g.model_path, dev.threads)
    names = [i.name for i in sess.get_inputs()]
    plain_feed = {k: feed[k] for k in names}
    samples: dict[str, list[float]] = {"plain": [], "executor": []}
    sess.run(None, plain_feed)
    sess.run(None, plain_feed)
    for _ in range(a.rounds):  # alternate in blocks, so that load drifts hit both
        samples["plain"] += timed(lambda: sess.run(None, plain_feed), a.repeat)
        samples["executor"] += executor_block(g, dev.name, [dev], feed, a.repeat).samples_ms
    units = 0
    if a.chunks > 1:  # K units on K aliases of the same cores: a chain of K dispatches
        order = g.topo_order()
        k = a.chunks
        aliases = [
            OrtCpuDevice(f"{dev.name}_{i}", dev.cores, dev.threads, spin=a.spin) for i in range(k)
        ]
        place = {v: aliases[i * k // len(order)].name for i, v in enumerate(order)}
        rep = executor_block(g, place, aliases, feed, a.repeat * a.rounds)
        samples[f"executor_{k}units"], units = rep.samples_ms, rep.units
    med = {k: round(statistics.median(v), 4) for k, v in samples.items()}
    doc = {
        "model": g.name,
        "model_path": g.model_path,
        "nodes": len(g.nodes),
        "device": dev.info(),
        "python": sys.version.split()[0],
        "runs_each": a.rounds * a.repeat,
        "median_ms": med,
        "ratio_executor_over_plain": round(med["executor"] / med["plain"], 4),
    }
    if a.chunks > 1:
        k = a.chunks
        doc["units"] = units
        doc["overhead_per_unit_ms"] = round(
            (med[f"executor_{k}units"] - med["executor"]) / max(1, units - 1), 4
        )
    print(json.dumps(doc, indent=None if a.json else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
