"""Folding what is constant (spec §1, docs/folding.md), measured on the corpus and the zoo.

Per model, loaded with its corpus shapes and values: vertices before and after folding, the
integer ones among them (every output int/bool: shape arithmetic), those the first OpenCL
device cannot run (each a CPU fallback), the time folding adds to a load (a fresh folding
cache) and a cached load's, and ``max_rel_err`` of onnxruntime on the folded file against
onnxruntime on the file as given (optimisations off in both, the corpus's inputs or seeded
ones); the first fold of a process also imports onnxscript (about 0.6 s, left out here).
``--libraries`` compares the candidate folding libraries instead (those installed):
vertices after, seconds, error, on the same fixed-shape models.

    python -m benchmarks.folding                   # the table of docs/corpus.md and folding.md
    python -m benchmarks.folding --libraries       # the comparison of docs/folding.md
"""

from __future__ import annotations

import argparse
import importlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

import hetlab
from hetlab import zoo
from hetlab.corpus import MODELS
from hetlab.graph import random_inputs

INTS = {"int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool"}


def models(names: list[str] | None) -> Iterator[tuple[str, str, dict, dict]]:
    """(name, file, shapes, values) of every corpus model fetched, then every zoo model."""
    for name, m in MODELS.items():
        if m.path.exists() and (not names or name in names):
            yield name, str(m.path), dict(m.shapes), m.inputs()
    for name in zoo.names():
        if not names or name in names:
            yield name, str(zoo.path(name)), {}, {}


def feed(graph: Any, values: dict) -> dict[str, np.ndarray]:
    return {**random_inputs(graph), **{k: np.asarray(v) for k, v in values.items()}}


def ort_outputs(model: str | bytes, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    names = {i.name for i in s.get_inputs()}
    return s.run(None, {k: v for k, v in inputs.items() if k in names})


def rel_err(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    worst = 0.0
    for a, b in zip(got, want, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return float("inf")
        if a.dtype.kind not in "fc":
            worst = max(worst, 0.0 if np.array_equal(a, b) else float("inf"))
            continue
        d, n = np.linalg.norm((a - b).ravel()), np.linalg.norm(b.ravel())
        worst = max(worst, float(d / n) if n else float(d))
    return worst


def int_vertices(graph: Any) -> int:
    def is_int(t: str) -> bool:
        return t in graph.tensors and graph.tensors[t].dtype in INTS

    return sum(all(is_int(t) for t in n.outputs if t) for n in graph.nodes)


def fresh_cache() -> str:
    """A folding cache of its own, the zoo's materialized files shared."""
    root = Path(tempfile.mkdtemp(prefix="hetlab-fold-"))
    (root / "zoo").symlink_to(zoo.cache_dir())
    return str(root)


def fold_row(name: str, path: str, shapes: dict, values: dict, cl: Any) -> dict[str, Any]:
    hetlab.load(path, shapes or None, values or None, fold=False)  # the file parsed once
    t0 = time.perf_counter()
    plain = hetlab.load(path, shapes or None, values or None, fold=False)
    t1 = time.perf_counter()
    old = os.environ.get("HETLAB_CACHE")
    os.environ["HETLAB_CACHE"] = fresh_cache()
    try:
        folded = hetlab.load(path, shapes or None, values or None)
        t2 = time.perf_counter()
        hetlab.load(path, shapes or None, values or None)
        t3 = time.perf_counter()
        inputs = feed(plain, values)
        err = rel_err(ort_outputs(folded.model_path, inputs), ort_outputs(path, inputs))
    finally:
        os.environ.pop("HETLAB_CACHE") if old is None else os.environ.update(HETLAB_CACHE=old)
    off_cl = [sum(not cl.supports(n, g) for n in g.nodes) for g in (plain, folded)] if cl else None
    return {
        "model": name,
        "before": len(plain.nodes),
        "after": len(folded.nodes),
        "int_before": int_vertices(plain),
        "int_after": int_vertices(folded),
        "not_on_opencl": "-" if off_cl is None else f"{off_cl[0]} -> {off_cl[1]}",
        "fold_s": round((t2 - t1) - (t1 - t0), 2),
        "cached_load_s": round(t3 - t2, 2),
        "plain_load_s": round(t1 - t0, 2),
        "max_rel_err": err,
    }


def fixed_model(path: str, graph: Any) -> onnx.ModelProto:
    """The model of ``path`` with the graph's fixed input shapes declared."""
    m = onnx.load(path)
    for vi in m.graph.input:
        if vi.name in graph.input_shapes:
            dims = vi.type.tensor_type.shape.dim
            del dims[:]
            for d in graph.input_shapes[vi.name]:
                dims.add().dim_value = int(d)
    return m


def ort_basic(m: onnx.ModelProto) -> onnx.ModelProto:
    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(d, "basic.onnx")
        so.log_severity_level = 4
        ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return onnx.load(so.optimized_model_filepath)


def onnxsim_(m: onnx.ModelProto) -> onnx.ModelProto:
    import onnxsim

    return onnxsim.simplify(m)[0]


def onnxslim_(m: onnx.ModelProto) -> onnx.ModelProto:
    import onnxslim

    return onnxslim.slim(m)


def onnxoptimizer_(m: onnx.ModelProto) -> onnx.ModelProto:
    import onnxoptimizer

    return onnxoptimizer.optimize(m)


def onnxscript_(m: onnx.ModelProto) -> onnx.ModelProto:
    from onnxscript import optimizer

    return optimizer.optimize(m)


LIBRARIES: dict[str, Callable[[onnx.ModelProto], onnx.ModelProto]] = {
    "ort_basic": ort_basic,
    "onnxsim": onnxsim_,
    "onnxslim": onnxslim_,
    "onnxoptimizer": onnxoptimizer_,
    "onnxscript.optimize": onnxscript_,
}


def library_row(name: str, path: str, shapes: dict, values: dict) -> dict[str, Any]:
    """Each installed library on the fixed-shape model: vertices after, seconds, error."""
    plain = hetlab.load(path, shapes or None, values or None, fold=False)
    m = fixed_model(path, plain)
    inputs = feed(plain, values)
    want = ort_outputs(m.SerializeToString(), inputs)
    row: dict[str, Any] = {"model": name, "before": len(plain.nodes)}
    for lib, fn in LIBRARIES.items():
        try:
            t0 = time.perf_counter()
            out = fn(m)
            dt = time.perf_counter() - t0
            err = rel_err(ort_outputs(out.SerializeToString(), inputs), want)
            after = sum(n.op_type != "Constant" for n in out.graph.node)
            row[lib] = f"{after} ({dt:.2f} s{'' if err <= 1e-4 else f', err {err:.1e}'})"
        except ImportError:
            row[lib] = "not installed"
        except Exception as e:  # noqa: BLE001 - a library's failure is a cell of the table
            row[lib] = f"fails: {(str(e).splitlines() or [type(e).__name__])[0][:60]}"
    return row


def markdown(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    out = ["| " + " | ".join(keys) + " |", "|" + " --- |" * len(keys)]
    out += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="", help="comma-separated names (default: all)")
    ap.add_argument("--libraries", action="store_true", help="compare the folding libraries")
    ap.add_argument("--no-opencl", action="store_true", help="skip the OpenCL support column")
    a = ap.parse_args()
    names = [n for n in a.models.split(",") if n] or None
    cl = None
    if not a.libraries and not a.no_opencl:
        from hetlab.devices import opencl_devices

        found = opencl_devices()
        cl = found[0] if found else None
    if not a.libraries:  # imported once here, not in the first model's fold
        importlib.import_module("onnxscript.optimizer")

    rows = []
    for name, path, shapes, values in models(names):
        row = library_row(name, path, shapes, values) if a.libraries else None
        rows.append(row or fold_row(name, path, shapes, values, cl))
        print(rows[-1], flush=True)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
