"""NN-Stretch: branch a sequential model for several devices. Weights of a stretched model are
fresh random: its accuracy needs retraining (out of scope).

``segments`` finds where a model can be branched and ``Constraints`` holds the paper's
constraints on a stretch; ``write`` writes a stretched model, ``branch_plan`` places it on
the devices (with ``estimated_problem`` and ``main_device``). ``adaptive_run`` runs a plan
adaptively (``AdaptiveConfig``), ``adaptive_figure`` draws its trace. The search over
stretches is ``hetlab stretch`` (and ``hetlab.course.stretch_search`` in the course)."""

from __future__ import annotations

from hetlab.lazy import lazy_names

# eager: a lazy ``segments`` would be shadowed by its module once that is imported
from hetlab.stretch.segments import Segment, segments

__all__ = [
    "AdaptiveConfig",
    "Constraints",
    "Segment",
    "adaptive_figure",
    "adaptive_run",
    "branch_plan",
    "estimated_problem",
    "main_device",
    "segments",
    "write",
]

# imported on first use: the search module runs the executor, ``write`` imports onnx and the
# figure plotly
_LAZY = {
    "Constraints": "hetlab.stretch.plan",
    "branch_plan": "hetlab.stretch.search",
    "estimated_problem": "hetlab.stretch.search",
    "main_device": "hetlab.stretch.search",
    "write": "hetlab.stretch.onnx_rewrite",
    "AdaptiveConfig": "hetlab.stretch.adaptive_trace",
    "adaptive_run": "hetlab.stretch.adaptive_report",
    "adaptive_figure": "hetlab.stretch.figure",
}


__getattr__ = lazy_names(__name__, _LAZY)
