"""Chapter 8: NN-Stretch on a hand-sized segment, and its exercise (eqs. 4 and 6).

A segment of ``blocks`` equal blocks (``flops`` MFLOP in all) runs on a CPU or a GPU of given
throughput (MFLOP per ms, i.e. GFLOP/s). Stretched, it becomes one branch per device, each
with half the blocks and a FLOP share proportional to its device's throughput (eq. 6); the
meeting points send the input to the CPU's branch and its output back (``comm`` ms in all).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hetlab.cost.problem import PEdge, PNode, Problem
from hetlab.course.exercise import Exercise, Step, Table, register
from hetlab.course.wrong import how_far

# the exercise's segment: 160 MFLOP in 4 blocks; 0.2 ms to send its input, 0.3 ms to get
# the CPU branch's output back; alpha of eq. 4
EXERCISE = {"flops": 160.0, "blocks": 4, "throughput": {"cpu": 30.0, "gpu": 50.0}}
EXERCISE_COMM = {"send input": 0.2, "return output": 0.3}
ALPHA = 0.1


def stretch_numbers(
    flops: float, throughput: Mapping[str, float], comm: float, alpha: float = ALPHA
) -> dict[str, Any]:
    """Eq. 6's branch FLOPs, each branch's latency, the stretched segment's latency (the
    slowest branch plus the meeting points' transfers) and whether eq. 4 holds."""
    total = sum(throughput.values())
    share = {d: flops * t / total for d, t in throughput.items()}
    branch = {d: share[d] / throughput[d] for d in throughput}
    fastest = min(flops / t for t in throughput.values())
    return {
        "flops": share,
        "branch_ms": branch,
        "stretched_ms": max(branch.values()) + comm,
        "eq4": comm <= alpha * fastest,
    }


def segment(flops: float, blocks: int, throughput: Mapping[str, float]) -> Problem:
    """The original segment: a chain of ``blocks`` equal blocks, costs on each device."""
    per = flops / blocks
    nodes = [
        PNode(f"b{i + 1}", {d: per / t for d, t in throughput.items()}, "Block")
        for i in range(blocks)
    ]
    edges = [PEdge(f"b{i}", f"b{i + 1}", 0.0) for i in range(1, blocks)]
    return Problem("segment", list(throughput), nodes, edges)


def stretched(
    flops: float, blocks: int, throughput: Mapping[str, float], comm: Mapping[str, float]
) -> tuple[Problem, dict[str, str]]:
    """The stretched segment (a fork, one branch of ``blocks // 2`` blocks per device with its
    eq. 6 share, a join) and its placement: each branch on its device, fork and join on the
    fastest device."""
    nums = stretch_numbers(flops, throughput, sum(comm.values()))
    main = max(throughput, key=throughput.get)
    half = max(1, blocks // 2)
    zero = dict.fromkeys(throughput, 0.0)
    nodes = [PNode("fork", dict(zero), "Split"), PNode("join", dict(zero), "Concat")]
    edges: list[PEdge] = []
    place = {"fork": main, "join": main}
    send, back = comm.get("send input", 0.0), comm.get("return output", 0.0)
    for d in throughput:
        per = nums["flops"][d] / half
        prev = "fork"
        for i in range(half):
            v = f"{d}{i + 1}"
            nodes.append(PNode(v, {e: per / t for e, t in throughput.items()}, "Block"))
            place[v] = d
            t = send if prev == "fork" else 0.0
            edges.append(PEdge(prev, v, 0.0, _both(throughput, t)))
            prev = v
        edges.append(PEdge(prev, "join", 0.0, _both(throughput, back)))
    return Problem("stretched", list(throughput), nodes, edges), place


def _both(throughput: Mapping[str, float], t: float) -> dict[str, float]:
    return {f"{a}->{b}": t for a in throughput for b in throughput if a != b}


def _table(part: str, what: str):
    def test(answer: Any) -> str | None:
        want = _expected()[part]
        wrong = Table(want, tol=1e-3).first_wrong(answer[part])
        if wrong is None:
            return None
        got = answer[part].get(wrong)
        return f"{what} on {wrong}: {got} is {how_far(got, want[wrong])}"

    return test


def _expected() -> dict[str, Any]:
    return stretch_numbers(EXERCISE["flops"], EXERCISE["throughput"], sum(EXERCISE_COMM.values()))


def _latency(answer: Any) -> str | None:
    want = _expected()["stretched_ms"]
    got = float(answer["stretched_ms"])
    if abs(got - want) <= 1e-3:
        return None
    if abs(got - (want - sum(EXERCISE_COMM.values()))) <= 1e-3:
        return "the branches meet: add the transfers at the meeting points"
    return f"{got} ms is {how_far(got, want)}"


def _eq4(answer: Any) -> str | None:
    if not isinstance(answer["eq4"], bool):
        return "answer True or False"
    if answer["eq4"] is not _expected()["eq4"]:
        return "compare the meeting points' transfers with α × the segment on its fastest device"
    return None


def _balance_exercise() -> Exercise:
    return Exercise(
        key="ch08.balance",
        title="stretching a segment over a CPU and a GPU",
        hints=(
            (
                "Eq. 6: each branch gets a share of the segment's FLOPs proportional to its "
                "device's throughput: its throughput over the sum of both."
            ),
            (
                "A branch's latency is its FLOPs / its device's throughput. The stretched "
                "segment ends when its slowest branch ends, plus the meeting points' transfers."
            ),
            (
                "Eq. 4 holds when the meeting points' transfers are at most α = 0.1 times the "
                "original segment's latency on its fastest device (160 / 50 ms)."
            ),
        ),
        steps=(
            Step("the branch FLOPs", _table("flops", "the FLOPs")),
            Step("the branch latencies", _table("branch_ms", "the latency")),
            Step("the stretched latency", _latency),
            Step("eq. 4", _eq4),
        ),
        skeleton=(
            "answer = {\n"
            '    "flops": {"cpu": ..., "gpu": ...},  # MFLOP per branch\n'
            '    "branch_ms": {"cpu": ..., "gpu": ...},\n'
            '    "stretched_ms": ...,\n'
            '    "eq4": ...,  # True or False\n'
            "}"
        ),
        done=(
            "Faster than the GPU alone, yet eq. 4 fails: the transfers are too large a part "
            "of so short a segment, so NN-Stretch merges it with the next one."
        ),
    )


register(_balance_exercise())
