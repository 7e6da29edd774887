"""hetlab's kernel library, shared by every backend that runs its own kernels.

``cl/`` holds the OpenCL C sources (CUDA compiles the same files with NVRTC), ``ops/`` one
class per ONNX op with its launches, ``fusion.py`` the epilogue and prologue fusions,
``builder.py`` how a unit's nodes become launches, and ``bounds.py`` the optional access
checks. A backend supplies the buffers, the compiler and the queue; this package supplies
what to run.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

KERNEL_DIR = Path(__file__).parent / "cl"


def source(filename: str) -> str:
    """The OpenCL C of ``cl/<filename>``: the access macros of ``bounds.h`` and
    onnxruntime's activations of ``mlas.h``, then the file, numbered from its own first line
    (``#line 1``), with each line ``#include "other.cl"`` replaced by that file of ``cl/``
    (a program is built from one string, so the compiler has no directory to look in)."""
    header = (KERNEL_DIR / "bounds.h").read_text() + (KERNEL_DIR / "mlas.h").read_text()
    return f"{header}{_inlined(filename)}"


def _inlined(filename: str) -> str:
    lines = (KERNEL_DIR / filename).read_text().splitlines(keepends=True)
    out = ["#line 1\n"]
    for i, line in enumerate(lines):
        word = line.split()
        if len(word) == 2 and word[0] == "#include" and word[1].startswith('"'):
            out += [_inlined(word[1].strip('"')), f"#line {i + 2}\n"]
        else:
            out.append(line)
    return "".join(out)


@dataclass
class CLBuffer:
    """A device buffer holding one C-contiguous tensor of ``shape`` and ``dtype``."""

    buf: Any
    shape: tuple[int, ...]
    dtype: str
    device: str

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize
