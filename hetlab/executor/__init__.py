"""Run a plan on real devices in parallel and measure it: units, interpreter, trace."""

from __future__ import annotations

from hetlab.executor.api import RunReport, run
from hetlab.executor.interpreter import Executor, RunError
from hetlab.executor.units import UnitSpec, build_units, check_plan

__all__ = ["Executor", "RunError", "RunReport", "UnitSpec", "build_units", "check_plan", "run"]
