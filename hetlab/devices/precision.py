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

FP32, TF32, FP16, BF16 = "fp32", "tf32", "fp16", "bf16"
PRECISIONS = (FP32, TF32, FP16, BF16)

# 2^-24 (fp32: 23 stored bits), 2^-11 (tf32 and fp16: 10), 2^-8 (bf16: 7)
UNIT_ROUNDOFF = {FP32: 2.0**-24, TF32: 2.0**-11, FP16: 2.0**-11, BF16: 2.0**-8}
