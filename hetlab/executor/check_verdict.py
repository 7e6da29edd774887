"""What a check may not pass over (spec §5): a non-finite value on either side, and the
reference's own integer products where onnxruntime saturates them on this CPU.

An error is only a measure where both sides are finite: ``inf - inf`` is no difference,
and a reference that is ``inf`` (random inputs that overflow a model: a boolean mask that
leaves a softmax nothing) proves nothing about the result. So a check where either side
holds inf or NaN fails, and says which side."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hetlab.executor.tolerance import above
from hetlab.graph.onnx_exact import SATURATION_NOTE

__all__ = ["SATURATION_NOTE", "failure", "non_finite", "verdict_notes"]


def _not_finite(value: Any) -> bool:
    a = np.asarray(value)
    return a.dtype.kind in "fc" and not bool(np.isfinite(a).all())


def non_finite(outs: Mapping[str, Any], ref: Mapping[str, Any]) -> dict[str, list[str]]:
    """The outputs holding inf or NaN: ``{"reference": [...], "result": [...]}``, each side
    only where it has one; empty where every value is finite."""
    found = {
        "reference": [k for k, r in ref.items() if _not_finite(r)],
        "result": [k for k in ref if k in outs and _not_finite(outs[k])],
    }
    return {side: names for side, names in found.items() if names}


def failure(doc: Mapping[str, Any]) -> str | None:
    """Why the check in ``doc`` (a run report) failed, or None: a non-finite reference or
    result whatever the error, or an error above the tolerance of a precision other than
    fp32 (``tolerance.py``)."""
    bad = doc.get("non_finite") or {}
    if bad.get("reference"):
        return (
            f"onnxruntime's own output {', '.join(bad['reference'])} is not finite (inf or "
            "NaN) on these inputs, so nothing can be compared: give real inputs with --input"
        )
    if bad.get("result"):
        return (
            f"the run's output {', '.join(bad['result'])} is not finite (inf or NaN) where "
            "onnxruntime's is"
        )
    return above(doc)


def verdict_notes(doc: Mapping[str, Any]) -> list[str]:
    """The check line's notes beyond the error: the failure, and the exact reference."""
    notes = []
    if (why := failure(doc)) is not None:
        notes.append(f"FAILED: {why}")
    if doc.get("saturating_products"):
        notes.append(SATURATION_NOTE)
    return notes
