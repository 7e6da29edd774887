"""GFLOP/s of hetlab's OpenCL Conv/GEMM kernels at Inception-v3 sizes, launch overhead and
host<->device bandwidth, on one OpenCL device (optionally torch/cuDNN at the same sizes).

    python -m benchmarks.kernels [--device-index 0] [--quick] [--torch] [--repeat 20]

Each case is a one-node model (written as ONNX and loaded by ``hetlab.load``), prepared as
one unit by the OpenCL device (``hetlab.devices.opencl_devices``) exactly as a model run
would be;
kernel time is the median over runs of the summed OpenCL profiling intervals of its launches
(seconds on the device clock), wall time the median of ``run()`` (enqueue + wait). Prints a
table and writes JSON (with the device fingerprint) to ``--out``, else $OUT/kernels.json when OUT
is set, else kernels.json in the current folder.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import hetlab
from hetlab.devices import opencl_devices
from hetlab.fileio import atomic_write_json
from hetlab.graph import OpGraph

# name, (N, Cin, H, W), (Cout, KH, KW), stride, pads (t, l, b, r)
CONVS = [
    ("conv 3x3/2 3->32 @299 (stem)", (1, 3, 299, 299), (32, 3, 3), 2, (0, 0, 0, 0)),
    ("conv 3x3 80->192 @73", (1, 80, 73, 73), (192, 3, 3), 1, (0, 0, 0, 0)),
    ("conv 1x1 288->64 @35", (1, 288, 35, 35), (64, 1, 1), 1, (0, 0, 0, 0)),
    ("conv 3x3 64->96 @35", (1, 64, 35, 35), (96, 3, 3), 1, (1, 1, 1, 1)),
    ("conv 3x3/2 288->384 @35", (1, 288, 35, 35), (384, 3, 3), 2, (0, 0, 0, 0)),
    ("conv 1x7 128->128 @17", (1, 128, 17, 17), (128, 1, 7), 1, (0, 3, 0, 3)),
    ("conv 7x1 160->192 @17", (1, 160, 17, 17), (192, 7, 1), 1, (3, 0, 3, 0)),
    ("conv 1x1 2048->384 @8", (1, 2048, 8, 8), (384, 1, 1), 1, (0, 0, 0, 0)),
    ("conv 3x3 448->384 @8", (1, 448, 8, 8), (384, 3, 3), 1, (1, 1, 1, 1)),
]
GEMMS = [
    ("gemm 1024^3", 1024, 1024, 1024),
    ("gemm 2048^3", 2048, 2048, 2048),
    ("gemm 4096x4096x1024", 4096, 4096, 1024),
    ("fc 1x2048 @ 2048x1000", 1, 1000, 2048),
    ("matmul 128x768 @ 768x3072", 128, 3072, 768),
]


def _unit_graph(
    op: str,
    inputs: dict[str, np.ndarray],
    consts: dict[str, np.ndarray],
    attrs: dict[str, Any],
    folder: Path,
) -> OpGraph:
    """One ``op`` node with ``inputs`` as the model's inputs and ``consts`` as its weights,
    saved as ONNX in ``folder`` and loaded as a user's model is (output ``y``)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node(op, [*inputs, *consts], ["y"], **attrs)
    g = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in consts.items()],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = min(m.ir_version, 9)
    path = folder / f"{op}-{len(list(folder.iterdir()))}.onnx"
    onnx.save(m, str(path))
    return hetlab.load(str(path))


def _time_unit(dev: Any, g: OpGraph, feed: dict[str, np.ndarray], repeat: int) -> dict[str, float]:
    unit = dev.prepare(g, [n.id for n in g.nodes])
    bufs = {k: dev.copy_in(v) for k, v in feed.items()}
    for _ in range(3):
        dev.run(unit, bufs)
    kern, wall = [], []
    for _ in range(repeat):
        r = dev.run(unit, bufs)
        wall.append(r.finish - r.start)
        kern.append(sum(t.finish - t.start for t in r.node_times))
    return {
        "kernel_s": statistics.median(kern),
        "wall_s": statistics.median(wall),
        "launches": len(unit.handle.launches),
    }


def bench_conv(dev: Any, case: tuple, repeat: int, folder: Path) -> dict[str, Any]:
    name, (n, c, h, w), (co, kh, kw), s, p = case
    oh = (h + p[0] + p[2] - kh) // s + 1
    ow = (w + p[1] + p[3] - kw) // s + 1
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((co, c, kh, kw), dtype=np.float32) * 0.05
    b = rng.standard_normal(co, dtype=np.float32)
    g = _unit_graph(
        "Conv",
        {"x": x},
        {"w": wt, "b": b},
        {"strides": [s, s], "pads": [p[0], p[1], p[2], p[3]], "kernel_shape": [kh, kw]},
        folder,
    )
    flops = 2.0 * n * co * oh * ow * c * kh * kw
    r = _time_unit(dev, g, {"x": x}, repeat)
    return {
        "name": name,
        "kind": "conv",
        "flops": flops,
        **r,
        "gflops": flops / r["kernel_s"] / 1e9,
        "torch_args": [list(x.shape), list(wt.shape), s, [p[0], p[1]]],
    }


def bench_gemm(dev: Any, case: tuple, repeat: int, folder: Path) -> dict[str, Any]:
    name, m, n, k = case
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    g = _unit_graph("MatMul", {"a": a, "b": b}, {}, {}, folder)
    flops = 2.0 * m * n * k
    r = _time_unit(dev, g, {"a": a, "b": b}, repeat)
    return {
        "name": name,
        "kind": "gemm",
        "flops": flops,
        **r,
        "gflops": flops / r["kernel_s"] / 1e9,
        "torch_args": [m, n, k],
    }


def launch_overhead(dev: Any, n: int) -> dict[str, float]:
    cl = dev.cl
    prg = cl.Program(dev.ctx, "__kernel void empty(__global float* x) { }").build()
    k = cl.Kernel(prg, "empty")
    buf = dev.raw_buffer(4)
    k.set_arg(0, buf)
    q = dev.queue_for(True)  # profiling: each launch has its stamps
    ts, dev_ts = [], []
    for i in range(n + 20):
        t0 = time.perf_counter()
        ev = cl.enqueue_nd_range_kernel(q, k, (1,), None)
        q.finish()
        t1 = time.perf_counter()
        if i >= 20:
            ts.append(t1 - t0)
            dev_ts.append((ev.profile.end - ev.profile.queued) * 1e-9)
    t0 = time.perf_counter()
    for _ in range(n):
        cl.enqueue_nd_range_kernel(q, k, (1,), None)
    q.finish()
    batched = (time.perf_counter() - t0) / n
    return {
        "enqueue_finish_median_us": statistics.median(ts) * 1e6,
        "queued_to_end_median_us": statistics.median(dev_ts) * 1e6,
        "enqueue_only_batched_us": batched * 1e6,
        "samples": n,
    }


def bandwidth(dev: Any, nbytes: int, repeat: int) -> dict[str, float]:
    a = np.random.default_rng(2).standard_normal(nbytes // 4, dtype=np.float32)
    buf = dev.alloc(a.shape)
    h2d, d2h = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        dev.write(buf, a)
        t1 = time.perf_counter()
        dev.copy_out(buf)
        t2 = time.perf_counter()
        h2d.append(t1 - t0)
        d2h.append(t2 - t1)
    return {
        "bytes": nbytes,
        "zero_copy": dev.unified,
        "h2d_GBps": nbytes / statistics.median(h2d) / 1e9,
        "d2h_GBps": nbytes / statistics.median(d2h) / 1e9,
    }


def torch_reference(results: list[dict[str, Any]], repeat: int) -> dict[str, Any] | None:
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        return {"skipped": f"torch not importable: {e}"}
    if not torch.cuda.is_available():
        return {"skipped": "torch has no CUDA device"}
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cases": {}}
    for r in results:
        if r["kind"] == "conv":
            xs, ws, s, p = r["torch_args"]
            x, w = torch.randn(*xs, device="cuda"), torch.randn(*ws, device="cuda")
            fn = functools.partial(F.conv2d, x, w, stride=s, padding=p)
        else:
            m, n, k = r["torch_args"]
            a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
            fn = functools.partial(torch.matmul, a, b)
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1e-3)
        t = statistics.median(times)
        out["cases"][r["name"]] = {"kernel_s": t, "gflops": r["flops"] / t / 1e9}
    return out


def bench_model(dev: Any, model: str, repeat: int, threads: int) -> dict[str, Any]:
    """Whole model as one OpenCL unit vs an onnxruntime CPU session (needs onnx, onnxruntime)."""
    import collections

    import onnxruntime as ort

    g = hetlab.load(model)
    rng = np.random.default_rng(0)
    feed = {k: rng.standard_normal(g.tensors[k].shape).astype(g.tensors[k].dtype) for k in g.inputs}
    ids = [n.id for n in g.nodes if dev.supports(n, g)]
    if len(ids) != len(g.nodes):
        return {
            "model": model,
            "skipped": f"{len(g.nodes) - len(ids)} nodes unsupported on {dev.name}",
        }
    t0 = time.perf_counter()
    unit = dev.prepare(g, ids)
    prep = time.perf_counter() - t0
    bufs = {k: dev.copy_in(feed[k]) for k in unit.inputs}
    for _ in range(3):
        dev.run(unit, bufs)
    walls, by_op = [], collections.Counter()
    for i in range(repeat):
        r = dev.run(unit, bufs, node_times=i == 0)
        walls.append(r.finish - r.start)
        for t in r.node_times:
            by_op[g.node(t.name).op_type] += t.finish - t.start
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(g.model_path, so, providers=["CPUExecutionProvider"])
    refs = sess.run(g.outputs, feed)
    err = max(
        float(np.linalg.norm(dev.copy_out(r.outputs[o]) - ref) / max(np.linalg.norm(ref), 1e-30))
        for o, ref in zip(g.outputs, refs, strict=False)
    )
    cpu = []
    for _ in range(max(repeat, 5)):
        t0 = time.perf_counter()
        sess.run(g.outputs, feed)
        cpu.append(time.perf_counter() - t0)
    gpu_ms, cpu_ms = statistics.median(walls) * 1e3, statistics.median(cpu) * 1e3
    return {
        "model": g.name,
        "nodes": len(g.nodes),
        "launches": len(unit.handle.launches),
        "prepare_s": prep,
        "opencl_ms": gpu_ms,
        "ort_cpu_ms": cpu_ms,
        "ort_threads": threads,
        "speedup": cpu_ms / gpu_ms,
        "max_rel_err": err,
        "device_ms_by_op": {k: v * 1e3 for k, v in by_op.most_common()},
    }


def register_nvidia_icd() -> str | None:
    """Point the OpenCL ICD loader at NVIDIA's libnvidia-opencl (for containers where no
    /etc/OpenCL/vendors/nvidia.icd exists). Must run before pyopencl is imported."""
    import glob
    import subprocess

    cands: list[str] = []
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
        cands += [
            ln.split("=>")[-1].strip() for ln in out.splitlines() if "libnvidia-opencl.so" in ln
        ]
    except OSError:
        pass
    for d in (
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/local/nvidia/lib64",
        "/usr/local/nvidia/lib",
        "/usr/lib",
    ):
        cands += sorted(glob.glob(f"{d}/libnvidia-opencl.so*"))
    if not cands:
        return None
    vendors = tempfile.mkdtemp(prefix="icd-")
    Path(vendors, "nvidia.icd").write_text(cands[0] + "\n")
    os.environ["OCL_ICD_VENDORS"] = vendors
    return cands[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--device-index",
        type=int,
        default=0,
        help="index into hetlab's OpenCL devices (cl0, cl1...)",
    )
    ap.add_argument("--quick", action="store_true", help="fewer cases and repeats (CPU OpenCL)")
    ap.add_argument(
        "--torch", action="store_true", help="also time torch conv2d/matmul (cuDNN, fp32, no TF32)"
    )
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument(
        "--out", default=None, help="JSON path (default $OUT/kernels.json or ./kernels.json)"
    )
    ap.add_argument(
        "--model",
        action="append",
        default=[],
        help="also time a whole model (zoo name or .onnx) vs onnxruntime CPU; repeatable",
    )
    ap.add_argument("--ort-threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--nvidia-icd",
        action="store_true",
        help="register NVIDIA's OpenCL library with the ICD loader first (containers)",
    )
    args = ap.parse_args(argv)
    if args.nvidia_icd:
        print(f"nvidia icd: {register_nvidia_icd()}")
    devs = opencl_devices()
    if not devs:
        print("no OpenCL device found", file=sys.stderr)
        return 2
    if not 0 <= args.device_index < len(devs):
        print(
            f"--device-index {args.device_index}: only {len(devs)} OpenCL device(s)",
            file=sys.stderr,
        )
        return 2
    dev = devs[args.device_index]
    repeat = args.repeat or (3 if args.quick else 20)
    convs = [CONVS[i] for i in (2, 3, 7)] if args.quick else CONVS
    gemms = [GEMMS[0], GEMMS[3]] if args.quick else GEMMS
    info = dev.info()
    print(
        f"# {info['name']}: {info['platform']} / {info['device']} / driver {info['driver_version']}, "
        f"{info['compute_units']} CUs"
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="hetlab-kernels-") as tmp:
        for case in convs:
            results.append(bench_conv(dev, case, repeat, Path(tmp)))
            _row(results[-1])
        for case in gemms:
            results.append(bench_gemm(dev, case, repeat, Path(tmp)))
            _row(results[-1])
    lo = launch_overhead(dev, 200 if args.quick else 1000)
    print(
        f"launch overhead: enqueue+finish median {lo['enqueue_finish_median_us']:.1f} us, "
        f"batched enqueue {lo['enqueue_only_batched_us']:.1f} us/launch"
    )
    bw = bandwidth(dev, (16 if args.quick else 256) << 20, 3 if args.quick else 10)
    print(
        f"bandwidth ({bw['bytes'] >> 20} MiB, zero-copy={bw['zero_copy']}): H2D {bw['h2d_GBps']:.2f} GB/s, "
        f"D2H {bw['d2h_GBps']:.2f} GB/s"
    )
    doc = {
        "device": info,
        "fingerprint": dev.fingerprint(),
        "quick": args.quick,
        "repeat": repeat,
        "cases": results,
        "launch_overhead": lo,
        "bandwidth": bw,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    doc["models"] = []
    for m in args.model:
        r = bench_model(dev, m, max(repeat, 10), args.ort_threads)
        doc["models"].append(r)
        if "skipped" in r:
            print(f"model {m}: skipped ({r['skipped']})")
        else:
            top = ", ".join(f"{k} {v:.2f}" for k, v in list(r["device_ms_by_op"].items())[:4])
            print(
                f"model {r['model']}: OpenCL {r['opencl_ms']:.2f} ms ({r['launches']} launches) vs onnxruntime "
                f"{r['ort_threads']} threads {r['ort_cpu_ms']:.2f} ms -> {r['speedup']:.2f}x, "
                f"max_rel_err {r['max_rel_err']:.1e}; device ms by op: {top}"
            )
    if args.torch:
        doc["torch"] = torch_reference(results, repeat)
        if "skipped" in doc["torch"]:
            print(f"torch reference skipped: {doc['torch']['skipped']}")
        for name, r in (doc["torch"] or {}).get("cases", {}).items():
            print(f"torch {name:34s} {r['kernel_s'] * 1e6:10.1f} us {r['gflops']:9.1f} GFLOP/s")
    path = (
        Path(args.out)
        if args.out
        else (
            Path(os.environ["OUT"]) / "kernels.json"
            if os.environ.get("OUT")
            else Path("kernels.json")
        )
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, json.loads(json.dumps(doc, default=float)))
    print(f"wrote {path}")
    return 0


def _row(r: dict[str, Any]) -> None:
    print(
        f"{r['name']:34s} {r['kernel_s'] * 1e6:10.1f} us {r['gflops']:9.1f} GFLOP/s "
        f"(wall {r['wall_s'] * 1e6:.0f} us, {r['launches']} launch(es))"
    )


if __name__ == "__main__":
    sys.exit(main())
