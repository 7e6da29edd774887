"""The platform side of the Fig. 4 benchmark: fingerprint, slug, time budget, profiling."""

from __future__ import annotations

import datetime as _dt
import os
import platform as _pf
import re
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

from hetlab.profiling import cpu_model


def _git_commit() -> str | None:
    try:
        r = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def fingerprint(devices: Sequence[Any]) -> dict[str, Any]:
    """What the numbers were measured on: ``hetlab devices --json`` (each device's info()),
    CPU model, usable cores, OpenCL platform/device/driver, library versions, git commit."""
    import numpy as np
    import onnxruntime as ort

    infos = [d.info() for d in devices]
    cl = [
        {
            k: i.get(k)
            for k in (
                "name",
                "platform",
                "device",
                "driver_version",
                "device_version",
                "compute_units",
            )
        }
        for i in infos
        if i.get("kind") == "opencl"
    ]
    return {
        "when_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "system": f"{_pf.system()} {_pf.release()}",
        "python": _pf.python_version(),
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
        "git_commit": _git_commit(),
        "opencl": cl,
        "devices": infos,
    }


def _clean(s: str) -> str:
    s = re.sub(r"\((R|TM|tm|r)\)|\bCPU\b|\bProcessor\b|@", " ", s)
    return re.sub(r"[^A-Za-z0-9.]+", "-", s).strip("-").replace(".", "_")


def platform_slug(fp: dict[str, Any]) -> str:
    """``<cpu model>-<usable cores>c[+<opencl device>...]``, filesystem-safe; PoCL is ``pocl``."""
    parts = [f"{_clean(fp['cpu_model'])}-{fp['usable_cpus']}c"]
    for c in fp["opencl"]:
        parts.append(
            "pocl"
            if "portable" in str(c.get("platform", "")).lower()
            else _clean(str(c.get("device")))
        )
    return "+".join(dict.fromkeys(parts))


class Deadline:
    """A wall-time budget shared over models in proportion to their vertices; ``None``: none."""

    def __init__(
        self, budget_s: float | None, sizes: dict[str, int], t_start: float | None = None
    ) -> None:
        self.budget = budget_s
        self.t0 = time.monotonic() if t_start is None else t_start
        self.sizes = dict(sizes)
        self.todo = list(sizes)
        self.alloc = 0.0
        self.model_t0 = self.t0

    def left(self) -> float:
        return math_inf() if self.budget is None else self.t0 + self.budget - time.monotonic()

    def start_model(self, model: str) -> bool:
        """Allot this model its share of what is left; False when nothing useful is left."""
        weights = {m: float(self.sizes[m]) for m in self.todo}
        self.todo.remove(model)
        self.model_t0 = time.monotonic()
        if self.budget is None:
            return True
        left = self.left()
        self.alloc = left * weights[model] / sum(weights.values())
        return left > 3.0

    def share(self) -> float | None:
        return None if self.budget is None else self.alloc

    def model_left(self) -> float:
        if self.budget is None:
            return math_inf()
        return max(0.5, min(self.model_t0 + self.alloc - time.monotonic(), self.left()))

    def model_seconds_left(self) -> float | None:
        """Seconds left of this model's share (and of the whole budget), unfloored, may be
        negative; ``None`` without a budget."""
        if self.budget is None:
            return None
        return min(self.model_t0 + self.alloc - time.monotonic(), self.left())

    def expired(self) -> bool:
        """Past twice this model's share, or past the whole budget (past the share, plans
        still run, with the fewest repeats)."""
        if self.budget is None:
            return False
        now = time.monotonic()
        return now > self.model_t0 + 2.0 * self.alloc or self.left() <= 0

    def profile_settings(self) -> dict[str, Any]:
        """``hetlab.profile`` keyword arguments: its defaults without a budget; under
        one, few repeats, short per-op time caps, one round, and the context correction."""
        if self.budget is None:
            return {}
        # the context windows and the one whole-model run cost about n/8 extra units and set
        # the level of every cost (without them googlenet's GPU-only plan was predicted 1.5x)
        return {"repeat": 5, "warmup": 1, "seconds": 0.02, "rounds": 1, "context": 8}


def math_inf() -> float:
    return float("inf")


def profile_model(
    graph: Any, devices: Sequence[Any], path: Path, settings: dict[str, Any]
) -> tuple[Any, str]:
    """The model's Problem on ``devices``: read from ``path`` when it was profiled there on
    the same devices, else measured (the profiler's own cache is reused) and saved there."""
    from hetlab import Problem

    names = [d.name for d in devices]
    if path.is_file():
        try:
            p = Problem.load(path)
            if list(p.devices) == names and len(p.nodes) == len(graph.nodes):
                return p, f"read from {path.name}"
        except Exception:  # noqa: BLE001, S110 - a stale or broken file is simply re-measured
            pass
    from hetlab import profile

    last = [time.monotonic()]

    def progress(done: int, total: int, msg: str) -> None:
        if time.monotonic() - last[0] > 20:
            last[0] = time.monotonic()
            print(f"  profiling {graph.name}: {done}/{total} {msg[:60]}", flush=True)

    p = profile(graph, list(devices), progress=progress, **settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    p.save(path)
    return p, "measured" + (
        f" ({', '.join(f'{k}={v}' for k, v in settings.items())})" if settings else ""
    )
