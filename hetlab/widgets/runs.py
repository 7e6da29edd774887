"""Running a plan from the workbench: for real on this machine's devices, or as a replay of
the profile's costs on fake devices (``hetlab.devices.replay``), which any profile allows,
including one measured elsewhere or a what-if. A replay is labelled so: it measures nothing,
and its times are the profiled devices' on a virtual clock (``calibrate.replayed``), with
this host's timing of it beside them.

A run's status line compares it with one prediction, the run report's ``predicted_ms`` (the
calibrated prediction's total, as the measured panel does), and names the plan's §3
makespan beside it where that differs."""

from __future__ import annotations

from typing import Any

from hetlab.calibrate import run
from hetlab.calibrate.replayed import replay_line
from hetlab.cost.problem import Problem
from hetlab.cost.whatif import is_what_if
from hetlab.devices.replay import graph_from_problem, replay_devices
from hetlab.executor import RunReport
from hetlab.schedulers.plan import Plan

REAL, REPLAY = "this machine", "replay"
REPLAY_NOTE = "replay of the profile's costs on a virtual clock, not a measurement"


def why_not_real(problem: Problem | None, graph: Any, here: list[str]) -> str | None:
    """Why the plan cannot run for real on this machine, or None."""
    if problem is None:
        return "no profile: profile the model or load a saved profile"
    if is_what_if(problem):
        return "a what-if profile describes no real machine: replay it"
    lacking = [d for d in problem.devices if d not in set(here)]
    if lacking:
        return (
            f"this machine lacks the profiled device(s) {', '.join(lacking)}: "
            "the profile can be explored and replayed, not run"
        )
    if graph is None:
        return "no model loaded: a profile alone can only be replayed"
    return None


def execute(
    plan: Plan,
    problem: Problem,
    graph: Any,
    devices: list[Any],
    replay: bool,
    repeat: int,
) -> RunReport:
    """Run ``plan``: on ``devices`` (those named in the profile) for real, else replayed
    (its report on the virtual clock, ``replay_report``)."""
    graph, devs = where(problem, graph, devices, replay)
    return run(graph, plan, devs, repeat=repeat, check=bool(graph.model_path), problem=problem)


def where(problem: Problem, graph: Any, devices: list[Any], replay: bool) -> tuple[Any, list]:
    """The graph and devices a plan of ``problem`` runs on: ``graph`` and those of
    ``devices`` the profile names, or with ``replay`` the profile's own graph and fake
    devices that replay its costs."""
    if replay:
        return graph_from_problem(problem), replay_devices(problem)
    return graph, [d for d in devices if d.name in set(problem.devices)]


def summary(doc: dict[str, Any], plan: Plan, replay: bool) -> tuple[str, float | None]:
    """The status line of a run and its relative error against the run's prediction
    (``predicted_ms``, else the plan's makespan)."""
    lat = (doc.get("latency_ms") or {}).get("median")
    if not lat:
        return "ran", None
    pred = doc.get("predicted_ms") or plan.makespan
    err = (lat - pred) / pred
    verb = "replayed" if replay else "measured"
    msg = f"{verb} {lat:.3f} ms vs predicted {pred:.3f} ms ({err:+.1%})"
    if abs(pred - plan.makespan) > 1e-9:
        msg += f"; the plan's §3 makespan {plan.makespan:.3f} ms"
    cp = doc.get("critical_path") or {}
    if cp.get("predicted_run_ms") is not None:
        msg += (
            f"; on the critical path units ran {cp['run_ms']:.3f} ms (profiled "
            f"{cp['predicted_run_ms']:.3f}), dispatch {cp['dispatch_ms']:.3f} ms"
        )
    if doc.get("max_rel_err") is not None:
        msg += f"; max rel err vs onnxruntime {doc['max_rel_err']:.2g}"
        tol = doc.get("tolerance") or {}
        if tol.get("value") is not None:  # a precision other than fp32 ran
            msg += f" (the {tol['precision']} tolerance {tol['value']:.2g})"
    if replay:
        msg += f" ({replay_line(doc) or REPLAY_NOTE})"
    return msg, err


def status_line(
    note: tuple[str, str], reason: str | None, ran: Plan | None, shown: Plan | None
) -> tuple[str, str]:
    """Run's status line and its kind, never stale: a run in flight or its error as it is;
    else why Run is disabled; else the last run's line, said to be of an earlier plan once
    the plan on screen is another; else ready."""
    text, kind = note
    if text and kind != "ok":
        return note
    if reason:
        return f"Run disabled: {reason}", "warn"
    if text:
        if ran is not None and ran is not shown:
            return f"last run, of a plan no longer on screen: {text}", "info"
        return note
    return "ready to run", "info"
