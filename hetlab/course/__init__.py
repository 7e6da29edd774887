"""The course's exercises (``check``, ``hint``) and its hand-sized example problems.

Each chapter's exercises live in ``hetlab/course/chNN.py`` and register themselves when the
package first looks them up, so a new chapter is one new module. Model answers are not here:
they live in the notebooks' build sources (``notebooks/build``), and only the instructor
edition (``python -m notebooks.build --instructor OUTDIR``) shows them.
"""

from __future__ import annotations

import importlib
import pkgutil

from hetlab.course.examples import (
    defaults,
    lookahead_dag,
    partitiontuner_example,
    small_dag,
    two_branch_dag,
)
from hetlab.course.exercise import (
    Exercise,
    Step,
    Verdict,
    check,
    exercise,
    exercises,
    hint,
    reset,
    show_answer,
    unlocked,
)
from hetlab.course.figures import hand_dag, levels
from hetlab.course.plans import INFO_KEYS, ilp_decided, optimum, plan_info, windows_solved

__all__ = [
    "INFO_KEYS",
    "Exercise",
    "Step",
    "Verdict",
    "check",
    "defaults",
    "exercise",
    "exercises",
    "hand_dag",
    "hint",
    "ilp_decided",
    "levels",
    "load_chapters",
    "lookahead_dag",
    "optimum",
    "partitiontuner_example",
    "plan_info",
    "reset",
    "show_answer",
    "small_dag",
    "two_branch_dag",
    "unlocked",
    "windows_solved",
]

_loaded = False


def load_chapters() -> None:
    """Import every ``chNN`` module of this package once (they register their exercises)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("ch"):
            importlib.import_module(f"{__name__}.{mod.name}")
