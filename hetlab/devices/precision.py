"""Arithmetic precisions a device may run a model's matrix products at.

``fp32`` is the default and every device's; the others are declared by a backend in
``Capabilities.precisions`` and chosen by the user per device (``--precision cuda0=tf32``).
A precision names the operands of convolutions and matrix products (rounded to it, with
float32 accumulation); where a precision also changes how activations are stored, the
backend says so in its ``info()``.

``UNIT_ROUNDOFF`` is each format's unit roundoff u = 2^-(p) for p stored mantissa bits plus
one: the scale of one operand's rounding error, from which ``--check`` derives the
tolerance it declares for a precision (docs/decisions.md).
"""

from __future__ import annotations

from hetlab.errors import HetlabError

FP32, TF32, FP16, BF16 = "fp32", "tf32", "fp16", "bf16"
PRECISIONS = (FP32, TF32, FP16, BF16)

# 2^-24 (fp32: 23 stored bits), 2^-11 (tf32 and fp16: 10), 2^-8 (bf16: 7)
UNIT_ROUNDOFF = {FP32: 2.0**-24, TF32: 2.0**-11, FP16: 2.0**-11, BF16: 2.0**-8}


def check_precision(name: str) -> str:
    """``name`` where it is a precision hetlab knows; one clear line otherwise."""
    if name not in PRECISIONS:
        raise HetlabError(f"unknown precision {name!r}; one of {', '.join(PRECISIONS)}")
    return name


def coarsest(names: list[str] | tuple[str, ...] | set[str]) -> str:
    """The coarsest of ``names`` (the largest unit roundoff; fp16 before tf32 at a tie, as
    it also stores activations in 16 bits where a model does): fp32 for none."""
    return max(names, key=PRECISIONS.index, default=FP32)
