"""Every HiGHS solver of a process shares one thread pool, sized by the first one that runs:
the DAG's layering (viz) drawn before an ILP must leave the ILP its optimum."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hetlab.schedulers.ilp_solver import have_highs

FIRST_THE_DAG_THEN_THE_ILP = """
from hetlab.schedulers import schedule
from hetlab.viz.layout import dag_layout
from tests.schedulers.helpers import golden
p = golden()
dag_layout(p)
print(schedule(p, "ilp", groups=True).makespan)
"""


@pytest.mark.skipif(not have_highs(), reason="HiGHS (highspy) is not installed")
def test_the_dag_drawn_first_leaves_the_ilp_its_optimum():
    out = subprocess.run(
        [sys.executable, "-c", FIRST_THE_DAG_THEN_THE_ILP],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert float(out.stdout.split()[-1]) == pytest.approx(12.5)  # PartitionTuner's Table 1


A_USERS_OWN_SOLVER_FIRST = """
import pulp
from hetlab.schedulers import schedule
from tests.schedulers.helpers import golden
m = pulp.LpProblem("mine", pulp.LpMinimize)
x = pulp.LpVariable("x", lowBound=0, upBound=4, cat="Integer")
m += -x
m.solve(pulp.HiGHS(msg=False, threads=2))  # a course's own ILP, on its own thread count
print(schedule(golden(), "ilp", groups=True).makespan)
"""


@pytest.mark.skipif(not have_highs(), reason="HiGHS (highspy) is not installed")
def test_a_users_own_highs_solver_first_leaves_the_ilp_its_optimum():
    out = subprocess.run(
        [sys.executable, "-c", A_USERS_OWN_SOLVER_FIRST],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert float(out.stdout.split()[-1]) == pytest.approx(12.5)
