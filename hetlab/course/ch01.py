"""Chapter 1 exercises: HOPE's level (eq. 8) and HEFT's rank_u on ``small_dag``."""

from __future__ import annotations

from typing import Any

from hetlab.course.examples import small_dag
from hetlab.course.exercise import Exercise, Step, Table, register
from hetlab.course.figures import levels
from hetlab.course.wrong import how_far
from hetlab.schedulers.ranks import mean_costs, upward_rank


def _by_id(values) -> dict[str, float]:
    p = small_dag()
    return {n.id: float(values[i]) for i, n in enumerate(p.nodes)}


def _reverse_topo() -> list[str]:
    p = small_dag()
    return [p.nodes[v].id for v in reversed(p.topo)]


def _table_test(want: dict[str, Any], order: list[str], key: str | None, explain):
    def test(answer: Any) -> str | None:
        got = answer[key] if key else answer
        wrong = Table(want, order=order).first_wrong(got)
        return None if wrong is None else explain(wrong, got.get(wrong), want[wrong])

    return test


def _levels_exercise() -> Exercise:
    want = levels(small_dag())
    sources = {v: 1 for v, r in want.items() if r == 1}
    return Exercise(
        key="ch01.level",
        title="HOPE's level (eq. 8) on the small DAG",
        hints=(
            "A source (no predecessor) has level 1.",
            (
                "Walk the DAG from A: each node's level is 1 + the largest level among its "
                "predecessors; F has two predecessors, D and E."
            ),
        ),
        steps=(
            Step("the sources", _table_test(sources, list(sources), None, _wrong("level"))),
            Step("the levels", _table_test(want, list(want), None, _wrong("level"))),
        ),
        skeleton='level = {"A": ..., "B": ..., "C": ..., "D": ..., "E": ..., "F": ...}',
        name="level",
        done="The level counts hops from the inputs and ignores every cost.",
    )


def _wrong(what: str):
    """``level of D: 3 is too high``: which value, which way it is off, not the right one."""
    return lambda v, got, want: f"{what} of {v}: {got} is {how_far(got, want)}"


def _rank_u_exercise() -> Exercise:
    order = _reverse_topo()
    w = _by_id(mean_costs(small_dag()))
    r = _by_id(upward_rank(small_dag()))
    return Exercise(
        key="ch01.rank_u",
        title="HEFT's rank_u on the small DAG",
        hints=(
            (
                "First the mean cost of each node over the two devices, e.g. "
                "w̄(A) = (2 + 3) / 2. rank_u starts at the exit: rank_u(F) = w̄(F)."
            ),
            (
                "Going backwards: rank_u(v) = w̄(v) + max over successors s of (c̄(v, s) + "
                "rank_u(s)), where c̄ = 1 ms is the mean transfer (1 ms either way). "
                "E.g. rank_u(E) = w̄(E) + 1 + rank_u(F)."
            ),
        ),
        steps=(
            Step(
                "the mean costs w̄",
                _table_test(w, order, "mean_cost", _wrong("w̄")),
            ),
            Step(
                "rank_u",
                _table_test(r, order, "rank_u", _wrong("rank_u")),
            ),
        ),
        skeleton=(
            "answer = {\n"
            '    "mean_cost": {"A": ..., "B": ..., "C": ..., "D": ..., "E": ..., "F": ...},\n'
            '    "rank_u": {"A": ..., "B": ..., "C": ..., "D": ..., "E": ..., "F": ...},\n'
            "}"
        ),
        done="rank_u is the costliest path from a node to the exit: it looks down, with costs.",
    )


register(_levels_exercise())
register(_rank_u_exercise())
