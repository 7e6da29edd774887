"""Sweeps: a grid of problems x algorithms x parameters solved on Dask (the command is
``hetlab sweep``, ``hetlab.commands.sweep``): the problems it reads or profiles, and the
engine's faces (``cells``, ``run_sweep``, ``worker_sizing``)."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hetlab.errors import HetlabError
from hetlab.fileio import read_json
from hetlab.sweep_cluster import local_client, worker_sizing
from hetlab.sweep_run import cells, run_sweep, solve_cell

__all__ = [
    "cells",
    "load_problems",
    "local_client",
    "profiled_models",
    "run_sweep",
    "solve_cell",
    "worker_sizing",
]


def load_problems(paths: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{name: problem document}`` from files/globs; names are file stems (made unique)."""

    files: list[str] = []
    for p in paths:
        hit = sorted(glob.glob(p)) if any(ch in p for ch in "*?[") else [p]
        if not hit:
            raise HetlabError(f"no problem file matches {p!r}")
        files += hit
    out: dict[str, dict[str, Any]] = {}
    for f in files:
        if not Path(f).is_file():
            raise HetlabError(f"problem file not found: {f}")
        name = Path(f).stem
        while name in out:
            name += "_"
        doc = read_json(f, "problem")
        # lazy: building the command-line parser imports this module; the run needs these
        from hetlab.cost.problem import Problem

        Problem.from_json(doc, source=f)  # validate here: one clear line, before any worker starts
        out[name] = doc
    return out


def profiled_models(
    models: Sequence[str], devices: str | None, platform: str | None, out: Path
) -> dict[str, dict[str, Any]]:
    """Profile zoo ``models`` on this machine (saved under ``out/problems``) as documents."""
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab import zoo
    from hetlab.devices.platform import devices as platform_devices
    from hetlab.devices.platform import one_driver_per_gpu
    from hetlab.graph import load

    try:
        # lazy: building the command-line parser imports this module; the run needs these
        from hetlab.calibrate import profile
    except ImportError:
        raise HetlabError(
            "--models needs the profiler (hetlab.profiling.profile); give problem files instead"
        ) from None
    devs = platform_devices(platform)
    if devices:
        devs = [d for d in devs if d.name in devices.split(",")]
    else:  # a GPU that CUDA drives is profiled once, as its CUDA device
        devs = one_driver_per_gpu(devs)
    docs = {}
    for m in models:
        p = profile(load(str(zoo.path(m))), devs)
        docs[m] = p.to_json()
        p.save(out / "problems" / f"{m}.json")
    return docs
