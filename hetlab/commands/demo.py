"""``hetlab demo``: the headless main job, end to end on this machine's real devices.

Load a zoo model, profile it on the devices, schedule it with HOPE's ILP and greedy search and
the baselines, run the best plan and the best single device for real with ``--check``, and
print predicted against measured latency.
"""

from __future__ import annotations

import argparse
import sys
import time

from hetlab.errors import HetlabError

DEMO_ALGOS = ("ilp", "greedy", "heft", "dmdar", "mosaic", "partitiontuner")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "model", nargs="?", default="squeezenet", help="zoo name or .onnx path (default squeezenet)"
    )
    p.add_argument(
        "--devices",
        default=None,
        help="comma-separated device names (default: every CPU group, "
        "plus the first OpenCL device when it is a GPU)",
    )
    p.add_argument(
        "--repeat", type=int, default=10, help="measured runs per plan (median reported)"
    )
    p.add_argument("--quick", action="store_true", help="fewer profiling repeats (a rough profile)")


def _devices(every: list, names: str | None) -> list:
    """The devices ``--devices`` names, in its order, or by default every CPU group and the
    first OpenCL GPU."""
    if not names:
        return _default_devices(every)
    want = [s.strip() for s in names.split(",") if s.strip()]
    byname = {d.name: d for d in every}
    missing = [w for w in want if w not in byname]
    if missing:
        raise HetlabError(
            f"unknown device(s) {', '.join(missing)}; this machine has {', '.join(byname)}"
        )
    return [byname[w] for w in want]


def _plans(problem, devs: list, say) -> dict:
    """Each single-device plan, then each of ``DEMO_ALGOS`` that can schedule ``problem``
    (those that cannot are said and skipped)."""
    from hetlab.schedulers import schedule  # lazy, as in ``main``

    plans = {f"single:{d.name}": schedule(problem, f"single:{d.name}") for d in devs}
    for a in DEMO_ALGOS:
        try:
            plans[a] = schedule(problem, a)
        except HetlabError as e:
            say(f"{a:<16}skipped: {e}")
    return plans


def _default_devices(devs: list) -> list:
    cpus = [d for d in devs if d.kind == "onnxruntime-cpu"]
    gpus = [d for d in devs if d.kind == "opencl" and d.info().get("type") == "GPU"]
    return cpus + gpus[:1]


def main(args: argparse.Namespace) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.calibrate import profile
    from hetlab.commands.graph import format_summary
    from hetlab.devices.platform import devices as platform_devices
    from hetlab.executor import run
    from hetlab.graph.onnx_io import load
    from hetlab.schedulers.bounds import lower_bound

    def say(msg: str) -> None:
        print(msg, flush=True)

    g = load(args.model)
    say(format_summary(g.summary()))
    devs = _devices(platform_devices(), args.devices)
    say(f"\ndevices    {', '.join(f'{d.name} ({d.kind})' for d in devs)}")
    t0 = time.perf_counter()
    rep = {"repeat": 5, "rounds": 1, "seconds": 0.05} if args.quick else {}
    problem = profile(g, devs, **rep)
    say(
        f"profiled   {len(problem.nodes)} ops on {len(devs)} devices in {time.perf_counter() - t0:.1f} s"
    )
    say(f"lower bnd  {lower_bound(problem):.3f} ms\n")
    plans = _plans(problem, devs, say)
    say(f"{'algorithm':<16}{'predicted ms':>13}{'solve s':>9}")
    for name, p in plans.items():
        say(f"{name:<16}{p.makespan:>13.3f}{p.solve_seconds:>9.2f}")
    best_single = min(
        (k for k in plans if k.startswith("single:")), key=lambda k: plans[k].makespan
    )
    best = min((k for k in plans if not k.startswith("single:")), key=lambda k: plans[k].makespan)
    say(f"\nrunning {best} and {best_single} for real ({args.repeat} runs each, --check)")
    say(
        f"{'plan':<16}{'predicted':>10}{'measured':>10}{'p10':>8}{'p90':>8}{'error':>8}{'max_rel_err':>12}"
    )
    for k in (best_single, best):
        r = run(g, plans[k], devs, repeat=args.repeat, check=True).to_json()
        lat = r["latency_ms"]
        err = (lat["median"] - plans[k].makespan) / plans[k].makespan * 100
        say(
            f"{k:<16}{plans[k].makespan:>10.2f}{lat['median']:>10.2f}{lat['p10']:>8.2f}{lat['p90']:>8.2f}"
            f"{err:>7.0f}%{r['max_rel_err']:>12.1e}"
        )
    sys.stdout.flush()
    return 0
