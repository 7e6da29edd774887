"""Chapter 5 exercises: node merging and the width K of HOPE's greedy search (Alg. 2)."""

from __future__ import annotations

from typing import Any

from hetlab.course.examples import partitiontuner_example, two_branch_dag
from hetlab.course.exercise import Exercise, Step, register
from hetlab.course.wrong import how_far
from hetlab.schedulers.base import schedule
from hetlab.schedulers.greedy import merge_superops

THRESHOLD = 1.2
KS = (1, 2, 3, 4)


def merge_expected() -> dict[str, Any]:
    p = partitiontuner_example()
    sops = [[p.nodes[i].id for i in s] for s in merge_superops(p, THRESHOLD)]
    short = sorted(
        n.id for n in p.nodes if max(c for c in n.cost.values() if c is not None) < THRESHOLD
    )
    return {"short": short, "superops": sops}


def _merge() -> Exercise:
    want = merge_expected()

    def short(answer: dict[str, Any]) -> str | None:
        got = sorted(answer["short"])
        return None if got == want["short"] else f"{got} are not the short operators"

    def superops(answer: dict[str, Any]) -> str | None:
        got = sorted(sorted(s) for s in answer["superops"])
        ok = got == sorted(sorted(s) for s in want["superops"])
        return None if ok else "some super-op is wrong"

    return Exercise(
        key="ch05.merge",
        title=f"node merging on PartitionTuner's example (threshold {THRESHOLD} ms)",
        hints=(
            (
                "An operator is short when its cost on every device that can run it is below the "
                "threshold."
            ),
            (
                "A short operator with exactly one predecessor joins its predecessor's super-op; "
                "every other operator is a super-op of its own. List all of them."
            ),
        ),
        steps=(Step("the short operators", short), Step("the super-ops", superops)),
        skeleton='answer = {"short": [...], "superops": [[...], ...]}',
        done="The merged pairs are the groups PartitionTuner fuses.",
    )


def k_expected() -> dict[str, Any]:
    p = two_branch_dag()
    makespan = {k: schedule(p, "greedy", k=k).makespan for k in KS}
    best = min(makespan.values())
    return {
        "maps": {k: len(p.devices) ** k for k in KS},
        "makespan": makespan,
        "best_k": min(k for k in KS if makespan[k] <= best + 1e-9),
    }


def _k() -> Exercise:
    want = k_expected()

    def maps(answer: dict[str, Any]) -> str | None:
        for k in KS:
            got = answer["maps"][k]
            if got != want["maps"][k]:
                return f"for K = {k}, {got} is {how_far(got, want['maps'][k])}"
        return None

    def best_k(answer: dict[str, Any]) -> str | None:
        got = answer["best_k"]
        if got == want["best_k"]:
            return None
        if got not in want["makespan"]:
            return f"K = {got} is not one of the widths tried, {', '.join(map(str, KS))}"
        if want["makespan"][got] > min(want["makespan"].values()) + 1e-9:
            return f"K = {got} does not reach the lowest makespan"
        return f"K = {got} reaches the lowest makespan, but a smaller K does too"

    return Exercise(
        key="ch05.k",
        title="the width K of the greedy search",
        hints=(
            "Each step tries every map of its K operators to the devices.",
            (
                "Each of the K operators picks one of the devices, independently of the others: "
                "count the combinations. For the best K, run "
                'schedule(problem, "greedy", k=k) for each K and take the smallest K that reaches '
                "the lowest makespan."
            ),
        ),
        steps=(
            Step("the device maps per step", maps),
            Step("the smallest K with the best makespan", best_k),
        ),
        skeleton='answer = {"maps": {1: ..., 2: ..., 3: ..., 4: ...}, "best_k": ...}',
        done="A wider K sees more at once, at |D|^K the cost per step.",
    )


register(_merge())
register(_k())
