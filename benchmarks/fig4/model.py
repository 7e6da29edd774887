"""One model's rows of the Fig. 4 table: every algorithm scheduled, each distinct plan run
once and checked, then all of them timed in interleaved rounds (``benchmarks.rounds``), each
turn one ``hetlab.run``."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hetlab
from benchmarks import rounds as F
from benchmarks.fig4 import table as T
from benchmarks.fig4.env import Deadline
from hetlab.errors import HetlabError


def say(msg: str) -> None:
    print(msg, flush=True)


def algo_params(
    algo: str, n_nodes: int, seconds: float | None, takes: set[str] | None = None
) -> dict[str, Any]:
    """Scheduler parameters; under a budget the ILP's per-subgraph time limit shrinks (and
    one forward pass replaces two when even 0.05 s per window would not fit) so that its
    ``passes * n/12`` windows, ~0.1 s of model building each, take about ``seconds``."""
    if algo != "ilp" or seconds is None:
        return {}
    takes = {"time_limit", "passes"} if takes is None else takes
    for passes in (2, 1):
        windows = passes * max(1, math.ceil(n_nodes / 12))
        limit = seconds / windows - 0.1
        if limit >= 0.05 or passes == 1 or "passes" not in takes:
            break
    out: dict[str, Any] = {"time_limit": round(min(0.5, max(0.02, limit)), 3)}
    if "passes" in takes:
        out["passes"] = passes
    return out


@dataclass
class Entry:
    """One algorithm's row in the making: its plan, the distinct plan's rounds it is measured
    by (shared with the rows of the same program), or why it has none (``status``)."""

    label: str
    algo: str
    plan: Any = None
    status: str = "ok"
    timed: F.Timed | None = None
    same_plan_as: str = ""


def bench_model(
    model: str,
    graph: Any,
    problem: Any,
    devices: list[Any],
    platform: str,
    rows: list[dict],
    emit: Any,
    deadline: Deadline,
    repeat: int,
    check: bool,
    feed: dict | None = None,
    trace_dir: Path | None = None,
    seed: int = 0,
    progress: Any = None,
) -> None:
    """Schedule ``problem`` with every algorithm, check each distinct plan once
    (``rounds.program_key``), time them interleaved in rounds (``rounds.measure``,
    3 to ``repeat`` rounds as the budget allows) and ``emit(row)`` each algorithm's row at the
    end, in table order; ``progress(rows)`` gets the model's provisional rows after every
    round from the third on. With ``trace_dir``, each distinct plan's median-run timeline as
    Chrome trace JSON there (``<model>-<label of its first algorithm>.json``)."""
    from hetlab.executor import random_inputs, reference_outputs

    devmap = {d.name: d for d in devices}
    device_set = "+".join(problem.devices)
    kinds = {d: T.device_kind_label(devmap[d]) for d in problem.devices}
    singles = {d: hetlab.schedule(problem, f"single:{d}") for d in problem.devices}
    # HOPE's own and its paper's baselines first: under a budget, what is left out is at the end
    hetero = sorted(
        T.HETERO, key=lambda la: T.RUN_FIRST.index(la[1]) if la[1] in T.RUN_FIRST else 99
    )
    entries = [
        Entry(label, algo)
        for label, algo in T.single_device_plans({d: p.makespan for d, p in singles.items()}, kinds)
        + hetero
    ]
    feed = feed if feed is not None else random_inputs(graph, 0)
    ref = (
        reference_outputs(graph.model_path, feed, list(graph.outputs))
        if check and graph.model_path
        else None
    )
    share = deadline.share()  # seconds for this model's scheduling + runs
    for i, e in enumerate(entries):  # 1. schedule everything
        if deadline.expired() and not e.algo.startswith("single:"):
            e.status = "skipped (budget)"
            continue
        try:
            if e.algo.startswith("single:"):
                e.plan = singles[e.algo.split(":", 1)[1]]
            else:
                sched_s = (
                    None if share is None else 0.25 * deadline.model_left() / (len(entries) - i)
                )
                e.plan = hetlab.schedule(
                    problem,
                    e.algo,
                    **algo_params(e.algo, len(problem.nodes), sched_s, takes(e.algo)),
                )
        except (HetlabError, ImportError) as ex:  # ImportError: an optional solver is missing
            e.status = f"schedule error: {ex}"
    timed: list[F.Timed] = []
    first: dict[tuple, Entry] = {}
    slow = 1.0  # measured / predicted so far on this model
    try:
        for e in entries:  # 2. run each distinct plan once, check its outputs once
            if e.plan is None or e.status != "ok":
                continue
            key = F.program_key(graph, e.plan)
            if key in first:
                e.timed, e.same_plan_as = first[key].timed, first[key].label
                e.status = first[key].status
                continue
            first[key] = e
            if deadline.expired() or (
                share is not None and e.plan.makespan * slow * 5 / 1000.0 > deadline.left()
            ):
                e.status = "skipped (budget)"
                continue
            e.timed = F.Timed(e.plan)
            try:
                once_ms = F.check(e.timed, graph, devices, feed, ref)
            except HetlabError as ex:
                e.status, e.timed = f"run error: {ex}", None
                continue
            timed.append(e.timed)
            if e.plan.makespan > 0:
                slow = min(50.0, max(slow, once_ms / e.plan.makespan))
        n_rounds, last_write = [0], [0.0]

        def on_round(done: int) -> None:  # provisional rows: after round 3, then every 5 s at most
            n_rounds[0] = done
            if (
                progress is not None
                and done >= 3
                and (done == 3 or time.monotonic() - last_write[0] > 5.0)
            ):
                progress(model_rows(model, platform, device_set, entries, done))
                last_write[0] = time.monotonic()

        t0 = time.monotonic()
        F.measure(
            timed,
            graph,
            devices,
            feed,
            repeat,
            deadline.model_seconds_left,
            seed=seed,
            on_round=on_round,
        )
        say(
            f"{model:<15} {len(timed)} distinct plan(s) of {sum(e.plan is not None for e in entries)}, "
            f"{n_rounds[0]} interleaved rounds in {time.monotonic() - t0:.1f}s"
        )
        for e in entries:
            if e.timed is not None and e.timed.error:
                e.status = e.timed.error
        if trace_dir is not None:
            for e in entries:
                if e.timed is not None and not e.same_plan_as and e.timed.rounds_ms:
                    e.timed.report().write_trace(
                        trace_dir / f"{model}-{e.label.replace(':', '_')}.json"
                    )
        for r in model_rows(model, platform, device_set, entries, n_rounds[0]):
            emit(r)
    finally:
        F.release(devices)


def model_rows(
    model: str, platform: str, device_set: str, entries: list[Entry], rounds: int
) -> list[dict[str, Any]]:
    """The model's rows from its entries (each algorithm's own plan, its distinct plan's
    rounds); ``run_wall_s``: the seconds the distinct plan's runs took, executors built
    included."""
    out = []
    for e in entries:
        t = e.timed
        ran = t is not None and bool(t.rounds_ms) and e.status == "ok"
        r = T.row(
            model,
            platform,
            device_set,
            e.label,
            e.algo,
            e.plan,
            t.report() if ran else None,
            status=e.status,
            run_wall_s=None if e.same_plan_as or not ran else t.spent_s,
        )
        r.update(same_plan_as=e.same_plan_as, rounds=rounds if ran else math.nan)
        out.append(r)
    return out


def takes(algo: str) -> set[str]:
    """The parameters ``algo`` takes in this build (none when it is missing)."""
    from hetlab.schedulers import algorithm

    try:
        return {p.name for p in algorithm(algo).params}
    except (HetlabError, ImportError):
        return set()
