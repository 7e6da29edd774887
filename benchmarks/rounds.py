"""Interleaved measurement of a model's plans, shared by ``benchmarks.fig4`` and
``benchmarks.corpus``: every distinct plan of a model timed in rounds (each round runs every
plan once, in a seeded order that changes from round to round), so slow drift of the host
(clocks, other tenants, thermal) lands on all plans alike instead of on whichever plan
happened to run at a bad moment.

Each round of a plan is one ``hetlab.run``, as a user runs a plan: it builds the plan's
executor, warms it up, times its runs and closes it before the next plan runs. So one plan's
executor is alive at a time: with every executor alive, their idle onnxruntime pools slowed
the plans that use the CPU (docs/corpus.md).

Plans that would run the same program are measured once (``program_key``, which is
``hetlab.calibrate.program_key``): the units of each device in that device's order, plus, for a
sequential plan, the global order of the units. Inside a unit the node order is irrelevant
(the OpenCL builder re-sorts a unit's nodes topologically, onnxruntime's extractor by graph
position, and onnxruntime sessions are cached by node set), and ``Plan.fused`` is not read by
the executor. So a plan on one device is one unit, keyed by its device alone, whatever its
order or flags. Times: ms.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import random
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import hetlab
from hetlab.calibrate import program_key
from hetlab.errors import HetlabError
from hetlab.executor import max_rel_err

__all__ = [
    "Timed",
    "check",
    "measure",
    "more_rounds",
    "program_key",
    "release",
    "round_order",
    "run_round",
    "same_as",
]


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
class Timed:
    """One distinct plan's rounds: each round's median (``rounds_ms``) and report (its
    outputs dropped once checked), ``max_rel_err`` of its checked run against plain
    onnxruntime, the seconds its runs took (``spent_s``, executors built included) and why it
    left the rounds (``error``)."""

    plan: Any
    rounds_ms: list[float] = field(default_factory=list)
    reports: list[Any] = field(default_factory=list)
    max_rel_err: float | None = None
    spent_s: float = 0.0
    error: str | None = None

    def report(self) -> Any:
        """The median round's ``RunReport`` with its latency over the rounds (``repeat`` = the
        rounds, ``samples_ms`` their times) and the plan's ``max_rel_err``: the median round's
        events give the trace."""
        w = np.array(self.rounds_ms)
        mid = int(np.argsort(w)[len(w) // 2])
        return dataclasses.replace(
            self.reports[mid],
            latency_ms={
                "median": round(float(np.median(w)), 4),
                "p10": round(float(np.percentile(w, 10)), 4),
                "p90": round(float(np.percentile(w, 90)), 4),
            },
            max_rel_err=self.max_rel_err,
            repeat=len(w),
            samples_ms=[float(x) for x in w],
        )


def run_round(
    t: Timed,
    graph: Any,
    devices: Sequence[Any],
    feed: Mapping[str, Any],
    repeat: int = 1,
    warmup: int = 1,
    ref: Mapping[str, Any] | None = None,
    keep: bool = True,
) -> float:
    """One ``hetlab.run`` of ``t``'s plan on ``feed`` (``warmup`` untimed runs, then
    ``repeat`` timed ones), its outputs checked against ``ref`` when given; with ``keep``, a
    round of ``t``. Returns the median of its timed runs (ms); raises HetlabError when the
    plan cannot run."""
    t0 = time.perf_counter()
    try:
        rep = hetlab.run(graph, t.plan, devices, repeat=repeat, warmup=warmup, inputs=feed)
    finally:
        t.spent_s += time.perf_counter() - t0
    if ref is not None:
        t.max_rel_err = max_rel_err(rep.outputs, ref)
    rep.outputs = {}
    ms = float(np.median(rep.samples_ms))
    if keep:
        t.rounds_ms.append(ms)
        t.reports.append(rep)
    return ms


def check(t: Timed, graph: Any, devices: Sequence[Any], feed: Mapping[str, Any], ref: Any) -> float:
    """One untimed run of ``t``'s plan (no warm-up), its outputs checked against ``ref``
    when given: what the plan costs before its rounds, in ms. Raises HetlabError."""
    return run_round(t, graph, devices, feed, repeat=1, warmup=0, ref=ref, keep=False)


def measure(
    timed: Sequence[Timed],
    graph: Any,
    devices: Sequence[Any],
    feed: Mapping[str, Any],
    most: int,
    seconds_left: Callable[[], float | None],
    *,
    repeat: int = 1,
    warmup: int = 1,
    ref: Mapping[str, Any] | None = None,
    seed: int = 0,
    least: int = 3,
    on_round: Callable[[int], None] | None = None,
) -> int:
    """Time ``timed`` in rounds (see the module doc), one ``run_round`` per plan and round;
    stops per ``more_rounds``. ``ref``: each plan's first round is checked against it.
    ``on_round(done)`` after each round. A plan whose round raises HetlabError gets ``error``
    set and leaves the rounds; the others go on. Returns the rounds done."""
    active = [t for t in timed if t.error is None]
    done, round_s = 0, 0.0
    while active and more_rounds(done, round_s, seconds_left(), most, least):
        t0 = time.perf_counter()
        for t in [active[i] for i in round_order(len(active), done, seed)]:
            first = ref if not t.rounds_ms else None
            try:
                run_round(t, graph, devices, feed, repeat, warmup, first)
            except HetlabError as e:  # this plan stops; the others go on
                t.error = f"run error: {e}"
                active.remove(t)
        round_s = time.perf_counter() - t0
        done += 1
        if on_round is not None:
            on_round(done)
    return done


def release(devices: Sequence[Any] = ()) -> None:
    """Empty the onnxruntime groups' session caches (bounded memory between models: the
    sessions of a model's units are not reused by the next model)."""
    for d in devices:
        if getattr(d, "kind", "") == "onnxruntime-cpu":
            with contextlib.suppress(HetlabError):
                d.close()
    gc.collect()
