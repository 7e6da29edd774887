"""Every baseline on one real HOPE phone profile (NASNet-large, 1049 ops, CPU + GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetlab.cost.problem import Problem
from hetlab.schedulers import schedule

# ../shared/hope-profiles next to the repository (or the shared folder of a worktree)
_DIRS = [Path(__file__).resolve().parents[3] / "shared", Path("/work/shared")]
FILE = (
    next((d for d in _DIRS if d.is_dir()), _DIRS[0])
    / "hope-profiles"
    / "nasnet-large-huawei_p40.json"
)

ALGOS = [
    "heft",
    "peft",
    "dmda",
    "dmdar",
    "mosaic",
    "overseer",
    "partitiontuner",
    "opseq",
    "typeseq",
    "single:cpu",
    "single:gpu",
]


@pytest.fixture(scope="module")
def problem() -> Problem:
    if not FILE.is_file():
        pytest.skip(f"{FILE} is missing (the shared HOPE profiles are not here)")
    return Problem.load(FILE)


@pytest.mark.parametrize("algo", ALGOS)
def test_real_profile_valid(problem, algo):
    """A valid plan on a real profile (solve times: benchmarks/schedulers.py)."""
    plan = schedule(problem, algo)
    assert len(plan.assignments) == len(problem.nodes)
    cost = problem.cost_matrix
    assert plan.makespan >= float(cost.min(axis=1).max())
    assert plan.makespan <= float(cost.min(axis=1).sum()) * 3  # not absurd either


def test_real_profile_parallel_beats_sequential(problem):
    # on this phone HEFT's CPU+GPU overlap beats running ops one at a time on the best device
    assert schedule(problem, "heft").makespan < schedule(problem, "opseq").makespan
    assert schedule(problem, "heft").makespan < schedule(problem, "single:gpu").makespan
