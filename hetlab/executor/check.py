"""Inputs and the correctness check of a run (spec §5): seeded random inputs, a plain
onnxruntime session on ``model_path`` as the reference, and ``max_rel_err``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hetlab.errors import HetlabError
from hetlab.graph.inputs import random_inputs
from hetlab.graph.ir import OpGraph

__all__ = [
    "load_inputs",
    "max_rel_err",
    "random_inputs",
    "reference_outputs",
    "reference_spread",
]


def load_inputs(graph: OpGraph, given: Mapping[str, Any], seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded random inputs, with ``given`` arrays (``--input``) replacing some of them
    (cast to the input's type; the shape must be the model's)."""
    out = random_inputs(graph, seed)
    for name, arr in given.items():
        if name not in graph.inputs:
            raise HetlabError(
                f"--input {name}: the model has no input {name!r} "
                f"(inputs: {', '.join(graph.inputs)})"
            )
        arr = np.asarray(arr)
        want = out[name]
        if tuple(arr.shape) != tuple(want.shape):
            raise HetlabError(
                f"--input {name}: the value has shape {list(arr.shape)}, the model "
                f"expects {list(want.shape)}"
            )
        out[name] = np.asarray(arr, dtype=want.dtype, order="C")
    return out


def reference_outputs(
    model_path: str, inputs: Mapping[str, Any], outputs: list[str], optimize: bool = True
) -> dict[str, Any]:
    """The model's outputs from one plain onnxruntime CPU session (default options; with
    ``optimize=False``, graph optimisations off)."""
    # lazy: onnxruntime is slow to import
    import onnxruntime as ort

    if not model_path:
        raise HetlabError("--check needs the model's ONNX file (graph.model_path is empty)")
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 3
        if not optimize:
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        ro = ort.RunOptions()
        ro.log_severity_level = 3
        res = sess.run(outputs, {k: inputs[k] for k in names}, ro)
    except Exception as e:  # noqa: BLE001 - the reference run itself failed
        raise HetlabError(f"the reference onnxruntime run of {model_path} failed: {e}") from None
    return dict(zip(outputs, res, strict=False))


def reference_spread(model_path: str, inputs: Mapping[str, Any], outputs: list[str]) -> float:
    """``max_rel_err`` between onnxruntime with graph optimisations off and on: how much the
    reference itself moves with float32 rounding on these inputs. A device error of that
    size is no finding; some models amplify rounding (a probability map that is almost 0
    everywhere, measured relative to its own tiny norm)."""
    plain = reference_outputs(model_path, inputs, outputs, optimize=False)
    return max_rel_err(plain, reference_outputs(model_path, inputs, outputs))


def max_rel_err(outs: Mapping[str, Any], ref: Mapping[str, Any]) -> float:
    """Largest ``||out - ref|| / ||ref||`` over the outputs (absolute error where
    ``||ref|| = 0``); non-numeric outputs count 0 when equal and 1 when not."""
    worst = 0.0
    for k, r in ref.items():
        o = outs[k]
        r = np.asarray(r)
        o = np.asarray(o)
        if r.shape != o.shape:
            return float("inf")
        if r.dtype.kind not in "fiucb":
            worst = max(worst, 0.0 if np.array_equal(r, o) else 1.0)
            continue
        r64 = r.astype(np.float64)
        d = float(np.linalg.norm((o.astype(np.float64) - r64).ravel()))
        n = float(np.linalg.norm(r64.ravel()))
        err = d / n if n > 0 else d
        worst = max(worst, err if np.isfinite(err) else float("inf"))
    return worst
