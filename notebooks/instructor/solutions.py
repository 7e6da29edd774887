"""Model answers to the exercises of chapters 1-5, for instructors.

Student notebooks never import this file. ``SOLUTIONS`` maps an exercise key to the value a
student passes to ``check``; ``tests/course`` checks that each one passes and that each
unsolved skeleton fails. Other chapters keep theirs in ``solutions_chNN.py`` beside it.
"""

from __future__ import annotations

from typing import Any

SOLUTIONS: dict[str, Any] = {
    "ch01.level": {"A": 1, "B": 2, "C": 2, "D": 2, "E": 3, "F": 4},
    "ch01.rank_u": {
        "mean_cost": {"A": 2.5, "B": 2.5, "C": 2.5, "D": 2.5, "E": 3.0, "F": 1.5},
        "rank_u": {"A": 12.5, "B": 9.0, "C": 9.0, "D": 5.0, "E": 5.5, "F": 1.5},
    },
}
