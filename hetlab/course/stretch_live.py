"""Chapter 8 on a real model: NN-Stretch's search from this machine's measured throughput, or
from a shipped profile when this machine gives no usable result.

The search needs each device's throughput. Measured here, it can leave nothing to branch:
on a fast CPU every segment is so short that its transfers break eq. 4, and on two very
unequal core groups (one busy with other work) eq. 5 fails. The chapter then stretches for
the throughput of the 2-core machine the course ships a profile of, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hetlab.cost.datasets import load_measured_profile
from hetlab.course.live import MEASUREMENT_ERRORS, fallback_note
from hetlab.graph.ir import OpGraph
from hetlab.stretch.search import Candidate, costs_from_problem, measure_costs, search
from hetlab.stretch.transform import Constraints, CostModel

SHIPPED = ("xeon-2core-pocl", "squeezenet")


@dataclass
class Stretch:
    """The search's winner, its table of candidates, the cost model it used, the devices it
    stretched for, and where the costs came from (``"measured"`` or a shipped profile)."""

    best: Candidate
    rows: list[dict[str, Any]]
    costs: CostModel
    pair: list[str]
    source: str


def cpu_pair(devices: Mapping[str, Any]) -> list[str]:
    """The first two CPU groups of this machine (fewer when it has fewer)."""
    return [d for d in devices if d.startswith("cpu")][:2]


def stretch_search(
    g: OpGraph,
    devices: Mapping[str, Any],
    pair: Sequence[str],
    constraints: Constraints,
    repeat: int = 1,
) -> Stretch:
    """NN-Stretch's search for ``g`` on ``pair``, from throughput measured on this machine;
    when that fails or leaves no segment to branch, from the shipped profile's throughput
    (on its own CPU groups), after one printed line that says why."""
    pair = list(pair)
    try:
        if len(pair) < 2:
            raise ValueError(f"this machine has {len(pair)} CPU group(s), the search needs two")
        cm = measure_costs(g, devices, pair, repeat=repeat)
        best, rows = search(g, pair, cm, constraints)
        return Stretch(best, rows, cm, pair, "measured")
    except MEASUREMENT_ERRORS as e:  # no usable measurement: the shipped profile stands in
        why = f"{type(e).__name__}: {str(e)[:160]}"
    platform, model = SHIPPED
    problem = load_measured_profile(platform, model)
    shipped_pair = [d for d in problem.devices if d.startswith("cpu")][:2]
    print(
        fallback_note(
            "stretching for this machine's measured throughput",
            why,
            f"the throughput of data/profiles/{platform}/{model} on {', '.join(shipped_pair)}",
        )
    )
    cm = costs_from_problem(g, problem, shipped_pair)
    best, rows = search(g, shipped_pair, cm, constraints)
    return Stretch(best, rows, cm, shipped_pair, f"shipped profile {platform}")


def runnable_here(pair: Sequence[str], devices: Mapping[str, Any]) -> bool:
    """Whether this machine has every device of ``pair`` (else the measured cells say why)."""
    missing = [d for d in pair if d not in devices]
    if missing:
        print(
            f"⚠ this machine has no {missing[0]}: the stretched model cannot run here, so the "
            "measured cells below are skipped (the prediction above still holds for the "
            "shipped profile's machine)."
        )
    return not missing
