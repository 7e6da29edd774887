"""Calibration and prediction: what a run costs beyond the problem's op and link costs.

A layer above the executor: it runs plans (``executor.run``) to calibrate a problem's
unit boundaries (``boundary``, ``handoff``) and concurrent units (``concurrency``), and
predicts a plan's end-to-end time from a calibrated problem (``predict``). ``run`` is the
executor's run with those predictions added to the report.
"""

from hetlab.calibrate.report import run, with_predictions

__all__ = ["run", "with_predictions"]
