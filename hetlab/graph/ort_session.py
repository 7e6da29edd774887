"""The plain onnxruntime CPU session every layer above the devices compares with or records
from: the check's reference, the per-node divergence, the inputs a model rejects, the
profiler's recorded tensor values, shape inference's runs and folding's load check.

One CPU provider, no thread settings (onnxruntime's defaults), graph optimisations off unless
asked for, and onnxruntime's own logging held to ``log_level`` (3: errors, 4: fatal only).
Where integer products must be exact, the caller passes ``onnx_exact.exact_source(model)``.
The devices build their own sessions (``devices/ort_cpu.py``: threads, pinning, fusion).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

QUIET = 4  # onnxruntime logs fatal errors only
ERRORS = 3  # onnxruntime logs its errors too


def reference_session(model: Any, optimize: bool = False, log_level: int = QUIET) -> Any:
    """An ``onnxruntime.InferenceSession`` on the CPU provider over ``model`` (a file, a
    serialized model, or an ``onnx.ModelProto``); graph optimisations off unless
    ``optimize``. onnxruntime's errors propagate as its own types."""
    # lazy: onnxruntime is slow to import
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = log_level
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if isinstance(model, Path):
        model = str(model)
    elif not isinstance(model, str | bytes):
        model = model.SerializeToString()
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def run_quietly(
    sess: Any,
    outputs: Sequence[str] | None,
    feeds: Mapping[str, Any],
    log_level: int = QUIET,
) -> list:
    """``sess.run(outputs, feeds)`` with onnxruntime's logging of this run held to
    ``log_level``."""
    # lazy: onnxruntime is slow to import
    import onnxruntime as ort

    ro = ort.RunOptions()
    ro.log_severity_level = log_level
    return sess.run(None if outputs is None else list(outputs), dict(feeds), ro)
