"""The workbench's lazy links to the rest of hetlab, each failing with a ``Missing`` reason.

Every piece (loader, zoo, devices, profiler, schedulers, executor) is imported only when
used, so the workbench works with whatever has been built and tells the user what is not.
Tests may replace these functions (they are plain module attributes).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from hetlab.errors import HetlabError


class Missing(HetlabError):
    """A part of hetlab this build does not have (the message says which and why)."""


def _need(module: str, attr: str, what: str) -> Any:
    try:
        mod = importlib.import_module(module)
        return getattr(mod, attr)
    except (ImportError, AttributeError) as e:
        raise Missing(f"{what} is not available in this build ({module}.{attr}: {e})") from None


def zoo_names() -> list[str]:
    try:
        return list(_need("hetlab.zoo", "names", "the model zoo")())
    except Exception:  # noqa: BLE001  no zoo: the model box offers files only
        return []


def load_graph(model: str, shapes: dict[str, tuple[int, ...]] | None = None) -> Any:
    """An ``OpGraph`` of a zoo name or an .onnx path (spec §1)."""
    load = _need("hetlab.graph.onnx_io", "load", "the ONNX loader")
    try:
        return load(model, shapes or None)
    except NotImplementedError:
        raise Missing("the ONNX loader is not available in this build yet") from None


def local_devices() -> list[Any]:
    """The devices of this machine (``hetlab.devices.platform.devices()``)."""
    return list(_need("hetlab.devices.platform", "devices", "device discovery")())


def profile(graph: Any, devices: list[Any], progress: Callable[..., None] | None = None) -> Any:
    """A ``Problem`` measured on ``devices`` (``hetlab.cost.profile``)."""
    return _need("hetlab.cost.profiler", "profile", "the profiler")(
        graph, devices, progress=progress
    )


def algorithm_params(algo: str) -> list[Any]:
    """The ``Param`` specs of a registered algorithm; ``Missing`` when it has not landed."""
    from hetlab.schedulers.base import algorithm

    try:
        return list(algorithm(algo).params)
    except ImportError as e:
        raise Missing(f"algorithm {algo!r} is not available in this build ({e})") from None


def schedule(problem: Any, algo: str, **params: Any) -> Any:
    from hetlab.schedulers.base import schedule as _schedule

    try:
        return _schedule(problem, algo, **params)
    except ImportError as e:
        raise Missing(f"algorithm {algo!r} is not available in this build ({e})") from None


def run(
    graph: Any,
    plan: Any,
    devices: list[Any],
    repeat: int = 5,
    check: bool = True,
    problem: Any = None,
) -> Any:
    """Execute ``plan`` for real (``hetlab.executor.run``) and return its run report
    (with ``predicted_io_ms`` when ``problem`` is given)."""
    return _need("hetlab.executor", "run", "the executor")(
        graph, plan, devices, repeat=repeat, check=check, problem=problem
    )


def executor_available() -> str | None:
    """None when the executor can be imported, else the reason it cannot."""
    try:
        _need("hetlab.executor", "run", "the executor")
    except Missing as e:
        return str(e)
    return None


def report_json(report: Any) -> dict[str, Any]:
    """The spec §5 document of a run report (object with ``to_json`` or a dict)."""
    if isinstance(report, dict):
        return report
    if hasattr(report, "to_json"):
        return report.to_json()
    return {
        "timeline": getattr(report, "timeline", []),
        "latency_ms": getattr(report, "latency_ms", None),
        "predicted_ms": getattr(report, "predicted_ms", None),
    }


PIECES = {
    "zoo": ("hetlab.zoo", "names", "the model zoo"),
    "loader": ("hetlab.graph.onnx_io", "load", "the ONNX loader"),
    "devices": ("hetlab.devices.platform", "devices", "device discovery"),
    "profiler": ("hetlab.cost.profiler", "profile", "the profiler"),
    "executor": ("hetlab.executor", "run", "the executor"),
}


def missing(*pieces: str) -> list[str]:
    """Reasons for each of ``pieces`` ('zoo', 'loader', 'devices', 'profiler', 'executor',
    'algo:NAME') that this build lacks; an empty list when all are there."""
    out = []
    for p in pieces:
        try:
            if p.startswith("algo:"):
                algorithm_params(p[5:])
            else:
                _need(*PIECES[p])
        except HetlabError as e:
            out.append(str(e))
    return out
