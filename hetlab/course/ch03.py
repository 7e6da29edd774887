"""Chapter 3 exercise: HEFT's placement, EST and EFT by hand on ``small_dag``."""

from __future__ import annotations

from typing import Any

from hetlab.course.examples import small_dag
from hetlab.course.exercise import Exercise, Step, close_enough, register
from hetlab.course.wrong import early_or_late
from hetlab.schedulers.base import schedule
from hetlab.schedulers.ranks import priority_order, upward_rank


def heft_expected() -> dict[str, Any]:
    """HEFT's order, and each node's (device, EST, EFT) on the device it picks."""
    p = small_dag()
    plan = schedule(p, "heft")
    placed = {a.node: (a.device, a.start, a.finish) for a in plan.assignments}
    order = [p.nodes[v].id for v in priority_order(p, upward_rank(p))]
    return {"order": order, "placed": placed}


def _order_test(order: list[str]):
    def the_order(answer: dict[str, Any]) -> str | None:
        got = list(answer["order"])
        if got == order:
            return None
        if sorted(got) != sorted(order):
            return f"the order should hold each of the {len(order)} nodes once"
        i = next(i for i, (a, b) in enumerate(zip(got, order, strict=True)) if a != b)
        way = "early" if order.index(got[i]) > i else "late"
        return f"{got[i]} comes too {way} (decreasing rank_u, ties to the node that comes first)"

    return the_order


def _eft() -> Exercise:
    want = heft_expected()
    order = want["order"]

    def starts(answer: dict[str, Any]) -> str | None:
        for v in order:
            dev, est, _ = answer["placed"][v]
            if dev != want["placed"][v][0]:
                return f"{v}: compare its EFT on each device (HEFT keeps the least; ties: cpu)"
            if not close_enough(est, want["placed"][v][1], 1e-6):
                return f"EST of {v}: {est} is {early_or_late(est, want['placed'][v][1])}"
        return None

    def finishes(answer: dict[str, Any]) -> str | None:
        for v in order:
            got = answer["placed"][v][2]
            if not close_enough(got, want["placed"][v][2], 1e-6):
                return f"EFT of {v}: {got} is {early_or_late(got, want['placed'][v][2])}"
        return None

    nodes = "".join(f'        "{v}": (..., ..., ...),\n' for v in sorted(want["placed"]))
    return Exercise(
        key="ch03.eft",
        title="HEFT's EST and EFT on the small DAG",
        hints=(
            (
                "The order is by decreasing rank_u (chapter 1), ties to the node that comes first. "
                "EST(v, d) = the first time, from the latest finish of v's predecessors, at which "
                "d is idle long enough for v: HEFT may use a gap between two operators already "
                "on d (insertion). On the small DAG the gaps change nothing, so EST(v, d) = "
                "max(the time d becomes free, the latest finish of v's predecessors)."
            ),
            (
                "EFT(v, d) = EST(v, d) + the transfers of v's inputs that come from the other "
                "device (1 ms each) + cost(v, d); v goes to the device of least EFT (ties: cpu). "
                "Work out the EFT on both devices before you pick: where a node's predecessors "
                "are decides what it pays to receive its inputs."
            ),
        ),
        steps=(
            Step("the order", _order_test(order)),
            Step("the devices and start times", starts),
            Step("the finish times", finishes),
        ),
        skeleton=(
            "answer = {\n"
            '    "order": [...],  # the six nodes, in the order HEFT places them\n'
            "    # node: (device, EST, EFT) on the device HEFT picks\n"
            '    "placed": {\n'
            f"{nodes}"
            "    },\n"
            "}"
        ),
        done="The last EFT is HEFT's makespan; the simulator gives the same times.",
    )


register(_eft())
