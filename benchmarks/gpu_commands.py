"""The CLI commands that re-make each entry of a GPU-queues row (``gpu_queues.py``).

The benchmark calls the public API in one process; these are the same steps as commands a
user types, with the benchmark's options, so that any entry of ``gpu_queues.json`` can be
measured again without the benchmark. ``P`` is the profile file, ``plan.json`` the plan.
"""

from __future__ import annotations

from typing import Any

# the profile of the table's rows: the benchmarks' small budget, and for the plans' rows
# without the executor's calibrations (the recommended rows have them, as a user's does)
QUICK = {"repeat": 5, "rounds": 1}
UNCALIBRATED = {"handoff": False, "concurrent": False}


def profile_options(args: Any, calibrated: bool) -> dict[str, Any]:
    """The options of ``hetlab.profile`` for a row (``_profile`` gives them as flags)."""
    return {**QUICK, "seconds": args.seconds, **({} if calibrated else UNCALIBRATED)}


def _profile(model: str, devices: list[str], queues: str, args: Any, calibrate: bool) -> str:
    quick = " ".join(f"--{k} {v}" for k, v in {**QUICK, "seconds": args.seconds}.items())
    cal = "" if calibrate else " --no-calibrate"
    q = f" --queues {queues}" if queues else ""
    return f"hetlab profile {model} --devices {','.join(devices)}{q} {quick}{cal} --out P.json"


def _run(model: str, args: Any, profile: bool = True) -> str:
    with_profile = " --profile P.json" if profile else ""
    return (
        f"hetlab run {model} --plan plan.json{with_profile} --check --repeat {args.repeat} --json"
    )


def _scheduled(model: str, algo: str, only: list[str] | None, args: Any) -> list[str]:
    limit = f" --time-limit {args.time_limit}" if algo in ("ilp", "ilp+") else ""
    keep = f" --devices {','.join(only)}" if only else ""
    return [f"hetlab schedule P.json --algo {algo}{keep}{limit} --out plan.json", _run(model, args)]


def row_commands(model: str, row: dict[str, Any], args: Any, cpus: list[str]) -> dict[str, Any]:
    """For each entry of ``row`` that hetlab measured, the commands that measure it again."""
    n = args.queues
    out: dict[str, list[str]] = {}
    if "cl0" in row:
        out["cl0"] = [f"hetlab run {model} --device cl0 --check --repeat {args.repeat} --json"]
    cl_views = ["cl0", *(f"cl0.q{k}" for k in range(1, n))]
    for label, only in (("queues", cl_views), ("queues+cpu", None)):
        for key in (k for k in row if k.endswith(f"/{label}")):
            prof = _profile(model, [*cpus, "cl0"], f"cl0={n}", args, calibrate=False)
            out[key] = [prof, *_scheduled(model, key.split("/")[0], only, args)]
    cuda_views = ["cuda0", *(f"cuda0.q{k}" for k in range(1, n))]
    cuda_prof = _profile(model, [*cpus[:1], "cuda0"], f"cuda0={n}", args, calibrate=False)
    if "cuda0" in row:
        out["cuda0"] = [cuda_prof, *_scheduled(model, "single:cuda0", None, args)]
    for key in (k for k in row if k.endswith("/streams")):
        out[key] = [cuda_prof, *_scheduled(model, key.split("/")[0], cuda_views, args)]
    if "recommended" in row:
        gpu, q = ("cuda0", f"cuda0={n}") if "cuda0" in row else ("cl0", f"cl0={n}")
        out["recommended"] = [
            _profile(model, [*cpus, gpu], q, args, calibrate=True),
            f"hetlab recommend {model} --profile P.json --measure {args.measure} --out plan.json",
            _run(model, args),
        ]
    if "cpu_recommended" in row:
        out["cpu_recommended"] = [
            _profile(model, [*cpus, "cpu"], "", args, calibrate=True).replace(
                " --devices", " --whole-cpu cpu --devices"
            ),
            f"hetlab recommend {model} --profile P.json --measure {args.measure} --out plan.json",
            _run(model, args, profile=False),
        ]
    return out
