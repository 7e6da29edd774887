"""Chapter 10: the streams of one GPU as devices, and when heterogeneity pays.

The measured figures come from the committed benchmark file ``gpu_queues.json`` of the
H200 host (``benchmarks/results/nvidia-h200-16core``; its README gives the date, the commit
and the command): nothing here needs a GPU, and no number is written by hand.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hetlab.cost.datasets import load_measured_profile
from hetlab.cost.problem import Problem
from hetlab.cost.queues import only_devices, queue_names, queues_pay, with_queues
from hetlab.cost.whatif import what_if
from hetlab.course.exercise import Exercise, Step, Table, register
from hetlab.course.wrong import how_far
from hetlab.errors import HetlabError
from hetlab.schedulers.base import schedule

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
HOST = "nvidia-h200-16core"
STREAMS = 4  # the benchmark's plans run over cuda0 and cuda0.q1-q3


def stream_results(host: str = HOST, name: str = "gpu_queues.json") -> dict[str, Any]:
    """The benchmark document of ``host`` (a checkout's ``benchmarks/results``)."""
    path = RESULTS / host / name
    if not path.exists():
        raise HetlabError(f"no {path.name} for {host}: the course reads it from a checkout")
    doc = json.loads(path.read_text())
    doc["_source"] = f"benchmarks/results/{host}/{name}"
    return doc


def _ms(row: dict[str, Any], key: str) -> float | None:
    v = row.get(key)
    if isinstance(v, dict):
        v = v.get("measured_ms")
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def stream_table(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per model: the measured medians (ms) of onnxruntime on the CPU, torch (eager
    and as a CUDA graph, where it converts), hetlab on one OpenCL queue, on one CUDA stream
    and over the streams (ilp, greedy, heft), the streams each plan used, the measured
    four-copy slowdown, and ilp's speed-up over one stream and over torch's best."""
    rows = []
    for r in doc["rows"]:
        torch = [t for t in (_ms(r, "torch_eager_ms"), _ms(r, "torch_graph_ms")) if t]
        one, ilp = _ms(r, "cuda0"), _ms(r, "ilp/streams")
        rows.append(
            {
                "model": r["model"],
                "nodes": r.get("nodes"),
                "onnxruntime CPU": _ms(r, "ort_cpu_ms"),
                "torch eager": _ms(r, "torch_eager_ms"),
                "torch CUDA graph": _ms(r, "torch_graph_ms"),
                "cl0 (1 queue)": _ms(r, "cl0"),
                "cuda0 (1 stream)": one,
                **{f"{a} (streams)": _ms(r, f"{a}/streams") for a in ("ilp", "greedy", "heft")},
                "streams used by ilp": len(r.get("ilp/streams", {}).get("devices", [])),
                "slowdown": r.get("streams", {}).get("slowdown"),
                "ilp vs 1 stream": one / ilp if one and ilp else None,
                "ilp vs torch": min(torch) / ilp if torch and ilp else None,
            }
        )
    return rows


def streams_problem(model: str, doc: dict[str, Any], platform: str = "h100-16core") -> Problem:
    """A shipped profile's GPU (``cl0``) with ``STREAMS - 1`` stream views: a node costs on a
    view its GPU cost times the model's measured slowdown, a tensor between two views costs
    the measured event wait. A model of the streams built from two measurements (the costs of
    one host, the slowdown of another), to show what the scheduler sees."""
    row = next((r for r in doc["rows"] if r["model"] == model), None)
    if row is None:
        raise HetlabError(f"no row for {model!r} in {doc.get('_source', 'the results')}")
    s = row["streams"]
    gpu = only_devices(load_measured_profile(platform, model), ["cl0"])
    views = queue_names("cl0", STREAMS)[1:]
    return with_queues(gpu, {"cl0": views}, float(s.get("event_ms", 0.0)), float(s["slowdown"]))


def speed_ratio(problem: Problem, slow: str, fast: str) -> float:
    """How many times faster ``fast`` runs the operators both can run (summed costs)."""
    m = problem.cost_matrix
    i, j = problem.dev_index[slow], problem.dev_index[fast]
    both = np.isfinite(m[:, i]) & np.isfinite(m[:, j])
    return float(m[both, i].sum() / m[both, j].sum())


def gain(problem: Problem, algos: Sequence[str] = ("heft", "peft")) -> float:
    """How much faster the best of ``algos`` is than the best single device (0: no gain)."""
    single = min(schedule(problem, f"single:{d}").makespan for d in problem.devices)
    return single / min([single] + [schedule(problem, a).makespan for a in algos]) - 1


def crossover(
    problem: Problem, slow: str, fast: str, ratios: Sequence[float], pays: float = 0.05
) -> dict[str, Any]:
    """The what-if gain of a mixed plan as ``fast`` is made ``r`` times faster than ``slow``,
    for each ``r`` of ``ratios``, and the range of ratios where it pays (gain >= ``pays``)."""
    r0 = speed_ratio(problem, slow, fast)
    gains = [gain(what_if(problem, {fast: r / r0})) for r in ratios]
    paying = [r for r, g in zip(ratios, gains, strict=True) if g >= pays]
    return {
        "measured_ratio": r0,
        "measured_gain": gain(problem),
        "ratios": list(ratios),
        "gains": gains,
        "pays_from": min(paying) if paying else None,
        "pays_until": max(paying) if paying else None,
    }


# the exercise: do four streams pay for these two models, by the measured slowdown?
PAY_MODELS = ("googlenet", "nasnet_large")


def pays_expected() -> dict[str, Any]:
    doc = stream_results()
    slow = {r["model"]: float(r["streams"]["slowdown"]) for r in doc["rows"]}
    return {
        "copies": {m: STREAMS / max(slow[m], 1.0) for m in PAY_MODELS},
        "pays": {m: queues_pay(slow[m], STREAMS) for m in PAY_MODELS},
    }


def _pays_exercise() -> Exercise:
    def copies(answer: Any) -> str | None:
        want = pays_expected()["copies"]
        wrong = Table(want, tol=0.01, order=list(PAY_MODELS)).first_wrong(answer["copies"])
        if wrong is None:
            return None
        got = answer["copies"][wrong]
        return f"{wrong}: {got} copies is {how_far(got, want[wrong])}"

    def pays(answer: Any) -> str | None:
        want = pays_expected()["pays"]
        for m in PAY_MODELS:
            if bool(answer["pays"][m]) != want[m]:
                return (
                    f"for {m}, {answer['pays'][m]} does not follow from its copies per unit of "
                    "time: compare them with the rule's threshold"
                )
        return None

    return Exercise(
        key="ch10.pays",
        title="do four streams pay?",
        hints=(
            (
                "The slowdown s is how much longer one copy of the model takes beside three "
                "others: four copies finish in s times one copy's time, so the streams run "
                "4 / s copies in the time of one. Read s from the table's `slowdown` column."
            ),
            "hetlab offers the streams to a plan when 4 / s >= 1.5 (`queues_pay`).",
        ),
        steps=(Step("the copies per unit of time", copies), Step("whether they pay", pays)),
        skeleton=(
            "answer = {\n"
            '    "copies": {"googlenet": ..., "nasnet_large": ...},  # 4 / slowdown\n'
            '    "pays": {"googlenet": ..., "nasnet_large": ...},  # True or False\n'
            "}"
        ),
        done=(
            "The rule asks more than 1 because a plan's branches overlap less than whole "
            "copies of the model do."
        ),
    )


register(_pays_exercise())
