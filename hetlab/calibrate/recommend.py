"""The plan hetlab recommends for a model: a scheduler's plan or a single device's, whichever
the calibrated prediction says is faster.

The schedulers optimise spec §3's makespan, which has no place for what the executor adds
per unit (a dispatch, a thread hand-off). The prediction (``prediction.predict``) charges
that per unit on a calibrated problem, and it orders a mixed plan against a one-device plan
the way runs do where the makespan does not. ``recommend`` schedules ``algo`` (``ilp+`` by
default) and every device alone (``single:DEVICE``), predicts each (its total) and keeps
the smallest, except that a plan over several devices must beat the best one-device plan
by ``MIXED_MARGIN``.

Predictions of mixed plans can still be off by more than that margin on some hosts. With
``measure``, the same rule is applied to the candidates' times measured on the devices
(``measured.measured_ms``) instead; the default is the prediction, which runs nothing.

On replay devices (a profile measured elsewhere, ``devices.replay``) ``measure`` times the
candidates on the replay's virtual clock (``replayed.replay_times``), never on this host's
threads. A replay reproduces the profile's compute and transfers, not the profiled host's
dispatch: where a candidate's replay misses its prediction by more than
``REPLAY_TOLERANCE``, the replays rank nothing and the choice is the prediction's, which
``why`` says in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hetlab.calibrate.measured import measured_ms
from hetlab.calibrate.prediction import predict
from hetlab.calibrate.replayed import replay_times, replays
from hetlab.calibrate.report import at_recorded, host_and_remote, problem_devices, problem_graph
from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.devices.replay import REPLAY_TOLERANCE
from hetlab.errors import HetlabError
from hetlab.graph import load
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
# With ``measure``, these schedulers' plans are candidates too: the prediction may rank them
# wrongly where a measurement does not, and a plan identical to another costs no extra run.
MEASURED_EXTRA = ("greedy", "heft")


def recommend(
    problem: Problem,
    graph: OpGraph | str | None = None,
    devices: Sequence[Device] | Mapping[str, Device] | None = None,
    algo: str = DEFAULT_ALGO,
    margin: float = MIXED_MARGIN,
    measure: int = 0,
    inputs: Mapping[str, Any] | None = None,
    platform: Any = None,
    **params: Any,
) -> Plan:
    """The candidate plan of the smallest predicted time (see the module doc), a plan over
    several devices only where it is predicted ``margin`` faster than the best one-device
    candidate; its ``extra["recommended"]`` holds every candidate's prediction and what it
    was, the ``margin`` and the ``fastest`` candidate.

    With ``measure`` > 0 the candidates also include ``MEASURED_EXTRA``'s plans, and the
    choice (the same margin rule) is made on their times measured on ``devices``
    (``measured.measured_ms``: ``measure`` runs per round, on ``inputs`` or seeded random
    ones), kept in ``measured``; a candidate whose run fails has no time there and is not
    chosen (its error is in ``measure_errors``). On devices that replay ``problem`` the
    times are the replays' on the virtual clock instead (``replayed``), and the choice is
    the prediction's where one misses its prediction by more than ``REPLAY_TOLERANCE``
    (``why`` says so).

    ``graph``: the model (a loaded graph, a path or a zoo name), by default the file the
    problem was profiled from; ``devices``: by default the problem's, found on this machine
    (``problem_devices``, with ``platform``)."""
    graph = problem_graph(problem) if graph is None else graph
    graph = load(graph) if isinstance(graph, str) else graph
    if devices is None:
        devices = problem_devices(problem, platform)
    devmap = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
    devmap = dict(zip(devmap, at_recorded(devmap, None, problem), strict=True))  # its precisions
    candidates = candidate_plans(problem, algo, MEASURED_EXTRA if measure > 0 else (), params)
    predicted, basis = _predicted(problem, graph, devmap, candidates)
    times: Mapping[str, float | None] = predicted
    rec: dict[str, Any] = {}
    if measure > 0 and replays(devmap, problem):
        times, basis, rec = _replayed(candidates, graph, problem, predicted)
    elif measure > 0:
        times, basis, rec = _measured(candidates, graph, devmap, measure, inputs)
    timed = {n: t for n, t in times.items() if t is not None}
    if not timed:
        raise HetlabError(
            "no candidate plan ran: "
            + "; ".join(f"{n}: {e}" for n, e in rec["measure_errors"].items())
        )
    fastest = min(timed, key=timed.__getitem__)
    chosen = _with_margin(candidates, timed, fastest, margin)
    plan = candidates[chosen]
    plan.extra["recommended"] = {
        "chosen": chosen,
        "basis": basis,
        "predicted": predicted,
        "margin": margin,
        "fastest": fastest,
        **rec,
    }
    return plan


def _measured(
    candidates: Mapping[str, Plan],
    graph: OpGraph,
    devices: Mapping[str, Device],
    measure: int,
    inputs: Mapping[str, Any] | None,
) -> tuple[Mapping[str, float | None], str, dict[str, Any]]:
    """The candidates' times measured on ``devices`` (``measured_ms``), their basis and the
    keys they add."""
    got = measured_ms(candidates, graph, devices, measure, inputs=inputs)
    rec: dict[str, Any] = {"measured": got.ms}
    if got.errors:
        rec["measure_errors"] = got.errors
    if got.max_rel_err:
        rec["max_rel_err"] = got.max_rel_err
    return got.ms, "measured", rec


def _replayed(
    candidates: Mapping[str, Plan],
    graph: OpGraph,
    problem: Problem,
    predicted: Mapping[str, float],
) -> tuple[Mapping[str, float | None], str, dict[str, Any]]:
    """The times to rank by, their basis and the keys they add: the replays on the virtual
    clock (``replayed``) where each is within ``REPLAY_TOLERANCE`` of its prediction, else
    the predictions, with ``why``."""
    got = replay_times(candidates, graph, problem)
    miss = {n: (t - predicted[n]) / predicted[n] for n, t in got.items() if predicted.get(n)}
    rec: dict[str, Any] = {"replayed": got, "replay_tolerance": REPLAY_TOLERANCE}
    worst = max(miss, key=lambda n: abs(miss[n]), default=None)
    if worst is None or abs(miss[worst]) <= REPLAY_TOLERANCE:
        return got, "replayed", rec
    rec["why"] = (
        f"ranked by prediction: the replay of {worst} misses its prediction by "
        f"{miss[worst]:+.0%} (a replay's tolerance is ±{REPLAY_TOLERANCE:.0%}; it "
        "reproduces the profile's compute and transfers, not the profiled host's dispatch)"
    )
    return predicted, "prediction", rec


def candidate_plans(
    problem: Problem, algo: str, extra: Sequence[str], params: Mapping[str, Any]
) -> dict[str, Plan]:
    """``algo``'s plan, every ``single:DEVICE`` plan and ``extra``'s plans, by name; an
    alternative that cannot be scheduled on ``problem`` is left out, and so is a queue view
    alone (the same program as its device alone)."""
    candidates = {algo: schedule(problem, algo, **params)}
    views = {v for q in problem.extra.get("queues", {}).values() for v in q.get("views", ())}
    alone = [f"single:{d}" for d in problem.devices if d not in views]
    for name in alone + list(extra):
        if name in candidates:
            continue
        try:
            candidates[name] = schedule(problem, name)
        except HetlabError:  # e.g. a device the problem's exclusive sets leave no room for
            continue
    return candidates


def _predicted(
    problem: Problem, graph: OpGraph, devmap: Mapping[str, Device], candidates: Mapping[str, Plan]
) -> tuple[dict[str, float], str]:
    """Each candidate's predicted time (``predict``'s total) and the basis, ``prediction``."""
    host, remote = host_and_remote(problem, devmap)
    predicted: dict[str, float] = {}
    for name, plan in candidates.items():
        got = predict(problem, graph, plan, host=host, remote=remote, breakdown=False)
        predicted[name] = round(got.total_ms, 4)
    return predicted, "prediction"


def _with_margin(
    candidates: Mapping[str, Plan], times: Mapping[str, float], best: str, margin: float
) -> str:
    """``best``, or the fastest one-device candidate where ``best`` spans several devices
    and is not ``margin`` faster than it; only candidates in ``times`` count."""
    alone = [
        n
        for n, p in candidates.items()
        if n in times and (n.startswith("single:") or one_device(p))
    ]
    if alone and best not in alone:
        best_alone = min(alone, key=times.__getitem__)
        if times[best] >= (1.0 - margin) * times[best_alone]:
            return best_alone
    return best


def one_device(plan: Plan) -> bool:
    """Whether every node of ``plan`` is on one device."""
    return len(set(plan.device_of.values())) == 1
