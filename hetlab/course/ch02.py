"""Chapter 2 exercises: a link's transfer time, and OpSeq on PartitionTuner's example."""

from __future__ import annotations

from typing import Any

from hetlab.cost.datasets import load_measured_profile
from hetlab.course.examples import partitiontuner_example
from hetlab.course.exercise import Exercise, Step, Table, register
from hetlab.course.wrong import how_far
from hetlab.schedulers.sim import simulate

PLATFORM, MODEL, LINK = "xeon-2core-pocl", "squeezenet", "cpu0->cl0"


def transfer_expected() -> dict[str, float]:
    """The first edge's tensor size and its time under the fitted link model of ``LINK``."""
    p = load_measured_profile(PLATFORM, MODEL)
    nbytes = float(p.edges[0].bytes)
    return {"bytes": nbytes, "ms": p.comm[LINK].time(nbytes)}


def _near(name: str, want: float, rel: float):
    def test(answer: dict[str, Any]) -> str | None:
        got = float(answer[name])
        return None if abs(got - want) <= rel * abs(want) else f"{got:g} is {how_far(got, want)}"

    return test


def _transfer() -> Exercise:
    want = transfer_expected()
    return Exercise(
        key="ch02.transfer",
        title="a transfer under the link model",
        hints=(
            "A float32 element is 4 bytes; the shape is in the edge's extra['shapes'].",
            (
                "The link model is latency + bytes / bandwidth, with latency in ms and bandwidth "
                f"in bytes per ms: read both from problem.comm[{LINK!r}]."
            ),
        ),
        steps=(
            Step("the tensor's size in bytes", _near("bytes", want["bytes"], 1e-9)),
            Step("the transfer time in ms", _near("ms", want["ms"], 2e-3)),
        ),
        skeleton='answer = {"bytes": ..., "ms": ...}',
        done="Compare it with the time measured for this very tensor: edge.comm[LINK].",
    )


def opseq_expected() -> dict[str, Any]:
    p = partitiontuner_example()
    fastest = {
        n.id: min((d for d in p.devices if n.cost[d] is not None), key=lambda d: n.cost[d])
        for n in p.nodes
    }
    order = [p.nodes[i].id for i in p.topo]
    return {"device": fastest, "makespan": simulate(p, fastest, order, sequential=True).makespan}


def _opseq() -> Exercise:
    want = opseq_expected()

    def devices(answer: dict[str, Any]) -> str | None:
        wrong = Table(want["device"]).first_wrong(answer["device"])
        return None if wrong is None else f"{wrong} is faster elsewhere (or cannot run there)"

    return Exercise(
        key="ch02.opseq",
        title="OpSeq on PartitionTuner's example",
        hints=(
            "OpSeq puts each operator on its fastest device and runs one operator at a time.",
            (
                "An operator with no cost on a device cannot run there. One at a time, the "
                "makespan adds up the costs on the chosen devices (edges cost nothing here)."
            ),
        ),
        steps=(
            Step("the fastest devices", devices),
            Step("the makespan", _near("makespan", want["makespan"], 1e-9)),
        ),
        skeleton=(
            "answer = {\n"
            '    "device": {"v1": ..., "v2": ..., "v3": ..., "v4": ..., '
            '"v5": ..., "v6": ..., "v7": ..., "v8": ...},\n'
            '    "makespan": ...,\n'
            "}"
        ),
        done="Grouping and overlap (chapters 3-5) are how a scheduler beats it.",
    )


register(_transfer())
register(_opseq())
