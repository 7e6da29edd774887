"""Chapter 4 exercises: HOPE's ordering constraint (eq. 5) and its partition (Algorithm 1)."""

from __future__ import annotations

import itertools
from typing import Any

from hetlab.course.examples import two_branch_dag
from hetlab.course.exercise import Exercise, Step, register
from hetlab.course.wrong import how_far
from hetlab.schedulers.highs import without_banner
from hetlab.schedulers.partition import bisect, partition

M = 100.0
# (st_i, t_i, st_k, t_k): pairs of intervals on one device, overlapping or not
CASES = [(0, 2, 2, 3), (5, 1, 0, 5), (0, 3, 1, 2), (4, 2, 3, 2), (0, 1, 3, 1), (2, 2, 2, 2)]


def _unless_unfinished(f):
    """The function itself, or None while its body is still ``...`` (it returns None)."""
    return None if f(0, 1, 1, 1, 0, M) is None else f


def _order_exercise() -> Exercise:
    def after(i_first: bool):
        psi = 1 if i_first else 0

        def test(eq5) -> str | None:
            for st_i, t_i, st_k, t_k in CASES:
                want = st_k >= st_i + t_i if i_first else st_i >= st_k + t_k
                if bool(eq5(st_i, t_i, st_k, t_k, psi, M)) != want:
                    return (
                        f"with ψ = {psi}, st_i={st_i}, t_i={t_i}, st_k={st_k}, t_k={t_k} "
                        f"should be {'feasible' if want else 'infeasible'}"
                    )
            return None

        return test

    def disjoint(eq5) -> str | None:
        for st_i, t_i, st_k, t_k in itertools.product(range(4), (1, 2), range(4), (1, 2)):
            apart = st_i + t_i <= st_k or st_k + t_k <= st_i
            some = any(eq5(st_i, t_i, st_k, t_k, psi, M) for psi in (0, 1))
            if some != apart:
                return (
                    f"intervals [{st_i}, {st_i + t_i}] and [{st_k}, {st_k + t_k}] "
                    f"{'do not overlap' if apart else 'overlap'}, but some ψ says otherwise"
                )
        return None

    return Exercise(
        key="ch04.order",
        title="the ordering constraint (eq. 5)",
        hints=(
            "Return True when both inequalities of eq. 5 hold (use >= for the paper's >).",
            (
                "Each inequality says 'one starts after the other ends', minus a multiple of M. "
                "M is so large that subtracting it makes an inequality hold whatever the starts: "
                "ψ decides which of the two is switched off, so exactly one order is enforced."
            ),
        ),
        steps=(
            Step("ψ = 0 (v_i after v_k)", after(False)),
            Step("ψ = 1 (v_k after v_i)", after(True)),
            Step("one ψ fits exactly the non-overlapping pairs", disjoint),
        ),
        skeleton=(
            "def eq5(st_i, t_i, st_k, t_k, psi, M):\n"
            '    """True when v_i and v_k, on one device, satisfy both inequalities of eq. 5."""\n'
            "    ..."
        ),
        name="eq5",
        call=_unless_unfinished,
        done="The solver picks ψ; M must exceed any start time, or a feasible order is cut.",
    )


NT, EPS = 4, 0.2


def quiet_solver() -> Any:
    """The PuLP solver for the chapter's own ILP: HiGHS with no log and no banner (HiGHS
    prints one when the process makes its first solver, whatever ``msg`` says), else CBC."""
    # lazy: pulp is slow to import and only the chapter's own ILP needs it
    import pulp

    if "HiGHS" in pulp.listSolvers(onlyAvailable=True):
        without_banner()
        return pulp.HiGHS(msg=False)
    return pulp.PULP_CBC_CMD(msg=False)


def partition_expected() -> dict[str, Any]:
    p = two_branch_dag()
    v0, _, _ = bisect(list(p.topo), p.preds, EPS)
    level = {}
    for v in p.topo:
        level[v] = 1 + max((level[u] for u, _ in p.preds[v]), default=0)
    parts = [[p.nodes[i].id for i in part] for part in partition(p, NT, EPS)]
    return {"cut": max(level[v] for v in v0), "parts": parts}


def _partition_exercise() -> Exercise:
    want = partition_expected()

    def cut(answer: dict[str, Any]) -> str | None:
        got = answer["cut"]
        return None if got == want["cut"] else f"level {got} is {how_far(got, want['cut'])}"

    def parts(answer: dict[str, Any]) -> str | None:
        got = [list(x) for x in answer["parts"]]
        if sorted(map(sorted, got)) != sorted(map(sorted, want["parts"])):
            return f"{got} are not Algorithm 1's subgraphs"
        return (
            None
            if [set(x) for x in got] == [set(x) for x in want["parts"]]
            else ("right subgraphs, but list them in the order they run")
        )

    return Exercise(
        key="ch04.partition",
        title=f"Algorithm 1 on the two-branch DAG (NT = {NT}, ε = {EPS})",
        hints=(
            (
                "Count the vertices at each level, and their running total acc[r]. A cut at r is "
                "balanced when max(acc[r], |V| - acc[r]) <= (1 + ε)|V|/2; among balanced cuts take "
                "the level with the fewest vertices (the vertex cut)."
            ),
            (
                f"The first cut is over all 10 vertices, so the limit is {(1 + EPS) * 5:g}. "
                f"Then cut again each part with more than NT = {NT} vertices, with levels "
                "recounted inside the part."
            ),
        ),
        steps=(Step("the first cut's level", cut), Step("the subgraphs", parts)),
        skeleton='answer = {"cut": ..., "parts": [[...], ...]}',
        done="Each subgraph becomes one ILP, solved in this order.",
    )


register(_order_exercise())
register(_partition_exercise())
