"""Inputs and the correctness check of a run (spec §5): seeded random inputs, a plain
onnxruntime session on ``model_path`` as the reference, ``max_rel_err``, and how far
onnxruntime moves against itself on the same inputs (``reference_spread``): a device's error
of that size is rounding the model amplifies, or ties that a selection op breaks either way
(``selection.py``, whose outputs are compared by what they select). Where this CPU's
onnxruntime saturates u8 x s8 integer products, the reference computes them exactly
(``graph.onnx_exact``); a non-finite reference or result fails the check
(``check_verdict``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.errors import HetlabError
from hetlab.executor.check_verdict import non_finite, verdict_notes
from hetlab.executor.selection import Selection, aligned, dependent, selections
from hetlab.graph.inputs import random_inputs
from hetlab.graph.ir import OpGraph
from hetlab.graph.onnx_exact import exact_source
from hetlab.graph.ort_session import ERRORS, reference_session, run_quietly

__all__ = [
    "Reference",
    "check_line",
    "load_inputs",
    "max_rel_err",
    "random_inputs",
    "reference",
    "reference_outputs",
    "reference_spread",
    "rel_err",
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
    model_path: str | bytes,
    inputs: Mapping[str, Any],
    outputs: list[str],
    optimize: bool = True,
) -> dict[str, Any]:
    """The model's outputs from one plain onnxruntime CPU session (default options; with
    ``optimize=False``, graph optimisations off), its integer products exact where this
    CPU's onnxruntime saturates them (``exact_source``). ``model_path``: a file, or a
    serialized model (``onnx_io.extract``) read from memory."""
    if not model_path:
        raise HetlabError("--check needs the model's ONNX file (graph.model_path is empty)")
    src = model_path if isinstance(model_path, bytes) else str(model_path)
    try:
        sess = reference_session(exact_source(src)[0], optimize, ERRORS)
        names = [i.name for i in sess.get_inputs()]
        res = run_quietly(sess, outputs, {k: inputs[k] for k in names}, ERRORS)
    except Exception as e:  # noqa: BLE001 - the reference run itself failed
        where = "the model" if isinstance(model_path, bytes) else model_path
        raise HetlabError(f"the reference onnxruntime run of {where} failed: {e}") from None
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
    return max((rel_err(outs[k], r) for k, r in ref.items()), default=0.0)


def rel_err(out: Any, ref: Any) -> float:
    """``||out - ref|| / ||ref||`` of one output (see ``max_rel_err``); infinite where the
    shapes differ or the error is not finite."""
    r, o = np.asarray(ref), np.asarray(out)
    if r.shape != o.shape:
        return float("inf")
    if r.dtype.kind not in "fiucb":
        return 0.0 if np.array_equal(r, o) else 1.0
    r64 = r.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, an infinite error below
        d = float(np.linalg.norm((o.astype(np.float64) - r64).ravel()))
    n = float(np.linalg.norm(r64.ravel()))
    err = d / n if n > 0 else d
    return err if np.isfinite(err) else float("inf")


@dataclass
class Reference:
    """Plain onnxruntime's outputs on some inputs (graph optimisations on, as in a default
    session), ``spread``: the largest error between it and onnxruntime with optimisations
    off, and what the tie-aware comparisons need (the selection outputs and the values
    their indices select from, from the run with optimisations off). ``saturating``: the
    nodes whose u8 x s8 products onnxruntime saturates here and the reference computes
    exactly."""

    outputs: dict[str, Any]
    spread: float
    selections: dict[str, Selection] = field(default_factory=dict)
    sources: dict[str, np.ndarray] = field(default_factory=dict)
    dependent: list[str] = field(default_factory=list)  # outputs computed from selections
    saturating: int = 0

    def errors(self, outs: Mapping[str, Any]) -> tuple[dict[str, float], list[str]]:
        """Each output's error against the reference, and the outputs compared tie-aware."""
        return _errors(outs, self.outputs, self.selections, self.sources)

    def report(self, outs: Mapping[str, Any]) -> dict[str, Any]:
        """The check's report keys (spec §5): ``max_rel_err``, ``reference_spread``,
        ``within_reference_spread``, ``tie_aware``, ``selection_dependent``, the error of
        each output, and where they apply ``non_finite`` (never within the spread) and
        ``saturating_products``."""
        errs, tied = self.errors(outs)
        worst = max(errs.values(), default=0.0)
        bad = non_finite(outs, self.outputs)
        doc: dict[str, Any] = {
            "max_rel_err": worst,
            "reference_spread": self.spread,
            "within_reference_spread": bool(  # nothing is within an infinite spread
                not bad and np.isfinite(self.spread) and worst <= self.spread
            ),
            "tie_aware": tied,
            "selection_dependent": [t for t in self.dependent if t not in tied],
            "rel_err": errs,
        }
        if tied:
            doc["elementwise_max_rel_err"] = max_rel_err(outs, self.outputs)
        if bad:
            doc["non_finite"] = bad
        if self.saturating:
            doc["saturating_products"] = self.saturating
        return doc


def reference(graph: OpGraph, inputs: Mapping[str, Any]) -> Reference:
    """The reference of a check on ``inputs``: onnxruntime with graph optimisations on, and
    once more with them off (the source tensors of the selection outputs exposed) for the
    spread. Two onnxruntime runs, once per model and inputs, of the model as given (before
    folding, ``graph.source_path``)."""
    outputs = list(graph.outputs)
    src = graph.source_path or graph.model_path or ""
    on = reference_outputs(src, inputs, outputs)
    sel = selections(graph)
    off, sources = _plain_with_sources(graph, inputs, sel)
    spread = max(_errors(off, on, sel, sources)[0].values(), default=0.0)
    return Reference(on, spread, sel, sources, dependent(graph), exact_source(src)[1])


def _plain_with_sources(
    graph: OpGraph, inputs: Mapping[str, Any], sel: Mapping[str, Selection]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The outputs with graph optimisations off, and the values the selection outputs'
    indices select from (model inputs, weights, or intermediates exposed as outputs)."""
    # lazy: onnx is slow to import
    from hetlab.graph.onnx_io import extract, weights

    outputs = list(graph.outputs)
    need = sorted({s.source for s in sel.values() if s.role == "indices" and s.source})
    sources = {t: np.asarray(inputs[t]) for t in need if t in inputs}
    consts = [t for t in need if t in graph.consts and t not in sources]
    if consts:
        w = weights(graph)
        sources.update({t: np.asarray(w[t]) for t in consts if t in w})
    inter = [t for t in need if t not in sources and t not in outputs]
    src: str | bytes = graph.source_path or graph.model_path or ""
    if inter:  # from the model that runs, whose vertices the graph's ids name
        try:
            src = extract(graph, [n.id for n in graph.nodes], outputs + inter)
        except HetlabError:  # e.g. a model output that is a model input: no source then
            inter = []
    got = reference_outputs(src, inputs, outputs + inter, optimize=False)
    sources.update({t: np.asarray(got[t]) for t in need if t in got})
    return {t: got[t] for t in outputs}, sources


def _errors(
    outs: Mapping[str, Any],
    ref: Mapping[str, Any],
    sel: Mapping[str, Selection],
    sources: Mapping[str, np.ndarray],
) -> tuple[dict[str, float], list[str]]:
    errs: dict[str, float] = {}
    tied: list[str] = []
    for k, r in ref.items():
        pair = aligned(sel[k], outs[k], r, sources) if k in sel else None
        if pair is not None:
            tied.append(k)
        errs[k] = rel_err(*pair) if pair is not None else rel_err(outs[k], r)
    return errs, tied


def check_line(doc: Mapping[str, Any]) -> str | None:
    """The report's one-line check summary: ``max_rel_err`` and where it stands against
    onnxruntime's own spread, and the outputs compared tie-aware; None without a check."""
    err = doc.get("max_rel_err")
    if err is None:
        return None
    line = f"max_rel_err {err:.2e} against plain onnxruntime"
    spread = doc.get("reference_spread")
    if spread is not None:
        where = "within " if doc.get("within_reference_spread", err <= spread) else ""
        line += (
            f" ({where}onnxruntime's own spread {spread:.2e}: graph optimisations off vs on, "
            "same inputs)"
        )
    tol = doc.get("tolerance") or {}
    if tol.get("value") is not None and err <= tol["value"]:
        line += f"; within the {tol['precision']} tolerance {tol['value']:.2e} ({tol['why']})"
    if doc.get("tie_aware"):
        line += f"; compared tie-aware: {', '.join(doc['tie_aware'])}"
    if doc.get("selection_dependent"):
        line += (
            f"; computed from a selection's indices, so moved by ties: "
            f"{', '.join(doc['selection_dependent'])}"
        )
    return "; ".join([line, *verdict_notes(doc)])
