"""How much work one ``ilp`` solve is, before it runs, and the node budget of each window.

A window's ILP grows with the square of its size (an order binary and its big-M rows per pair
of nodes that may share a device), and HiGHS's root node (presolve, LP, cuts), which the
node budget does not bound, grows faster still. So:

- ``window_node_limit``: a window larger than the default ``nt`` gets a node budget shrunk by
  the square of how much larger it is (``node_limit * (REF_NT / size)^2``, at least 1);
  windows of at most ``REF_NT`` nodes keep ``node_limit``, so plans at the default ``nt`` are
  those of the unscaled budget. The budget stays work, so a plan stays a function of its
  input.
- ``estimate``: the model rows of every window, counted without building it, and a rough
  time for the whole solve on a two-core machine (``SECONDS_PER_ROW2`` per squared row of each
  window), against ``BUDGET_S``; ``WorkEstimate.line`` is one line saying why a setting does
  not fit and which ``nt`` would. The constant comes from one loaded two-core VM and is an
  order of magnitude, not a promise (docs/decisions.md#ilp-work-budget);
- ``solve_line``: after a solve, one line when it took longer than the budget here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.schedulers.partition import partition

REF_NT = 12  # the default nt: windows up to this size keep the whole node budget
BUDGET_S = 3.0  # one solve per slider move, on two cores
SECONDS_PER_ROW2 = 3.5e-6  # rough: googlenet's windows at nt=20 on a loaded 2-core VM


def window_node_limit(node_limit: int | None, size: int) -> int | None:
    """The node budget of a window of ``size`` nodes (None: no limit)."""
    if node_limit is None or size <= REF_NT:
        return node_limit
    return max(1, int(node_limit * (REF_NT / size) ** 2))


@dataclass
class WorkEstimate:
    """One ``ilp`` solve's size: its windows, the largest, the rows of the largest window's
    model, the rough seconds on two cores and the budget they are held against."""

    nt: int
    windows: int
    largest: int
    rows_max: int
    seconds: float
    budget_s: float = BUDGET_S
    fits_nt: int | None = None  # the largest nt within the budget, when this one is not

    @property
    def within(self) -> bool:
        return self.seconds <= self.budget_s

    def line(self) -> str:
        """One line for a user: empty when within the budget."""
        if self.within:
            return ""
        hint = f"; nt={self.fits_nt} fits" if self.fits_nt else ""
        return (
            f"ILP at nt={self.nt}: about {self.seconds:.0f} s on two cores ({self.windows} "
            f"windows, the largest {self.largest} nodes), over the {self.budget_s:g} s "
            f"budget per move{hint}"
        )


def window_rows(problem: Problem, W: list[int]) -> int:
    """The rows ``ilp_model`` builds for window ``W`` (nodes in topological order), counted:
    eqs. 1-3 and 6 per node, the flow rows of each in-window edge, eqs. 4-5 per pair that
    may clash, and the load cuts."""
    pos = {v: i for i, v in enumerate(W)}
    allowed = [set(np.flatnonzero(np.isfinite(problem.cost_matrix[v])).tolist()) for v in W]
    occ = problem.occupancy
    reach = [0] * len(W)
    rows = 0
    for i in range(len(W) - 1, -1, -1):
        for w, _ in problem.succs[W[i]]:
            if w in pos:
                reach[i] |= reach[pos[w]] | (1 << pos[w])
                rows += len(allowed[i]) + len(allowed[pos[w]])
        rows += 4 + len(problem.preds[W[i]]) + len(allowed[i])
    for i in range(len(W)):
        near = allowed[i] if occ is None else {c for d in allowed[i] for c in occ[d]}
        for j in range(i + 1, len(W)):
            if not (reach[i] >> j) & 1 and near & allowed[j]:
                rows += 3 + len(allowed[i])
    return rows


def estimate(
    problem: Problem, nt: int, epsilon: float | None = None, passes: int = 0
) -> WorkEstimate:
    """The work of ``ilp`` on ``problem`` at ``nt`` (and ``epsilon``), without solving it;
    ``passes``: ``ilp+``'s guided passes, each about one more HOPE pass (its local search,
    bounded by the clock, is not counted)."""
    parts = partition(problem, nt, epsilon)
    rows = [window_rows(problem, w) for w in parts]
    est = WorkEstimate(
        nt=nt,
        windows=len(parts),
        largest=max((len(w) for w in parts), default=0),
        rows_max=max(rows, default=0),
        seconds=round((1 + passes) * SECONDS_PER_ROW2 * sum(r * r for r in rows), 2),
    )
    if not est.within:
        est.fits_nt = next(
            (k for k in range(nt - 1, 0, -1) if _seconds(problem, k, epsilon, passes) <= BUDGET_S),
            None,
        )
    return est


def _seconds(problem: Problem, nt: int, epsilon: float | None, passes: int) -> float:
    rows = [window_rows(problem, w) for w in partition(problem, nt, epsilon)]
    return (1 + passes) * SECONDS_PER_ROW2 * sum(r * r for r in rows)


def solve_line(plan) -> str:
    """After a solve: one line when an ``ilp``/``ilp+`` plan (``schedulers.plan.Plan``) took
    longer than ``BUDGET_S`` (its ``solve_s``, on this machine), else empty."""
    took = plan.extra.get("solve_s")
    if took is None or took <= BUDGET_S:
        return ""
    nt = plan.params.get("nt", "?")
    return f"ILP at nt={nt} took {took:.1f} s, over the {BUDGET_S:g} s budget per move"
