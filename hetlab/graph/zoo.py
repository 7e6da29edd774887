"""The model zoo: HOPE's and PartitionTuner's evaluation models, shipped with the package in
``hetlab/graph/models`` as ONNX graphs without their big weights, and materialized on first
use.

``path(name)`` returns an ONNX file that runs in plain onnxruntime: the stored graph with every
stripped weight synthesized from (seed, tensor name) by ``zoo_weights.materialize``.
It is built once and cached as ``<cache>/<name>-<sha256 of the stored file>[:12].onnx`` (the
hash also covers ``zoo_weights.SYNTH_VERSION``, so a new synthesis rebuilds the files), where
``<cache>`` is ``$HETLAB_CACHE/zoo`` or else ``~/.cache/hetlab/zoo``. Files are written
atomically, so processes that race on the same model each produce the same complete file.
``data/export_zoo.py`` (torch, run once by hand) made the stored files.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from hetlab.errors import HetlabError
from hetlab.fileio import read_json
from hetlab.graph.zoo_weights import SYNTH_VERSION, materialize

ZOO_DIR = Path(__file__).resolve().parent / "models"
INDEX = ZOO_DIR / "index.json"


def _index() -> dict[str, dict[str, Any]]:
    doc = read_json(INDEX, "zoo index")
    if not isinstance(doc, dict):
        raise HetlabError(f"zoo index {INDEX} is not a JSON object; re-run data/export_zoo.py")
    return doc


def names() -> list[str]:
    """The zoo's model names, in index order."""
    return list(_index())


def is_zoo(name: object) -> bool:
    """True when ``name`` is the name of a zoo model (not a path)."""
    return isinstance(name, str) and INDEX.is_file() and name in _index()


def info(name: str) -> dict[str, Any]:
    """The index entry of ``name``: file, inputs {name: shape}, vertices, source, description."""
    index = _index()
    if name not in index:
        raise HetlabError(f"unknown zoo model {name!r}; choose one of: {', '.join(index)}")
    return dict(index[name])


def stored_path(name: str) -> Path:
    """The stored (weightless) ONNX file of ``name`` in ``hetlab/graph/models``."""
    p = ZOO_DIR / info(name)["file"]
    if not p.is_file():
        raise HetlabError(f"zoo file {p} is missing; restore it from git or data/export_zoo.py")
    return p


def cache_dir() -> Path:
    """Where materialized zoo models live: ``$HETLAB_CACHE/zoo`` or ``~/.cache/hetlab/zoo``."""
    root = os.environ.get("HETLAB_CACHE")
    return Path(root) / "zoo" if root else Path.home() / ".cache" / "hetlab" / "zoo"


@lru_cache(maxsize=64)
def _sha256(p: Path, size: int, mtime_ns: int) -> str:

    data = p.read_bytes()
    if SYNTH_VERSION != 1:
        data += f"hetlab-synth-v{SYNTH_VERSION}".encode()
    return hashlib.sha256(data).hexdigest()


def path(name: str, seed: int = 0) -> Path:
    """The materialized ONNX file of zoo model ``name`` with weights from ``seed``,
    built on first use and cached (see the module docstring)."""
    src = stored_path(name)
    st = src.stat()
    digest = _sha256(src, st.st_size, st.st_mtime_ns)[:12]
    suffix = "" if seed == 0 else f"-s{int(seed)}"
    out = cache_dir() / f"{name}-{digest}{suffix}.onnx"
    if out.is_file() and out.stat().st_size > 0:
        return out
    try:
        return materialize(src, out, seed=seed)
    except OSError as e:
        raise HetlabError(
            f"cannot write the zoo model cache {out.parent} ({e.strerror}); "
            "set HETLAB_CACHE to a writable folder"
        ) from None
