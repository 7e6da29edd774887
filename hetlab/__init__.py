"""hetlab: profile, schedule and run one DL model across heterogeneous devices.

The public API: ``load`` a model, ``profile`` it on devices, ``schedule`` a plan,
``recommend`` the plan hetlab would pick, ``run`` a plan for real; the CLI, the workbench,
the notebooks and the benchmarks reach the library through these and the packages' own
faces (``hetlab.devices``, ``hetlab.schedulers``, ...). Re-exports only; each name is
imported lazily from its module.
"""

from __future__ import annotations

from hetlab.lazy import lazy_names
from hetlab.version import __version__ as __version__

__all__ = ["Plan", "Problem", "Workbench", "load", "profile", "recommend", "run", "schedule"]

_LAZY = {
    "load": "hetlab.graph",
    "profile": "hetlab.calibrate",
    "schedule": "hetlab.schedulers",
    "run": "hetlab.calibrate",
    "recommend": "hetlab.calibrate",
    "Workbench": "hetlab.widgets",
    "Problem": "hetlab.cost.problem",
    "Plan": "hetlab.schedulers.plan",
}


__getattr__ = lazy_names(__name__, _LAZY)
