"""Timing helpers of the GPU-queues table (``gpu_queues.py``): medians after a warm-up, the
onnxruntime reference on every core, measurements in alternating rounds, and torch eager and
CUDA-graph times of the model converted by onnx2torch."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def warm_up(fn, seconds: float = 0.5) -> None:
    """Unmeasured runs of ``fn`` for ``seconds``."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()


def median_ms(fn, repeat: int, warmup_s: float = 0.5) -> float:
    warm_up(fn, warmup_s)
    times = []
    for _ in range(repeat):
        a = time.perf_counter()
        fn()
        times.append((time.perf_counter() - a) * 1e3)
    return float(np.median(times))


def ort_session(onnx_path: str) -> Any:
    """One plain onnxruntime session with a thread per core: the reference users compare with."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = len(os.sched_getaffinity(0))
    return ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])


def ort_all_cores(onnx_path: str, feed: dict[str, np.ndarray], repeat: int) -> float:
    sess = ort_session(onnx_path)
    return median_ms(lambda: sess.run(None, feed), repeat)


def paired_ms(
    fns: dict[str, Callable[[int], list[float]]], rounds: int = 8, per_round: int = 15
) -> dict[str, float]:
    """Medians (ms) of each of ``fns`` measured in alternating rounds: ``fn(n)`` makes a few
    unmeasured runs, then returns the times of ``n`` measured ones. An unmeasured round
    comes first. The host drifts between measurement windows by as much as two CPU plans
    differ, and rounds give each the same drift."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        fn(per_round)
    for _ in range(rounds):
        for k, fn in fns.items():
            samples[k] += fn(per_round)
    return {k: round(float(np.median(v)), 4) for k, v in samples.items()}


def timed_runs(fn: Callable[[], Any], n: int, unmeasured: int = 3) -> list[float]:
    """``unmeasured`` runs of ``fn``, then the times (ms) of ``n`` more."""
    for _ in range(unmeasured):
        fn()
    times = []
    for _ in range(n):
        a = time.perf_counter()
        fn()
        times.append((time.perf_counter() - a) * 1e3)
    return times


def torch_times(onnx_path: str, feed: dict[str, np.ndarray], repeat: int) -> dict[str, Any]:
    """torch eager and CUDA-graph medians (ms), or why they are missing."""
    try:
        import torch
        from onnx2torch import convert
    except ImportError as e:
        return {"torch_note": f"not importable: {e}"}
    if not torch.cuda.is_available():
        return {"torch_note": "torch sees no GPU"}
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        model = convert(onnx_path).cuda().eval()
    except Exception as e:  # noqa: BLE001 - an op onnx2torch lacks: the row says so
        return {"torch_note": f"onnx2torch: {type(e).__name__}: {str(e)[:80]}"}
    xs = [torch.from_numpy(np.ascontiguousarray(v)).cuda() for v in feed.values()]

    def eager():
        with torch.no_grad():
            model(*xs)
        torch.cuda.synchronize()

    out: dict[str, Any] = {"torch_eager_ms": median_ms(eager, repeat)}
    try:
        replay, _ = graph_replay(model, xs)
    except RuntimeError as e:  # a converted op that reads back to the host cannot be captured
        return {**out, "torch_note": f"no CUDA graph: {str(e).splitlines()[0][:80]}"}
    out["torch_graph_ms"] = median_ms(replay, repeat)
    return out


def graph_replay(fn: Callable[..., Any], xs: list[Any]) -> tuple[Callable[[], None], Any]:
    """``fn(*xs)`` captured into a CUDA graph after three runs on a side stream: (a replay
    that waits for the GPU, the captured output)."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            fn(*xs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        out = fn(*xs)

    def replay() -> None:
        graph.replay()
        torch.cuda.synchronize()

    return replay, out
