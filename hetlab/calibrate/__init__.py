"""Calibration and prediction: what a run costs beyond the problem's op and link costs.

A layer above the executor: it runs plans (``executor.run``) to calibrate a problem's
unit boundaries (``boundary``, ``handoff``), concurrent units (``concurrency``) and a captured
graph's run (``graph_run``), and predicts a plan's run from a calibrated problem: ``predict``
(``prediction``), one event simulation with a named term per effect. ``profile`` is the
profiler's measurements (``profiling.profile``), then ``calibrate`` (those calibrations, as
a new Problem), ``run`` the executor's run with the
predictions added to its report: the two that ``hetlab.profile`` and ``hetlab.run`` are.
``program_key`` says whether two plans run the same program (``measured``, which times
``recommend``'s candidates); ``recommend_within`` is ``recommend`` over the devices'
precisions under an error budget.
"""

from hetlab.calibrate.measured import program_key
from hetlab.calibrate.prediction import Prediction, predict
from hetlab.calibrate.profile import calibrate, profile
from hetlab.calibrate.recommend import recommend
from hetlab.calibrate.recommend_precision import recommend_within
from hetlab.calibrate.report import run, with_predictions

__all__ = [
    "Prediction",
    "calibrate",
    "predict",
    "profile",
    "program_key",
    "recommend",
    "recommend_within",
    "run",
    "with_predictions",
]
