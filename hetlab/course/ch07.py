"""Chapter 7 exercise: HOPE Fig. 4's normalised latency, by hand on ``small_dag``."""

from __future__ import annotations

from typing import Any

from hetlab.course.ch06 import ORDER, PLAN
from hetlab.course.examples import small_dag
from hetlab.course.exercise import Exercise, Step, Table, register
from hetlab.course.wrong import how_far
from hetlab.schedulers.sim import simulate

TOL = 1e-3  # ratios may be typed rounded to three decimals


def expected() -> dict[str, Any]:
    """The quantities of the exercise, from the simulator."""
    p = small_dag()
    single = {d: simulate(p, dict.fromkeys(ORDER, d), ORDER).makespan for d in p.devices}
    mixed = simulate(p, PLAN, ORDER).makespan
    gpu = single["gpu"]
    return {
        "single": single,
        "normalized": {"cpu": single["cpu"] / gpu, "gpu": 1.0, "mixed": mixed / gpu},
        "gain": min(single.values()) / mixed - 1,
    }


def _table(part: str, what: str):
    def test(answer: Any) -> str | None:
        want = expected()[part]
        wrong = Table(want, tol=TOL).first_wrong(answer[part])
        if wrong is None:
            return None
        got = answer[part].get(wrong)
        return f"{what} of {wrong}: {got} is {how_far(got, want[wrong])}"

    return test


def _gain(answer: Any) -> str | None:
    want = expected()["gain"]
    got = float(answer["gain"])
    if abs(got - want) <= TOL:
        return None
    if abs(got - (want + 1)) <= TOL:
        return "that is the speed-up; the gain is the speed-up minus 1"
    return f"{got} is {how_far(got, want)}"


def _normalized_exercise() -> Exercise:
    return Exercise(
        key="ch07.normalized",
        title="normalised latency and the gain of a mixed plan",
        hints=(
            (
                "On one device there are no transfers and no waiting for the other device: "
                "the latency is the sum of the costs on that device."
            ),
            (
                "Fig. 4 divides every latency by the GPU-only latency, so GPU-only is 1. The "
                "mixed plan is chapter 6's exercise plan (B and E on the GPU): reuse its makespan."
            ),
            "The gain over the best single device is (best single latency / mixed latency) − 1.",
        ),
        steps=(
            Step("the single-device latencies", _table("single", "the latency")),
            Step("the normalised latencies", _table("normalized", "the normalised latency")),
            Step("the gain", _gain),
        ),
        skeleton=(
            "answer = {\n"
            '    "single": {"cpu": ..., "gpu": ...},  # ms\n'
            '    "normalized": {"cpu": ..., "gpu": ..., "mixed": ...},  # / GPU-only\n'
            '    "gain": ...,  # over the best single device, e.g. 0.5 for 50 %\n'
            "}"
        ),
        done="Fig. 4's bars are these ratios, one group per model and phone.",
    )


register(_normalized_exercise())
