"""A model's input values (spec §5): seeded random arrays of its fixed input shapes, and the
values a user gives (``--input NAME=FILE.npy`` or ``NAME=NUMBER``) fitted to them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hetlab.errors import HetlabError
from hetlab.graph.index_bounds import graph_index_bounds
from hetlab.graph.ir import OpGraph, Tensor

SMALL = 4  # integers that index no known table are drawn from [0, SMALL)


def random_inputs(graph: OpGraph, seed: int = 0) -> dict[str, np.ndarray]:
    """Floats ~ N(0, 1); integers that reach a ``Gather``'s indices (``index_bounds``) in
    [0, rows of its table), integer masks (``mask`` in the name) all 1, other integers in
    [0, 4) (a small range valid as lengths and token ids); floats that reach such indices
    (through a ``Cast``) as integers likewise; boolean tensors all True (a mask that keeps
    every position: an unpadded batch), boolean scalars False (a flag off). A mask of other
    values can leave a row with nothing kept, or (an integer one of 2 or 3, as BERT-style
    models scale ``1 - mask`` by the float minimum) overflow to inf in the model's own
    onnxruntime run. Deterministic for a given seed."""
    specs = [graph.tensors[n] for n in graph.inputs]
    return random_arrays(specs, seed, graph_index_bounds(graph))


def random_arrays(
    specs: list, seed: int = 0, bounds: Mapping[str, int] | None = None
) -> dict[str, np.ndarray]:
    """Seeded arrays for ``Tensor`` specs (name, shape, dtype), by the rule of
    ``random_inputs``; ``bounds``: name -> the size of the table its values index."""
    rng = np.random.default_rng(seed)
    bounds = bounds or {}
    out: dict[str, np.ndarray] = {}
    for t in specs:
        shape = tuple(t.shape or ())
        dt = np.dtype(t.dtype) if t.dtype not in ("string", "bfloat16") else np.dtype("float32")
        rows = bounds.get(t.name)
        if dt.kind == "f" and rows is None:
            out[t.name] = rng.standard_normal(shape).astype(dt)
        elif dt.kind in "iu" and rows is None and "mask" in t.name.lower():
            out[t.name] = np.ones(shape, dtype=dt)
        elif dt.kind in "iuf":
            out[t.name] = rng.integers(0, _high(dt, rows), size=shape).astype(dt)
        elif dt.kind == "b":
            out[t.name] = np.full(shape, len(shape) > 0, dtype=bool)
        else:
            out[t.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def _high(dt: np.dtype, rows: int | None) -> int:
    """The exclusive upper bound of a drawn integer: the table's rows (at least 1), or
    ``SMALL``; never above what ``dt`` holds."""
    high = SMALL if rows is None else max(int(rows), 1)
    return min(high, int(np.iinfo(dt).max) + 1) if dt.kind in "iu" else high


def model_inputs(
    graph: OpGraph, given: Mapping[str, Any] | None = None, seed: int = 0
) -> dict[str, np.ndarray]:
    """Every input of ``graph``: ``given`` values fitted to it (``fit_given``), seeded random
    arrays (``random_inputs``) for the others."""
    return {**random_inputs(graph, seed), **fit_given(graph, given or {})}


def fit_given(graph: OpGraph, given: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """``fit_values`` over the graph's inputs."""
    return fit_values([graph.tensors[n] for n in graph.inputs], given)


def fit_values(specs: list[Tensor], given: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The user's values as the inputs' arrays: each cast to its input's type, C-ordered; a
    single number fills its input's whole shape (``--input ids=1`` on a ``[1, 256]`` input).
    One line naming ``--input NAME`` for a name the model lacks, another shape, or a value its
    type cannot hold."""
    by_name = {t.name: t for t in specs}
    out: dict[str, np.ndarray] = {}
    for name, value in given.items():
        t = by_name.get(name)
        if t is None:
            raise HetlabError(
                f"--input {name}: the model has no input {name!r} "
                f"(inputs: {', '.join(by_name) or 'none'})"
            )
        arr = np.asarray(value)
        shape = tuple(t.shape or ())
        if arr.ndim == 0 and shape:
            arr = np.full(shape, arr.item(), dtype=arr.dtype)
        if tuple(arr.shape) != shape:
            raise HetlabError(
                f"--input {name}: the value has shape {list(arr.shape)}, the model expects "
                f"{list(shape)} (give a .npy file of that shape, or one number to fill it)"
            )
        out[name] = _cast(name, arr, t.dtype)
    return out


def _cast(name: str, arr: np.ndarray, dtype: str) -> np.ndarray:
    """``arr`` as ``dtype``; an error where an integer or boolean input would change the
    values (1.5 as an index, 300 as uint8)."""
    if dtype in ("string", "bfloat16"):
        return np.asarray(arr, order="C")
    dt = np.dtype(dtype)
    out = np.asarray(arr, dtype=dt, order="C")
    changed = (
        dt.kind in "iub"
        and arr.dtype.kind in "iuf"
        and not np.array_equal(out.astype(np.float64), arr.astype(np.float64))
    )
    if changed:
        bad = arr.ravel()[np.flatnonzero(out.ravel() != arr.ravel())[0]]
        raise HetlabError(
            f"--input {name}: the input is {dtype}, which cannot hold the value {bad}"
        )
    return out
