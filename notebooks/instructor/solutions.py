"""Model answers to the exercises of chapters 1-5, for instructors.

Student notebooks never import this file. ``SOLUTIONS`` maps an exercise key to the value a
student passes to ``check``; ``tests/course`` checks that each one passes and that each
unsolved skeleton fails. Other chapters keep theirs in ``solutions_chNN.py`` beside it.
"""

from __future__ import annotations

from typing import Any

from hetlab.cost.datasets import load_measured_profile


def _transfer() -> dict[str, float]:
    """The first edge of the 2-core VM's squeezenet profile over the cpu0 -> cl0 link."""
    problem = load_measured_profile("xeon-2core-pocl", "squeezenet")
    edge = problem.edges[0]
    n, c, h, w = (int(x) for x in edge.extra["shapes"].split(":")[0].split("x"))
    nbytes = 4 * n * c * h * w  # float32
    link = problem.comm["cpu0->cl0"]
    return {"bytes": nbytes, "ms": link.latency + nbytes / link.bandwidth}


def eq5(st_i, t_i, st_k, t_k, psi, M):
    """Both inequalities of HOPE's eq. 5, with >= for the paper's >."""
    return st_i >= st_k + t_k - psi * M and st_k >= st_i + t_i - (1 - psi) * M


SOLUTIONS: dict[str, Any] = {
    "ch01.level": {"A": 1, "B": 2, "C": 2, "D": 2, "E": 3, "F": 4},
    "ch01.rank_u": {
        "mean_cost": {"A": 2.5, "B": 2.5, "C": 2.5, "D": 2.5, "E": 3.0, "F": 1.5},
        "rank_u": {"A": 12.5, "B": 9.0, "C": 9.0, "D": 5.0, "E": 5.5, "F": 1.5},
    },
    "ch02.transfer": _transfer(),
    "ch02.opseq": {
        "device": {
            "v1": "cpu",
            "v2": "cpu",
            "v3": "npu",
            "v4": "npu",
            "v5": "cpu",
            "v6": "cpu",
            "v7": "cpu",
            "v8": "cpu",
        },
        "makespan": 1 + 2 + 2 + 2 + 1 + 1 + 1 + 5,
    },
    "ch03.eft": {
        "order": ["A", "B", "C", "E", "D", "F"],
        "placed": {
            "A": ("cpu", 0, 2),  # cpu 0+2 = 2 beats gpu 0+3
            "B": ("gpu", 2, 4),  # gpu 2+1(from A)+1 = 4 beats cpu 2+4 = 6
            "C": ("cpu", 2, 5),  # cpu 2+3 = 5 beats gpu max(4,2)+1+2 = 7
            "E": ("cpu", 5, 9),  # cpu 5+1(from B)+3 = 9 ties gpu 5+1(from C)+3: cpu
            "D": ("gpu", 4, 9),  # gpu 4+1(from A)+4 = 9 beats cpu 9+1 = 10
            "F": ("cpu", 9, 11),  # cpu 9+1(from D)+1 = 11 beats gpu 9+1(from E)+2 = 12
        },
    },
    "ch04.order": eq5,
    "ch04.partition": {
        "cut": 4,  # levels 1..4 hold 6 vertices <= 1.2 * 10 / 2, one vertex at level 4
        "parts": [["in", "a1", "b1"], ["a2", "b2", "a3"], ["cat", "c1", "c2", "out"]],
    },
    "ch05.merge": {
        "short": ["v5", "v7"],
        "superops": [["v1"], ["v2"], ["v3"], ["v4", "v5"], ["v6", "v7"], ["v8"]],
    },
    "ch05.k": {"maps": {1: 2, 2: 4, 3: 8, 4: 16}, "best_k": 2},
}
