"""The MIP solver behind each HOPE window (HiGHS through highspy, else CBC), and its result.

A window's model (``ilp_model``) is handed here with a MIP start; what comes back says whether
the solve proved optimality, hit its time limit, and whether the incumbent it returned after a
time limit is still that start (then the start heuristic, not the ILP, decided the window).
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass

import pulp

OPTIMAL = ("Optimal", "bound")  # statuses that prove the window's optimum (within the gap)


@dataclass
class WindowResult:
    """One window's decision: device and start per node, chosen fused groups, and how the
    solve ended. ``status``: ``Optimal``, ``bound`` (the MIP start meets a lower bound, so no
    MIP was needed), ``TimeLimit`` (best incumbent), or ``warm:<status>`` (no incumbent: the
    start is used)."""

    device: dict[int, int]
    start: dict[int, float]
    fused: list[int]  # indices into the window's groups that were chosen
    objective: float
    gap: float | None
    status: str
    seconds: float
    warm_objective: float = float("nan")

    @property
    def optimal(self) -> bool:
        return self.status in OPTIMAL

    @property
    def start_kept(self) -> bool:
        """The solve stopped short of optimality and returned its MIP start unchanged."""
        if self.optimal:
            return False
        return self.status.startswith("warm") or self.objective >= self.warm_objective - 1e-9


def solver(time_limit: float | None, gap_abs: float):
    """HiGHS through highspy when installed, else CBC, single-threaded. ``gap_abs`` is the
    absolute MIP gap in problem units (a share of the window's own work: a relative gap would
    measure against the whole prefix's length and grow along the graph)."""
    gap_abs = max(gap_abs, 1e-7)
    if have_highs():
        return _WarmHiGHS(
            msg=bool(os.environ.get("HETLAB_ILP_LOG")),
            timeLimit=time_limit,
            gapRel=1e-7,
            gapAbs=gap_abs,
            threads=1,
        )
    return pulp.PULP_CBC_CMD(
        msg=False, timeLimit=time_limit, gapRel=1e-7, gapAbs=gap_abs, warmStart=True, threads=1
    )


@functools.cache
def have_highs() -> bool:
    return "HiGHS" in pulp.listSolvers(onlyAvailable=True)


class _WarmHiGHS(pulp.HiGHS):  # type: ignore[misc,valid-type]
    """pulp's HiGHS with the variables' initial values passed as a MIP start."""

    def callSolver(self, lp):
        # lazy: highspy is optional and slow to import
        import highspy

        cols = lp.variables()
        if all(v.varValue is not None for v in cols):
            sol = highspy.HighsSolution()
            sol.col_value = [float(v.varValue) for v in sorted(cols, key=lambda v: v.index)]
            sol.value_valid = True
            lp.solverModel.setSolution(sol)
        super().callSolver(lp)

    def findSolutionValues(self, lp):
        """pulp's mapping, plus the node limit (which pulp does not know): an incumbent, if
        there is one, as after a time limit."""
        # lazy: highspy is optional and slow to import
        import highspy

        try:
            return super().findSolutionValues(lp)
        except KeyError:
            if lp.solverModel.getModelStatus() != highspy.HighsModelStatus.kSolutionLimit:
                raise
            if lp.solverModel.getInfo().primal_solution_status != 2:  # no feasible incumbent
                return pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound
            return pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible


def run(lp: pulp.LpProblem, time_limit: float | None, gap_abs: float) -> tuple[str, float | None]:
    """Solve ``lp``; returns (status, MIP gap or None). pulp reports a time limit with an
    incumbent as optimal, so HiGHS's own model status decides."""
    lp.solve(solver(time_limit, gap_abs))
    status = pulp.LpStatus[lp.status]
    gap = None
    model = getattr(lp, "solverModel", None)
    if model is not None and hasattr(model, "getInfo"):
        gap = float(model.getInfo().mip_gap)
        ms = str(model.getModelStatus())
        if "Optimal" not in ms:
            status = {"kTimeLimit": "TimeLimit", "kSolutionLimit": "NodeLimit"}.get(
                ms.split(".")[-1], ms.split(".")[-1]
            )
    if lp.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        status = "warm:" + status
    return status, gap


def elapsed(t0: float) -> float:
    return time.perf_counter() - t0
