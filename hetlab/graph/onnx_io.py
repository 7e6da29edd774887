"""ONNX -> OpGraph (spec §1). The only module of hetlab that imports ``onnx``."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from hetlab.graph.ir import OpGraph


def load(model: str | Path, shapes: dict[str, tuple[int, ...]] | None = None) -> OpGraph:
    """Load a zoo name or an .onnx path into an OpGraph with fixed shapes. (being written)"""
    raise NotImplementedError


def weights(graph: OpGraph) -> dict[str, np.ndarray]:
    """Initializers and folded Constant outputs of ``graph``'s model, by tensor name."""
    raise NotImplementedError


def extract(graph: OpGraph, node_ids: Sequence[str], outputs: Sequence[str] | None = None) -> bytes:
    """A standalone ONNX model (serialized) of ``node_ids``. (being written)"""
    raise NotImplementedError


# --- zoo: stripping and synthesizing weights (owned by the zoo work; see hetlab/zoo.py) ---
