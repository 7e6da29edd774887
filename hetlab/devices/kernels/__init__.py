"""hetlab's kernel library, shared by every backend that runs its own kernels.

``cl/`` holds the OpenCL C sources (CUDA compiles the same files with NVRTC), ``ops/`` one
class per ONNX op with its launches, ``fusion.py`` the epilogue and prologue fusions,
``builder.py`` how a unit's nodes become launches, and ``bounds.py`` the optional access
checks. A backend supplies the buffers, the compiler and the queue; this package supplies
what to run.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

KERNEL_DIR = Path(__file__).parent / "cl"


# a kernel file's line ``//! uses other.cl``: the other file's helpers are part of it
_USES = re.compile(r"^//! uses (\S+\.cl)$", re.MULTILINE)


def source(filename: str) -> str:
    """The OpenCL C of ``cl/<filename>``: the access macros of ``bounds.h`` and
    onnxruntime's activations of ``mlas.h``, then the files it names on a ``//! uses`` line,
    then the file, numbered from its own first line (``#line 1``)."""
    header = (KERNEL_DIR / "bounds.h").read_text() + (KERNEL_DIR / "mlas.h").read_text()
    text = (KERNEL_DIR / filename).read_text()
    used = "".join(f"#line 1\n{(KERNEL_DIR / u).read_text()}" for u in _USES.findall(text))
    return f"{header}{used}#line 1\n{text}"


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
