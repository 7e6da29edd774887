"""Interleaved measurement of a model's plans, shared by ``benchmarks.fig4`` and
``benchmarks.corpus``: every distinct plan of a model timed in rounds (each round runs every
plan once, in a seeded order that changes from round to round), so slow drift of the host
(clocks, other tenants, thermal) lands on all plans alike instead of on whichever plan
happened to run at a bad moment.

``measure`` keeps every distinct plan's executor alive and runs each once per round (Fig. 4);
``measure_one_alive`` builds a plan's executor anew in every round and closes it before the
next plan runs (the corpus table: with every executor alive, their idle onnxruntime pools
slowed the plans that use the CPU, docs/corpus.md).

Plans that would run the same program are measured once (``plan_key``). What the executor
runs is fixed by ``hetlab.executor.units.build_units``: the units (node sets) of each device
in that device's order, plus, for a sequential plan, the global order of the units. Inside a
unit the node order is irrelevant (the OpenCL builder re-sorts a unit's nodes topologically,
onnxruntime's extractor by graph position, and onnxruntime sessions are cached by node set),
and ``Plan.fused`` is not read by the executor. So a plan on one device is one unit, keyed by
its device alone, whatever its order or flags. Times: ms.
"""

from __future__ import annotations

import contextlib
import gc
import random
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.calibrate import measured
from hetlab.errors import HetlabError

# equal for two plans exactly when the executor runs the same program
plan_key = measured.plan_key


def same_as(keys: dict[str, Hashable]) -> dict[str, str]:
    """Per name, the first name whose plan has the same key ('' for that first name itself):
    the names that share a program share its one measurement."""
    first: dict[Hashable, str] = {}
    out = {}
    for name, k in keys.items():
        owner = first.setdefault(k, name)
        out[name] = "" if owner == name else owner
    return out


def round_order(n_plans: int, round_no: int, seed: int = 0) -> list[int]:
    """Plan indices in the order round ``round_no`` runs them. Rounds come in blocks of
    ``n_plans``: a block rotates one seeded shuffle, so inside a block every plan runs once in
    every position; each block draws a new shuffle, so a plan's predecessor changes too."""
    if n_plans <= 0:
        return []
    block, shift = divmod(round_no, n_plans)
    base = list(range(n_plans))
    random.Random(f"{seed}:{block}").shuffle(base)
    return base[shift:] + base[:shift]


def more_rounds(
    done: int, round_s: float, seconds_left: float | None, most: int, least: int = 3
) -> bool:
    """Whether to run another round: always below ``least``, never at ``most``; in between,
    when one more round (``round_s`` seconds, with 10% slack) fits ``seconds_left``."""
    if done < least:
        return True
    if done >= most:
        return False
    return seconds_left is None or round_s * 1.1 <= seconds_left


@dataclass
class Prepared:
    """One distinct plan, prepared: its executor, its timed runs (wall ms) and the events of
    each run (for the median run's trace)."""

    key: tuple
    plan: Any
    executor: Any
    walls: list[float] = field(default_factory=list)
    events: list[list[Any]] = field(default_factory=list)
    max_rel_err: float | None = None
    warm_ms: float = 0.0
    prepare_s: float = 0.0
    error: str | None = None

    def run(self, feed: Mapping[str, Any], keep: bool = True) -> float:
        rep = self.executor.run_once(feed)
        if keep:
            self.walls.append(rep.wall_ms)
            self.events.append(rep.events)
        return rep.wall_ms

    def report(self, graph: Any, devices: Sequence[str]) -> Any:
        """A ``RunReport`` of the timed runs: latency median/p10/p90, the median run's events."""
        from collections import Counter

        from hetlab.executor.api import RunReport

        w = np.array(self.walls)
        mid = int(np.argsort(w)[len(w) // 2])
        ex = self.executor
        return RunReport(
            model_path=graph.model_path,
            predicted_ms=round(float(self.plan.makespan), 4),
            latency_ms={
                "median": round(float(np.median(w)), 4),
                "p10": round(float(np.percentile(w, 10)), 4),
                "p90": round(float(np.percentile(w, 90)), 4),
            },
            max_rel_err=self.max_rel_err,
            devices=dict(Counter(ex.device_of.values())),
            timeline=[],
            fallbacks=sorted(ex.fallbacks.values(), key=lambda f: f["unit"]),
            units=len(ex.specs),
            repeat=len(self.walls),
            samples_ms=[float(x) for x in w],
            events=self.events[mid],
            device_names=[d for d in devices if d in set(ex.device_of.values())],
        )

    def close(self) -> None:
        self.executor.close()
        self.events.clear()


def prepare(
    graph: Any,
    plan: Any,
    key: tuple,
    devmap: Mapping[str, Any],
    feed: Mapping[str, Any],
    ref: Mapping[str, Any] | None,
) -> Prepared:
    """Build the plan's executor, run it once untimed and check that run's outputs against
    ``ref`` (when given). Raises HetlabError when the plan cannot be prepared or run."""
    from hetlab.executor.check import max_rel_err
    from hetlab.executor.interpreter import Executor

    t0 = time.perf_counter()
    ex = Executor(graph, plan.device_of, devmap, plan.order, plan.sequential)
    p = Prepared(key, plan, ex)
    try:
        ex.prepare()
        rep = ex.run_once(feed)
        p.warm_ms = rep.wall_ms
        if ref is not None:
            p.max_rel_err = max_rel_err(rep.outputs, ref)
        p.prepare_s = time.perf_counter() - t0
    except BaseException:
        ex.close()
        raise
    return p


def measure(
    plans: Sequence[Prepared],
    feed: Mapping[str, Any],
    most: int,
    seconds_left: Callable[[], float | None],
    seed: int = 0,
    warmup: int = 1,
    least: int = 3,
    on_round: Callable[[int], None] | None = None,
) -> int:
    """Time ``plans`` in rounds (see the module doc) after ``warmup`` untimed rounds; stops
    per ``more_rounds``. ``on_round(done)`` after each timed round. Returns the rounds done.
    A plan whose run fails gets ``error`` set and leaves the rounds; the others go on."""
    active = list(plans)

    def run(p: Prepared, keep: bool) -> None:
        try:
            p.run(feed, keep)
        except HetlabError as e:  # this plan stops; the others go on
            p.error = f"run error: {e}"
            active.remove(p)

    for w in range(warmup):
        for p in [active[i] for i in round_order(len(active), w, seed + 1)]:
            run(p, False)
    done, round_s = 0, 0.0
    while active and more_rounds(done, round_s, seconds_left(), most, least):
        t0 = time.perf_counter()
        for p in [active[i] for i in round_order(len(active), done, seed)]:
            run(p, True)
        round_s = time.perf_counter() - t0
        done += 1
        if on_round is not None:
            on_round(done)
    return done


def measure_one_alive(
    n_plans: int,
    time_once: Callable[[int, int], float],
    most: int,
    seconds_left: Callable[[], float | None],
    seed: int = 0,
    least: int = 3,
) -> tuple[list[list[float]], dict[int, str], int]:
    """Time ``n_plans`` plans in rounds (``round_order``, ``more_rounds``) with one plan's
    executor alive at a time: ``time_once(i, round_no)`` prepares plan ``i``, times it and
    closes it, and returns that round's time (ms). ``measure`` keeps every executor alive
    instead; their idle onnxruntime pools then share the cores with the plan being timed.
    Returns each plan's round times, the error of each plan that left the rounds (its
    ``time_once`` raised HetlabError; the others go on) and the rounds done."""
    times: list[list[float]] = [[] for _ in range(n_plans)]
    errors: dict[int, str] = {}
    active = list(range(n_plans))
    done, round_s = 0, 0.0
    while active and more_rounds(done, round_s, seconds_left(), most, least):
        t0 = time.perf_counter()
        for i in [active[k] for k in round_order(len(active), done, seed)]:
            try:
                times[i].append(time_once(i, done))
            except HetlabError as e:  # this plan stops; the others go on
                errors[i] = f"run error: {e}"
                active.remove(i)
        round_s = time.perf_counter() - t0
        done += 1
    return times, errors, done


def time_fresh(
    graph: Any,
    plan: Any,
    devmap: Mapping[str, Any],
    feed: Mapping[str, Any],
    ref: Mapping[str, Any] | None,
    repeat: int,
    warmup: int = 1,
) -> tuple[float, Prepared]:
    """One round of ``plan`` for ``measure_one_alive``: a new executor (``prepare``: built,
    run once, checked against ``ref`` when given), ``warmup`` more untimed runs, then the
    median of ``repeat`` timed runs (ms); the executor is closed before this returns."""
    p = prepare(graph, plan, ("fresh",), devmap, feed, ref)
    try:
        for _ in range(warmup):
            p.run(feed, keep=False)
        walls = [p.run(feed, keep=False) for _ in range(max(1, repeat))]
    finally:
        p.close()
    return float(np.median(walls)), p


def close_all(plans: Sequence[Prepared], devices: Sequence[Any] = ()) -> None:
    """Close every executor, and empty onnxruntime groups' session caches (bounded memory
    between models: sessions for a model's units are not reused by the next model)."""
    for p in plans:
        with contextlib.suppress(HetlabError):
            p.close()
    for d in devices:
        if getattr(d, "kind", "") == "onnxruntime-cpu":
            d.close()
    gc.collect()
