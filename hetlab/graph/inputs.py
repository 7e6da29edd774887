"""Seeded random inputs of a graph's fixed input shapes (spec §5)."""

from __future__ import annotations

import numpy as np

from hetlab.graph.ir import OpGraph


def random_inputs(graph: OpGraph, seed: int = 0) -> dict[str, np.ndarray]:
    """Floats ~ N(0, 1); integers in [0, 4) (a small range valid as indices and token ids);
    booleans at random. Deterministic for a given seed."""
    return random_arrays([graph.tensors[n] for n in graph.inputs], seed)


def random_arrays(specs: list, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded arrays for ``Tensor`` specs (name, shape, dtype), by the rule of ``random_inputs``."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for t in specs:
        shape = tuple(t.shape or ())
        dt = np.dtype(t.dtype) if t.dtype not in ("string", "bfloat16") else np.dtype("float32")
        if dt.kind == "f":
            out[t.name] = rng.standard_normal(shape).astype(dt)
        elif dt.kind in "iu":
            out[t.name] = rng.integers(0, 4, size=shape).astype(dt)
        elif dt.kind == "b":
            out[t.name] = rng.integers(0, 2, size=shape).astype(bool)
        else:
            out[t.name] = rng.standard_normal(shape).astype(np.float32)
    return out
