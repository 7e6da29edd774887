"""The course's exercises (``check``, ``hint``), its hand-sized example problems and the
helpers its chapters call: the notebooks import this face only, never its modules.

Each chapter's exercises live in ``hetlab/course/chNN.py`` and register themselves when the
package first looks them up, so a new chapter is one new module. Model answers are not here:
they live in the notebooks' build sources (``notebooks/build``), and only the instructor
edition (``python -m notebooks.build --instructor OUTDIR``) shows them.
"""

from __future__ import annotations

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
    load_chapters,
    reset,
    show_answer,
    unlocked,
)
from hetlab.course.figures import hand_dag, levels
from hetlab.course.plans import INFO_KEYS, ilp_decided, optimum, plan_info, windows_solved
from hetlab.lazy import lazy_names

__all__ = [
    "INFO_KEYS",
    "ORDER",
    "PLAN",
    "Exercise",
    "Step",
    "Verdict",
    "check",
    "cpu_pair",
    "critical_path",
    "crossing_plan",
    "crossings",
    "crossover",
    "defaults",
    "devices_to_run",
    "exercise",
    "exercises",
    "hand_dag",
    "hand_gantt",
    "hint",
    "ilp_decided",
    "levels",
    "load_chapters",
    "lookahead_dag",
    "measured_or_shipped",
    "optimum",
    "partitiontuner_example",
    "plan_info",
    "profile_here",
    "quiet_solver",
    "reset",
    "runnable_here",
    "segment",
    "show_answer",
    "slack",
    "small_dag",
    "stream_results",
    "stream_table",
    "streams_problem",
    "stretch_numbers",
    "stretch_search",
    "stretched",
    "two_branch_dag",
    "unlocked",
    "windows_solved",
]

# the chapters' helpers, imported on first use: a chapter's module registers its exercises,
# and the cells that measure this machine load the devices
_LAZY = {
    "PLAN": "hetlab.course.ch06",
    "ORDER": "hetlab.course.ch06",
    "critical_path": "hetlab.course.ch06",
    "slack": "hetlab.course.ch06",
    "hand_gantt": "hetlab.course.ch06",
    "quiet_solver": "hetlab.course.ch04",
    "segment": "hetlab.course.ch08",
    "stretch_numbers": "hetlab.course.ch08",
    "stretched": "hetlab.course.ch08",
    "stream_results": "hetlab.course.ch10",
    "stream_table": "hetlab.course.ch10",
    "streams_problem": "hetlab.course.ch10",
    "crossover": "hetlab.course.ch10",
    "measured_or_shipped": "hetlab.course.live",
    "crossings": "hetlab.course.run_live",
    "crossing_plan": "hetlab.course.run_live",
    "devices_to_run": "hetlab.course.run_live",
    "profile_here": "hetlab.course.run_live",
    "cpu_pair": "hetlab.course.stretch_live",
    "runnable_here": "hetlab.course.stretch_live",
    "stretch_search": "hetlab.course.stretch_live",
}

__getattr__ = lazy_names(__name__, _LAZY)
