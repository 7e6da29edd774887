"""Tie-aware comparison of what selection ops (TopK, ArgMax, ArgMin, NonMaxSuppression) write.

Where values tie (random inputs make many: a saturated sigmoid, a ReLU's zeros), a selection
op may pick any of the tied elements, so two correct runs can disagree on its indices and on
the order of equal values. A model output that such an op writes directly is therefore
compared by what it selects rather than elementwise:

- TopK values: both sorted along the axis;
- TopK indices, ArgMax, ArgMin: the values of the op's input at the indices each run chose
  (the reference's input values, so that tied choices select equal values), sorted along the
  axis;
- NonMaxSuppression's selected indices: the scores of the selected boxes, sorted; another
  number of selected boxes stays a shape mismatch.

An output computed further from a selection's indices (a Gather of the top boxes) is named by
``dependent`` and compared elementwise: ties move it, and the reference's spread shows by how
much. ``aligned`` returns the two arrays to compare; the comparison itself is the caller's
(``check.rel_err``). An index outside its axis makes the pair unequal in shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.graph.ir import OpGraph

EMPTY = (np.zeros(0), np.zeros(1))  # a pair that compares as a shape mismatch (infinite)


@dataclass(frozen=True)
class Selection:
    """A model output written by a selection op: its ``role`` ("values" or "indices"), the
    tensor its indices select from (``source``) and the op's axis."""

    op: str
    role: str
    source: str | None
    axis: int


def selections(graph: OpGraph) -> dict[str, Selection]:
    """The model outputs that TopK, ArgMax, ArgMin or NonMaxSuppression write directly."""
    out: dict[str, Selection] = {}
    for n in graph.nodes:
        if n.domain not in ("", "ai.onnx"):
            continue
        for i, t in enumerate(n.outputs):
            if not t or t not in graph.outputs:
                continue
            if n.op_type == "TopK":
                role = "values" if i == 0 else "indices"
                out[t] = Selection("TopK", role, n.inputs[0], int(n.attrs.get("axis", -1)))
            elif n.op_type in ("ArgMax", "ArgMin"):
                out[t] = Selection(n.op_type, "indices", n.inputs[0], int(n.attrs.get("axis", 0)))
            elif n.op_type == "NonMaxSuppression" and len(n.inputs) > 1:
                out[t] = Selection(n.op_type, "indices", n.inputs[1], 0)
    return out


def dependent(graph: OpGraph) -> list[str]:
    """The model outputs computed from a selection op's indices through other nodes (a
    Gather of the top-k rows, say), in the model's output order."""
    seeds = {
        t
        for n in graph.nodes
        if n.op_type in ("TopK", "ArgMax", "ArgMin", "NonMaxSuppression")
        for i, t in enumerate(n.outputs)
        if t and (n.op_type != "TopK" or i == 1)
    }
    reached, frontier = set(), set(seeds)
    readers: dict[str, list] = {}
    for n in graph.nodes:
        for t in dict.fromkeys(n.inputs + n.outer_inputs):
            readers.setdefault(t, []).append(n)
    while frontier:
        t = frontier.pop()
        for n in readers.get(t, []):
            new = {o for o in n.outputs if o and o not in reached}
            reached |= new
            frontier |= new
    return [t for t in graph.outputs if t in reached]


def aligned(
    sel: Selection, got: Any, want: Any, sources: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The two arrays that stand for ``got`` and ``want`` in a tie-aware comparison; None
    where it does not apply (an index output whose source values are not at hand)."""
    g, w = np.asarray(got), np.asarray(want)
    if sel.role == "values":
        if g.shape != w.shape or g.ndim == 0:
            return None
        ax = sel.axis % g.ndim
        return np.sort(g, axis=ax), np.sort(w, axis=ax)
    src = sources.get(sel.source) if sel.source else None
    if src is None:
        return None
    x = np.asarray(src)
    if sel.op == "NonMaxSuppression":
        pg, pw = _nms_scores(x, g), _nms_scores(x, w)
    else:
        pg, pw = _picked(x, g, sel.axis), _picked(x, w, sel.axis)
    if pw is None:  # the reference's own indices do not fit its source: compare elementwise
        return None
    return EMPTY if pg is None else (pg, pw)


def _picked(x: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray | None:
    """The values of ``x`` at ``idx`` along ``axis`` (ArgMax's reduced axis restored),
    sorted along it; None where ``idx`` cannot index ``x``."""
    if x.ndim == 0:
        return None
    ax = axis % x.ndim
    if idx.ndim == x.ndim - 1:  # ArgMax/ArgMin with keepdims=0
        idx = np.expand_dims(idx, ax)
    if idx.ndim != x.ndim or idx.dtype.kind not in "iu":
        return None
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[ax]):
        return None
    try:
        return np.sort(np.take_along_axis(x, idx.astype(np.int64), axis=ax), axis=ax)
    except ValueError:  # other leading dimensions than the source's
        return None


def _nms_scores(scores: np.ndarray, sel: np.ndarray) -> np.ndarray | None:
    """The scores ``scores[batch, class, box]`` of NonMaxSuppression's selected rows,
    sorted; None where ``sel`` cannot index ``scores``."""
    if scores.ndim != 3 or sel.ndim != 2 or sel.shape[1] != 3 or sel.dtype.kind not in "iu":
        return None
    if sel.size and ((sel < 0).any() or (sel >= np.array(scores.shape)).any()):
        return None
    return np.sort(scores[sel[:, 0], sel[:, 1], sel[:, 2]])
