"""The course's exercises (``check``, ``hint``) and its hand-sized example problems.

Each chapter's exercises live in ``hetlab/course/chNN.py`` and register themselves when the
package first looks them up, so a new chapter is one new module. Model answers are not here:
an instructor's copy keeps them beside the notebooks.
"""

from __future__ import annotations

import importlib
import pkgutil

from hetlab.course.examples import defaults, partitiontuner_example, small_dag, two_branch_dag
from hetlab.course.exercise import Exercise, Step, Verdict, check, exercise, exercises, hint, reset
from hetlab.course.figures import hand_dag, levels
from hetlab.course.plans import INFO_KEYS, optimum, plan_info

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
    "levels",
    "load_chapters",
    "optimum",
    "partitiontuner_example",
    "plan_info",
    "reset",
    "small_dag",
    "two_branch_dag",
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
