"""The MIP solver behind each HOPE window (HiGHS through highspy, else CBC), and its result.

A window's model (``ilp_model``) is handed here with a MIP start and a ``Budget``. The budget
is work, not time: branch-and-bound nodes (HiGHS ``mip_max_nodes``), on one thread with a
fixed random seed, so the same window gets the same answer on any machine and under any load.
The wall-clock limit is only a safety net; a window it stops is reported as such
(``TimeLimit``), since what it returns then depends on the machine's speed.
"""

from __future__ import annotations

import functools
import math
import os
import time
from dataclasses import dataclass

import pulp

from hetlab.errors import HetlabError
from hetlab.schedulers.highs import THREADS, reset_thread_pool, without_banner

OPTIMAL = ("Optimal", "bound")  # statuses that prove the window's optimum (within the gap)
SEED = 0  # HiGHS random_seed: fixed, so that one budget gives one answer
HIGHS_STOPS = {"kTimeLimit": "TimeLimit", "kSolutionLimit": "NodeLimit"}


@dataclass(frozen=True)
class Budget:
    """What one window's solve may spend: B&B nodes (None: no limit), the wall-clock safety
    net in seconds (None: none) and the absolute MIP gap in problem units."""

    nodes: int | None = None
    seconds: float | None = None
    gap_abs: float = 0.0


@dataclass
class WindowResult:
    """One window's decision: device and start per node, chosen fused groups, and how the
    solve ended. ``status``: ``Optimal``, ``bound`` (the MIP start meets a lower bound, so no
    MIP was needed), ``NodeLimit`` (the node budget: best incumbent), ``TimeLimit`` (the
    safety net: best incumbent), or ``warm:<status>`` (no incumbent from the ILP: the start is
    used). ``gap`` is HiGHS's relative gap, None without an incumbent."""

    device: dict[int, int]
    start: dict[int, float]
    fused: list[int]  # indices into the window's groups that were chosen
    objective: float
    gap: float | None
    status: str
    seconds: float
    warm_objective: float = float("nan")
    nodes: int = 0  # branch-and-bound nodes the solve took

    @property
    def optimal(self) -> bool:
        return self.status in OPTIMAL

    @property
    def no_incumbent(self) -> bool:
        """The ILP ended without a feasible solution of its own (its start was used)."""
        return self.status.startswith("warm")

    @property
    def clock_stopped(self) -> bool:
        """The wall-clock safety net, not the work budget, ended the solve."""
        return self.status.removeprefix("warm:") == "TimeLimit"

    @property
    def start_kept(self) -> bool:
        """The solve stopped short of optimality and returned its MIP start unchanged."""
        if self.optimal:
            return False
        return self.no_incumbent or self.objective >= self.warm_objective - 1e-9


def solver(budget: Budget):
    """HiGHS through highspy when installed, else CBC; single-threaded, seeded. The absolute
    MIP gap is a share of the window's own work (a relative gap would measure against the
    whole prefix's length and grow along the graph)."""
    gap_abs = max(budget.gap_abs, 1e-7)
    if have_highs():
        extra = {} if budget.nodes is None else {"mip_max_nodes": int(budget.nodes)}
        return _WarmHiGHS(
            msg=bool(os.environ.get("HETLAB_ILP_LOG")),
            timeLimit=budget.seconds,
            gapRel=1e-7,
            gapAbs=gap_abs,
            threads=THREADS,
            random_seed=SEED,
            **extra,
        )
    return pulp.PULP_CBC_CMD(
        msg=False,
        timeLimit=budget.seconds,
        gapRel=1e-7,
        gapAbs=gap_abs,
        warmStart=True,
        threads=1,
        maxNodes=budget.nodes,
        options=[f"randomSeed {SEED + 1}", f"randomCbcSeed {SEED + 1}"],
    )


@functools.cache
def have_highs() -> bool:
    return "HiGHS" in pulp.listSolvers(onlyAvailable=True)


class _WarmHiGHS(pulp.HiGHS):  # type: ignore[misc,valid-type]
    """pulp's HiGHS with the variables' initial values passed as a MIP start."""

    def createAndConfigureSolver(self, lp):
        without_banner()
        super().createAndConfigureSolver(lp)

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


def run(lp: pulp.LpProblem, budget: Budget) -> tuple[str, float | None, int]:
    """Solve ``lp``; returns (status, MIP gap or None, B&B nodes). pulp reports a stop with an
    incumbent as optimal, so HiGHS's own model status decides. A solve HiGHS refuses because
    another solver of the process (a user's own pulp model) sized its thread pool first is
    run again once on a fresh pool."""
    lp.solve(solver(budget))
    if model_status(lp) == "kNotset":
        reset_thread_pool()
        lp.solve(solver(budget))
    status = pulp.LpStatus[lp.status]
    gap, nodes = None, 0
    model = getattr(lp, "solverModel", None)
    if model is not None and hasattr(model, "getInfo"):
        info = model.getInfo()
        gap = float(info.mip_gap) if math.isfinite(info.mip_gap) else None
        nodes = int(info.mip_node_count)
        ms = model_status(lp)
        if ms == "kNotset":  # HiGHS refused to run: its start must not pass for a solve
            raise HetlabError(
                "HiGHS did not solve an ILP window (set HETLAB_ILP_LOG=1 to see its message)"
            )
        if "Optimal" not in ms:
            status = HIGHS_STOPS.get(ms, ms)
    if lp.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        status, gap = "warm:" + status, None
    return status, gap, nodes


def model_status(lp: pulp.LpProblem) -> str | None:
    """HiGHS's model status of the last solve (e.g. ``kOptimal``); None under CBC."""
    model = getattr(lp, "solverModel", None)
    if model is None or not hasattr(model, "getModelStatus"):
        return None
    return str(model.getModelStatus()).split(".")[-1]


def elapsed(t0: float) -> float:
    return time.perf_counter() - t0
