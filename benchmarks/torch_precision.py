"""PyTorch's own ways of running an ONNX file at each precision, as the precision table's
reference columns (``precision.py``): the file converted by onnx2torch, each column a CUDA
graph replay, with its error against onnxruntime's fp32 outputs on the same inputs.

- ``fp32``: cuDNN and cuBLAS with TF32 off;
- ``tf32``: PyTorch's default for convolutions, and matmuls allowed TF32 too;
- ``tf32_streams``: TF32 with the graph's branches on ``STREAMS`` streams (each fork's
  consumers on streams of their own, joined by events), captured as one graph;
- ``fp16_cl``: the model and input in float16, channels_last;
- ``bf16_cl``: the same in bfloat16.

Each column has two times: ``measured_ms``, the replay alone (inputs already on the GPU,
outputs left there), and ``measured_io_ms``, the work a ``hetlab run`` does each run: the
inputs copied from host arrays into the graph's input tensors, the replay, the outputs
copied back to the host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.gpu_timing import graph_replay, median_ms
from hetlab.executor import max_rel_err

STREAMS = 4
COLUMNS = ("fp32", "tf32", "tf32_streams", "fp16_cl", "bf16_cl")


def branch_streams(gm: Any, n: int) -> dict[Any, int]:
    """A stream per fx node: a node's first consumer stays on its stream, each further
    consumer starts a stream of its own (round robin over ``n``); a node with several
    inputs (a join) takes its first input's."""
    stream_of: dict[Any, int] = {}
    given: dict[Any, int] = {}
    nxt = 1
    for node in gm.graph.nodes:
        ins = [a for a in node.all_input_nodes if a.op not in ("placeholder", "get_attr")]
        stream_of[node] = given.get(node, stream_of[ins[0]] if ins else 0)
        for k, user in enumerate(u for u in node.users if u not in given):
            if k == 0:
                given[user] = stream_of[node]
            else:
                given[user], nxt = nxt % n, nxt + 1
    return stream_of


def stream_interpreter(gm: Any, n: int) -> Callable[..., Any]:
    """``gm`` run node by node on ``n`` streams of the current device, each node after the
    events of its inputs made on other streams: a callable to capture into a graph."""
    import torch
    from torch.fx import Interpreter

    stream_of = branch_streams(gm, n)

    class OnStreams(Interpreter):
        def run(self, *args: Any) -> Any:
            main = torch.cuda.current_stream()
            self.streams = [main] + [torch.cuda.Stream() for _ in range(n - 1)]
            self.events: dict[Any, Any] = {}
            start = main.record_event()
            for s in self.streams[1:]:
                s.wait_event(start)
            out = super().run(*args)
            for s in self.streams[1:]:
                main.wait_event(s.record_event())
            return out

        def run_node(self, node: Any) -> Any:
            mine = stream_of.get(node, 0)
            s = self.streams[mine]
            for a in node.all_input_nodes:
                if stream_of.get(a, 0) != mine and a in self.events:
                    s.wait_event(self.events[a])
            with torch.cuda.stream(s):
                out = super().run_node(node)
                if any(stream_of.get(u, 0) != mine for u in node.users):
                    self.events[node] = s.record_event()
            return out

    interp = OnStreams(gm, garbage_collect_values=False)
    return lambda *xs: interp.run(*xs)


def _setup(column: str, model: Any, feed: dict[str, np.ndarray]) -> tuple[Callable, list]:
    import torch

    tf32 = column.startswith("tf32")
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    xs = [torch.from_numpy(np.ascontiguousarray(v)).cuda() for v in feed.values()]
    if column in ("fp16_cl", "bf16_cl"):
        dt = torch.float16 if column == "fp16_cl" else torch.bfloat16
        model = model.to(dtype=dt, memory_format=torch.channels_last)
        xs = [
            x.to(dtype=dt, memory_format=torch.channels_last)
            if x.is_floating_point() and x.dim() == 4
            else x.to(dt)
            if x.is_floating_point()
            else x
            for x in xs
        ]
    if column == "tf32_streams":
        return stream_interpreter(model, STREAMS), xs
    return model, xs


def with_host_io(
    replay: Callable[[], None], xs: list[Any], feed: dict[str, np.ndarray], out: Any
) -> Callable[[], list[np.ndarray]]:
    """``replay`` with the host's side of a run: ``feed`` copied into the captured inputs
    ``xs`` first, the captured outputs ``out`` copied to host arrays after."""
    import torch

    hosts = [torch.from_numpy(np.ascontiguousarray(v)) for v in feed.values()]
    outs = out if isinstance(out, (tuple, list)) else [out]

    def run() -> list[np.ndarray]:
        for x, h in zip(xs, hosts, strict=True):
            x.copy_(h)
        replay()
        return [o.cpu().float().numpy() for o in outs]

    return run


def _outputs(out: Any, names: list[str]) -> dict[str, np.ndarray]:
    outs = out if isinstance(out, (tuple, list)) else [out]
    return {k: o.float().cpu().numpy() for k, o in zip(names, outs, strict=False)}


def torch_columns(
    onnx_path: str, feed: dict[str, np.ndarray], ref: dict[str, np.ndarray], repeat: int
) -> dict[str, Any]:
    """Each column's median (ms) and ``max_rel_err`` against ``ref`` (onnxruntime fp32), or
    why it is missing."""
    try:
        import torch
        from onnx2torch import convert
    except ImportError as e:
        return {"torch_note": f"not importable: {e}"}
    if not torch.cuda.is_available():
        return {"torch_note": "torch sees no GPU"}
    torch.backends.cudnn.benchmark = True
    row: dict[str, Any] = {}
    for column in COLUMNS:
        try:
            model = convert(onnx_path).cuda().eval()
            fn, xs = _setup(column, model, feed)
            replay, out = graph_replay(fn, xs)
            ms = median_ms(replay, repeat)
            io_ms = median_ms(with_host_io(replay, xs, feed, out), repeat)
            err = max_rel_err(_outputs(out, list(ref)), ref)
            row[f"torch_{column}"] = {
                "measured_ms": round(ms, 4),
                "measured_io_ms": round(io_ms, 4),
                "max_rel_err": err,
            }
        except Exception as e:  # noqa: BLE001 - a column torch cannot make: the row says so
            row[f"torch_{column}"] = {"error": f"{type(e).__name__}: {str(e)[:120]}"}
    torch.backends.cudnn.allow_tf32 = True
    return row
