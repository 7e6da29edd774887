"""Run a plan on real devices in parallel and measure it: units, interpreter, trace; the
inputs a run is fed and the check of its outputs against plain onnxruntime."""

from __future__ import annotations

from hetlab.devices.bound import BoundPlan, UnitSpec, build_units, check_plan
from hetlab.executor.api import RunReport, run
from hetlab.executor.check import load_inputs, max_rel_err, random_inputs, reference_outputs
from hetlab.executor.interpreter import Executor, RunError

__all__ = [
    "BoundPlan",
    "Executor",
    "RunError",
    "RunReport",
    "UnitSpec",
    "build_units",
    "check_plan",
    "load_inputs",
    "max_rel_err",
    "random_inputs",
    "reference_outputs",
    "run",
]
