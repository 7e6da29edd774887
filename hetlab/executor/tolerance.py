"""The tolerance a run's check declares (spec §5's ``tolerance``), by the precision it ran at.

fp32 keeps the check's own rule: ``max_rel_err`` is reported beside onnxruntime's own spread
and the check fails only on a value that is not finite (``check_verdict``); there is no
value. At another precision the tolerance is ``TOLERANCE_U`` times that precision's unit
roundoff (``precision.UNIT_ROUNDOFF``), a multiple chosen so that PyTorch's own errors at
the precision, on the same models, pass (docs/decisions.md#tolerance-per-precision), and a
check above it fails. The rule is the coarsest precision among the devices that ran a node,
and a model whose own outputs are float16 gets at least the fp16 rule."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hetlab.devices.base import Device
from hetlab.devices.precision import FP16, FP32, UNIT_ROUNDOFF, coarsest
from hetlab.graph.ir import OpGraph

# the tolerance in units of roundoff: PyTorch's largest error on the zoo's models is 1.2 u at
# tf32, 1.4 u at fp16 and 5.6 u at bf16 (docs/decisions.md#tolerance-per-precision)
TOLERANCE_U = 8

FP32_RULE = (
    "fp32: max_rel_err beside onnxruntime's own spread, failing only on a value that is not finite"
)


def tolerance(
    graph: OpGraph, device_of: Mapping[str, str], devices: Mapping[str, Device]
) -> dict[str, Any]:
    """``{"precision", "value", "why"}``: the rule the check of a run of ``graph`` placed by
    ``device_of`` on ``devices`` applies (see the module doc); ``value`` is None for fp32."""
    ran = sorted({device_of[n.id] for n in graph.nodes if n.id in device_of})
    at = {d: devices[d].precision for d in ran if d in devices}
    rule = coarsest(set(at.values()))
    half = [t for t in graph.outputs if t in graph.tensors and graph.tensors[t].dtype == "float16"]
    if half and coarsest({rule, FP16}) == FP16:
        rule = FP16
        why = f"the model's outputs are float16 ({', '.join(half)})"
    elif rule == FP32:
        return {"precision": FP32, "value": None, "why": FP32_RULE}
    else:
        on = [d for d in ran if at.get(d) == rule]
        why = f"{', '.join(on)} ran at {rule}"
    u = UNIT_ROUNDOFF[rule]
    return {
        "precision": rule,
        "value": TOLERANCE_U * u,
        "why": f"{why}: {TOLERANCE_U} u of {rule} (u = 2^{round(math.log2(u))})",
    }


def precisions_ran(device_of: Mapping[str, str], devices: Mapping[str, Device]) -> dict[str, str]:
    """The precision each device that ran a node ran at (spec §5's ``precision``)."""
    ran = dict.fromkeys(device_of.values())
    return {d: devices[d].precision for d in ran if d in devices}


def above(doc: Mapping[str, Any]) -> str | None:
    """Why a report's check is above its declared tolerance, or None (fp32 has none)."""
    tol = doc.get("tolerance") or {}
    err = doc.get("max_rel_err")
    if tol.get("value") is None or err is None or err <= tol["value"]:
        return None
    return (
        f"max_rel_err {err:.2e} is above the {tol['precision']} tolerance "
        f"{tol['value']:.2e} ({tol['why']})"
    )
