"""The plan hetlab recommends for a model: a scheduler's plan or a single device's, whichever
the calibrated prediction says is faster.

The schedulers optimise spec §3's makespan, which has no place for what the executor adds
per unit (a dispatch, a thread hand-off). On a calibrated problem, ``predict.host_serial_ms``
charges that per unit, and it orders a mixed plan against a one-device plan the way runs do
where the makespan does not. ``recommend`` schedules ``algo`` (``ilp+`` by default) and every
device alone (``single:DEVICE``), predicts each with ``host_serial_ms`` (the makespan where
the problem has no boundary calibration) and keeps the smallest, except that a plan over
several devices must beat the best one-device plan by ``MIXED_MARGIN``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.calibrate.predict import host_serial_ms
from hetlab.calibrate.report import host_and_remote
from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.schedulers import schedule
from hetlab.schedulers.plan import Plan

DEFAULT_ALGO = "ilp+"
# A plan over several devices is recommended over the best one-device plan only when its
# prediction is smaller by at least this fraction of the one-device plan's: the prediction
# of a mixed plan carries an error per unit hand-off that a one-device plan does not, so a
# smaller predicted gain may not be a gain at all, and a mixed plan must be predicted
# clearly faster to be worth that risk.
MIXED_MARGIN = 0.10


def recommend(
    problem: Problem,
    graph: OpGraph,
    devices: Sequence[Device] | Mapping[str, Device],
    algo: str = DEFAULT_ALGO,
    margin: float = MIXED_MARGIN,
    **params: Any,
) -> Plan:
    """The candidate plan of the smallest predicted time (see the module doc), a plan over
    several devices only where it is predicted ``margin`` faster than the best one-device
    candidate; its ``extra["recommended"]`` holds every candidate's prediction and what it
    was, the ``margin`` and the ``fastest`` candidate by prediction alone."""
    devmap = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
    candidates = {algo: schedule(problem, algo, **params)}
    for d in problem.devices:
        try:
            candidates[f"single:{d}"] = schedule(problem, f"single:{d}")
        except HetlabError:  # an alternative the problem's exclusive sets leave no room for
            continue
    host, remote = host_and_remote(problem, devmap)
    predicted: dict[str, float] = {}
    basis = "makespan"
    for name, plan in candidates.items():
        got = None
        if host is not None:
            order = plan.order or graph.topo_order()
            got = host_serial_ms(
                problem, graph, plan.device_of, order, host, remote, plan.sequential
            )
        if got is not None:
            basis = "predicted_host_ms"
        predicted[name] = round(float(plan.makespan if got is None else got), 4)
    fastest = min(predicted, key=predicted.__getitem__)
    best = fastest
    alone = [n for n, p in candidates.items() if n.startswith("single:") or one_device(p)]
    if alone and best not in alone:
        best_alone = min(alone, key=predicted.__getitem__)
        if predicted[best] >= (1.0 - margin) * predicted[best_alone]:
            best = best_alone
    plan = candidates[best]
    plan.extra["recommended"] = {
        "chosen": best,
        "basis": basis,
        "predicted": predicted,
        "margin": margin,
        "fastest": fastest,
    }
    return plan


def one_device(plan: Plan) -> bool:
    """Whether every node of ``plan`` is on one device."""
    return len(set(plan.device_of.values())) == 1
