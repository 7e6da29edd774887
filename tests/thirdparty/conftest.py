"""Third-party models fetched by ``make thirdparty``: (file, --shape, --input values)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

DIR = Path(__file__).resolve().parents[2] / ".cache" / "thirdparty"

# kind, file, shapes, input values: detectors, OCR (incl. attention), audio (If + LSTM)
MODELS = {
    "ppocr_det": ("detector, symbolic batch+spatial, Resize", {"x": (1, 3, 320, 320)}, {}),
    "ppocr_rec": ("OCR recognizer with attention, shape arithmetic", {"x": (1, 3, 48, 320)}, {}),
    "ppocr_cls": ("OCR direction classifier, '?' dims", {"x": (1, 3, 48, 192)}, {}),
    "dddd_det": ("YOLO detector, Resize, Slice", {}, {}),
    "dddd_ocr": ("OCR, quantized LSTM, symbolic width", {"input1": (1, 1, 64, 128)}, {}),
    "silero_vad": (
        "audio VAD: If with LSTM in its body",
        {"input": (1, 512), "state": (2, 1, 128)},
        {"sr": np.array(16000, np.int64)},
    ),
}


def model_path(name: str) -> str:
    p = DIR / f"{name}.onnx"
    if not p.exists():
        pytest.skip(f"{p.name} not fetched (run `make thirdparty`; needs PyPI)")
    return str(p)
