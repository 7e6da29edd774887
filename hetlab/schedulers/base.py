"""One interface for every scheduling algorithm, and the registry the CLI and widgets read.

An algorithm is a function ``(problem, **params) -> Plan`` that returns an untimed plan
(``Plan.of``: a device per node, an order, fused groups, ``extra``); ``schedule`` times it with
the standard simulator (spec §3), as it times every plan. Register with::

    @register("heft", "HEFT (Topcuoglu et al., 2002)", params=[Param("...", ...)])
    def heft(problem: Problem) -> Plan: ...
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.cost.queues import only_devices
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan

# module name for each algorithm (imported lazily so `hetlab --help` stays fast)
MODULES = {
    "ilp": "ilp",
    "ilp+": "ilp_plus",
    "greedy": "greedy",
    "heft": "heft",
    "heft-append": "heft",
    "peft": "peft",
    "dmda": "dmda",
    "dmdar": "dmda",
    "mosaic": "mosaic",
    "overseer": "overseer",
    "partitiontuner": "partitiontuner",
    "opseq": "sequence_baselines",
    "typeseq": "sequence_baselines",
    "single": "sequence_baselines",
}


@dataclass
class Param:
    """A tunable parameter: ``kind`` is 'int', 'float' or 'bool'; bounds are inclusive.

    ``default`` is the one place a default lives. ``None`` with a ``rule`` means the default
    depends on the problem (e.g. greedy's K on the device count): ``rule(problem)`` gives it."""

    name: str
    kind: str
    default: Any
    low: float | None = None
    high: float | None = None
    help: str = ""
    rule: Callable[[Problem], Any] | None = None

    def default_for(self, problem: Problem | None = None) -> Any:
        """The default, resolved for ``problem`` when it depends on one."""
        if self.default is None and self.rule is not None and problem is not None:
            return self.rule(problem)
        return self.default

    def coerce(self, value: Any, algo: str) -> Any:
        try:
            v = {"int": int, "float": float, "bool": bool}[self.kind](value)
        except (TypeError, ValueError):
            raise HetlabError(
                f"{algo}: parameter {self.name} must be {self.kind}, got {value!r}"
            ) from None
        if self.kind == "int" and float(value) != v:
            raise HetlabError(f"{algo}: parameter {self.name} must be an integer, got {value!r}")
        if (self.low is not None and v < self.low) or (self.high is not None and v > self.high):
            raise HetlabError(
                f"{algo}: parameter {self.name}={value} is out of range [{self.low}, {self.high}]"
            )
        return v


@dataclass
class Algorithm:
    name: str
    title: str
    func: Callable[..., Plan]  # an untimed plan: times come from the simulator, never from it
    params: list[Param]
    sequential: bool = False


REGISTRY: dict[str, Algorithm] = {}


def register(name: str, title: str, params: list[Param] | None = None, sequential: bool = False):
    def deco(func: Callable[..., Plan]) -> Callable[..., Plan]:
        REGISTRY[name] = Algorithm(name, title, func, list(params or []), sequential)
        return func

    return deco


def algorithm(name: str) -> Algorithm:
    """Look up an algorithm by name (``single:DEVICE`` maps to ``single``)."""
    base = name.split(":", 1)[0]
    if base not in MODULES:
        raise HetlabError(f"unknown algorithm {name!r}; choose one of: {', '.join(algorithms())}")
    importlib.import_module(f"hetlab.schedulers.{MODULES[base]}")
    if base not in REGISTRY:
        raise HetlabError(f"algorithm {base!r} is not available in this build")
    return REGISTRY[base]


def param(algo: str, name: str) -> Param:
    """The ``Param`` spec ``name`` of ``algo``: the one place its default and bounds live."""
    for p in algorithm(algo).params:
        if p.name == name:
            return p
    raise HetlabError(f"{algo}: no parameter {name!r}")


def defaults(algo: str, problem: Problem | None = None) -> dict[str, Any]:
    """Every parameter of ``algo`` with its default; with ``problem``, defaults that depend on
    it are resolved (else they stay ``None``). Widgets, notebooks and the CLI read defaults
    from here, never from their own copies."""
    return {p.name: p.default_for(problem) for p in algorithm(algo).params}


def algorithms() -> list[str]:
    return [k for k in MODULES if k != "single"] + ["single:DEVICE"]


def schedule(problem: Problem, algo: str, **params: Any) -> Plan:
    """Run ``algo`` on ``problem`` and return the simulated plan (spec §3, §4).

    ``params`` not given take their defaults; ``None`` values are treated as not given.
    A problem whose ``extra["exclusive"]`` lists alternative device sets (the whole CPU, or
    its core groups) is scheduled once per alternative, and the plan of the smallest
    makespan is returned (``best_alternative``).
    """
    if problem.extra.get("exclusive"):
        return best_alternative(problem, algo, **params)
    a = algorithm(algo)
    given = {k: v for k, v in params.items() if v is not None}
    known = {p.name for p in a.params}
    unknown = sorted(set(given) - known - {"progress"})
    if unknown:
        raise HetlabError(
            f"{algo}: unknown parameter(s) {', '.join(unknown)}; it takes {sorted(known) or 'none'}"
        )
    kw = {}
    for p in a.params:
        value = given.get(p.name, p.default_for(problem))
        if value is not None:
            kw[p.name] = p.coerce(value, algo)
    if ":" in algo:
        kw["device"] = algo.split(":", 1)[1]
    if "progress" in given:
        kw["progress"] = given["progress"]
    t0 = time.perf_counter()
    plan = a.func(problem, **kw)
    dt = time.perf_counter() - t0
    shown = {k: v for k, v in kw.items() if k != "progress"}
    out = plan.timed(problem, algo, shown, dt, plan.sequential or a.sequential)
    at = {d: p for d, p in (problem.extra.get("precision") or {}).items() if d in problem.devices}
    if at:  # spec §4: what each device was scheduled at (absent: fp32)
        out.extra["precision"] = at
    return out


def best_alternative(problem: Problem, algo: str, **params: Any) -> Plan:
    """``algo``'s plan on each alternative of ``problem.extra["exclusive"]`` (a list of device
    sets of which a plan may use one: the devices of the other sets are left out), the one of
    the smallest makespan; ``plan.extra`` says which was chosen and what each gave."""
    sets = [list(s) for s in problem.extra["exclusive"]]
    tried: dict[str, float] = {}
    best: Plan | None = None
    error: HetlabError | None = None
    for chosen in sets:
        left_out = {d for s in sets if s is not chosen for d in s} - set(chosen)
        keep = [d for d in problem.devices if d not in left_out]
        try:  # a node only a left-out device runs, or single: on a left-out device
            sub = only_devices(problem, keep)
            sub.extra.pop("exclusive", None)
            plan = schedule(sub, algo, **params)
        except HetlabError as e:
            error = error or e
            continue
        tried["+".join(chosen)] = round(float(plan.makespan), 4)
        if best is None or plan.makespan < best.makespan:
            best, best_name = plan, "+".join(chosen)
    if best is None:
        raise error or HetlabError("extra.exclusive lists no alternative")
    best.extra.update({"alternative": best_name, "alternatives": tried})
    return best
