"""Measured against predicted, and where the difference goes (issue 6): for each model,
profile on the devices (or read ``OUT/problems/<model>.json``), schedule with each
``--algos``, then run them in interleaved rounds (each round visits every plan x variant once,
in a shuffled order) so that drift hits all of them alike. A visit prepares the plan, runs
it ``--per-visit`` times and closes it (``--live one``): the sessions of every plan kept
alive at once slow the CPU groups down (``session_residue.py``; ``--live all`` keeps them).

    python benchmarks/fidelity.py --models googlenet,inception_v3 --devices cpu0,cpu1,cl0 \
        --algos single:cl0,single:cpu0,heft,greedy,ilp,dmdar --rounds 15 --out DIR

Variants (``--variants``): ``built`` is the executor as built (GIL switch interval 0.1 ms
during a run, the OpenCL driver's threads where they started); ``drvpinned`` pins the driver's
threads to the GPU's host core (``HETLAB_PIN_DRIVER_THREADS=1``); ``gil5ms`` leaves Python's
default 5 ms switch interval, ``gil20us`` sets 20 us; ``small1t`` runs every CPU unit under
``SMALL_FLOPS`` on one thread (no pool to wake). ``overhead_us_per_unit`` is (measured -
predicted) / units. Per plan and variant: the predicted makespan (spec
§3 on the profile), the measured median / p10 / p90 of ``--rounds`` runs, and, for the
median run, each device's busy time (sum of its unit dispatches) and transfer time (sends
and receives) against the plan's predicted busy time (sum of its node costs there) and
predicted transfers (the plan's idle-on-receive). ``DIR/fidelity.json`` holds everything.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# name -> (GIL switch interval during a run in s or None for Python's, driver threads pinned,
# CPU units under this many flops on one thread)
VARIANTS = {
    "built": (1e-4, False, 0),
    "drvpinned": (1e-4, True, 0),
    "gil5ms": (None, False, 0),
    "gil20us": (2e-5, False, 0),
    "small1t": (1e-4, False, 2_000_000),
}


def variant_devices(devs: list[Any], small_flops: int) -> list[Any]:
    """``devs`` with each CPU group rebuilt to run units under ``small_flops`` on one thread."""
    from hetlab.devices.ort_cpu import OrtCpuDevice

    if not small_flops:
        return devs
    return [
        OrtCpuDevice(d.name, d.cores, d.threads, spin=d.spin, small_flops=small_flops)
        if isinstance(d, OrtCpuDevice)
        else d
        for d in devs
    ]


def set_driver_threads(devs: list[Any], pinned: bool) -> None:
    """Pin the OpenCL devices' driver threads to their host cores, or free them to every core."""
    import os

    from hetlab.devices.opencl.threads import pin

    for d in devs:
        if getattr(d, "driver_threads", None) and d.host_cores:
            pin(d.driver_threads, d.host_cores if pinned else range(os.cpu_count() or 1))


def cpu_steal() -> tuple[int, int]:
    """(steal, total) jiffies of all cores so far (/proc/stat): the time the hypervisor ran
    something else on our virtual CPUs; (0, 0) where there is no /proc/stat."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return (0, 0)
    return (f[7] if len(f) > 7 else 0, sum(f[:8]))


def relative(rows: list[dict]) -> None:
    """Add ``vs_single``: (measured / predicted) over the same for the model's ``single:``
    plan on the device the plan uses most, measured in the same rounds (cancels the machine's
    drift between profiling and running)."""
    by = {(r["model"], r["algo"], r["variant"]): r for r in rows}
    for r in rows:
        dev = max(r["devices"], key=r["devices"].get)
        s = by.get((r["model"], f"single:{dev}", r["variant"]))
        if s:
            r["vs_single"] = round(r["ratio"] / s["ratio"], 3)


def busy_by_device(events: list[Any]) -> dict[str, dict[str, float]]:
    """Per device: ms in unit dispatches and in transfers (send/recv) during one run."""
    out: dict[str, dict[str, float]] = {}
    for ev in events:
        d = out.setdefault(ev.device, {"units": 0, "unit_ms": 0.0, "transfer_ms": 0.0})
        if ev.kind == "unit":
            d["units"] += 1
            d["unit_ms"] += ev.finish - ev.start
        elif ev.kind in ("send", "recv"):
            d["transfer_ms"] += ev.finish - ev.start
    return {k: {kk: round(vv, 4) for kk, vv in v.items()} for k, v in out.items()}


def predicted_busy(plan: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for a in plan.assignments:
        out[a.device] = out.get(a.device, 0.0) + (a.finish - a.start)
    return {k: round(v, 4) for k, v in out.items()}


def contention(
    graph: Any, devs: list[Any], feed: dict[str, Any], n: int = 9, interval: float | None = 1e-4
) -> dict[str, float]:
    """``{"a|b": slowdown}``: the whole model's median time on ``a`` while ``b`` runs the whole
    model over and over on its own thread, divided by ``a``'s median alone (after a warm-up).
    The standard timing model (spec §3) takes devices as independent, i.e. every factor 1.
    ``interval``: the GIL switch interval meanwhile, the executor's 0.1 ms by default (with
    Python's 5 ms, a thread waits up to 5 ms for the GIL each time a run returns while the other
    runs Python: lstm on a CPU group measured 94-190x slower on the H100, 0.5-0.8x at 0.1 ms;
    ``contention_causes.py``)."""
    import sys
    import threading

    old = sys.getswitchinterval()
    if interval:
        sys.setswitchinterval(interval)
    try:
        return _contention(graph, devs, feed, n, threading)
    finally:
        sys.setswitchinterval(old)


def _contention(
    graph: Any, devs: list[Any], feed: dict[str, Any], n: int, threading: Any
) -> dict[str, float]:

    units, ins = {}, {}
    for d in devs:
        if all(d.supports(x, graph) for x in graph.nodes):
            units[d.name] = d.prepare(graph, [x.id for x in graph.nodes])
            ins[d.name] = {t: d.copy_in(feed[t]) for t in units[d.name].inputs}
    by = {d.name: d for d in devs}

    def times(name: str, k: int, stop: threading.Event | None = None) -> list[float]:
        by[name].bind_thread()
        out = []
        while len(out) < k or (stop is not None and not stop.is_set()):
            r = by[name].run(units[name], ins[name])
            out.append((r.finish - r.start) * 1e3)
            if stop is None and len(out) >= k:
                break
        return out

    for a in units:  # warm-up: a session's first runs are slow
        times(a, 3)
    alone = {a: statistics.median(times(a, n)) for a in units}
    res = {}
    for a in units:
        for b in units:
            if a == b:
                continue
            stop = threading.Event()
            th = threading.Thread(target=times, args=(b, 1, stop), daemon=True)
            th.start()
            together = statistics.median(times(a, n))
            stop.set()
            th.join()
            res[f"{a}|{b}"] = round(together / alone[a], 3)
    print(
        "  contention (a's time while b is busy / alone): "
        + ", ".join(f"{k} x{v:.2f}" for k, v in res.items())
        + " | alone ms: "
        + ", ".join(f"{k} {v:.2f}" for k, v in alone.items()),
        flush=True,
    )
    return res


def bench_model(
    model: str,
    devs: list[Any],
    algos: list[str],
    rounds: int,
    out: Path,
    seed: int,
    variants: list[str] | None = None,
    gap_ms: float = 5.0,
    live: str = "one",
    per_visit: int = 3,
) -> list[dict]:
    from fig4_env import profile_model

    from hetlab import zoo
    from hetlab.executor.check import max_rel_err, reference_outputs
    from hetlab.executor.interpreter import Executor
    from hetlab.graph import load
    from hetlab.graph.inputs import random_inputs
    from hetlab.schedulers import schedule

    graph = load(str(zoo.path(model)))
    t0 = time.monotonic()
    problem, how = profile_model(
        graph,
        devs,
        out / "problems" / f"{model}.json",
        {"repeat": 10, "warmup": 2, "rounds": 1, "seconds": 0.05},
    )
    print(f"{model}: profile {how} in {time.monotonic() - t0:.1f} s", flush=True)
    devmap = {d.name: d for d in devs}
    feed = random_inputs(graph, seed)
    ref = reference_outputs(graph.model_path or "", feed, list(graph.outputs))
    cont = contention(graph, devs, feed)
    variants = variants or ["built"]
    for d in devs:  # contention's whole-model sessions
        d.forget()
    plans: dict[str, Any] = {}
    execs: dict[tuple[str, str], Any] = {}
    units: dict[tuple[str, str], int] = {}

    def make_exec(p: Any, v: str) -> Any:
        dm = (
            {d.name: d for d in variant_devices(devs, VARIANTS[v][2])} if VARIANTS[v][2] else devmap
        )
        ex = Executor(graph, p.device_of, dm, p.order, p.sequential)
        ex.prepare()
        for _ in range(3):  # new sessions: their first runs are slow
            ex.run_once(feed)
        return ex

    for algo in algos:
        try:
            p = schedule(problem, algo, **({"time_limit": 0.2} if algo == "ilp" else {}))
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"  {algo}: schedule error {e}", flush=True)
            continue
        for v in variants:
            ex = make_exec(p, v)
            rep = ex.run_once(feed)
            units[(algo, v)] = len(ex.specs)
            if live == "all":
                execs[(algo, v)] = ex
            else:
                ex.close()
        plans[algo] = p
        print(
            f"  {algo}: {units[(algo, variants[-1])]} units, predicted {p.makespan:.3f} ms, "
            f"max_rel_err {max_rel_err(rep.outputs, ref):.2e}",
            flush=True,
        )
    walls: dict[tuple[str, str], list[float]] = {(a, v): [] for a in plans for v in variants}
    reps: dict[tuple[str, str], list[Any]] = {k: [] for k in walls}
    rng = random.Random(seed)
    keys = list(walls)
    steal: dict[tuple[str, str], list[int]] = {}
    for _ in range(rounds):
        rng.shuffle(keys)
        for a, v in keys:
            ex = execs[(a, v)] if live == "all" else make_exec(plans[a], v)
            ex.switch_interval_s = VARIANTS[v][0]
            set_driver_threads(devs, VARIANTS[v][1])
            for _ in range(per_visit):
                time.sleep(gap_ms / 1e3)  # lets the last plan's spinning pools go to sleep
                st0 = cpu_steal()
                r = ex.run_once(feed)
                st1 = cpu_steal()
                steal[(a, v)] = [
                    x + y1 - y0
                    for x, y0, y1 in zip(steal.get((a, v), [0, 0]), st0, st1, strict=False)
                ]
                walls[(a, v)].append(r.wall_ms)
                reps[(a, v)].append((r.wall_ms, r.events))
            if live != "all":
                ex.close()
    rows = []
    for (a, v), w in walls.items():
        p = plans[a]
        mid = sorted(reps[(a, v)], key=lambda x: x[0])[len(w) // 2][1]
        med = statistics.median(w)
        n_units = units[(a, v)]
        row = {
            "model": model,
            "algo": a,
            "variant": v,
            "units": n_units,
            "overhead_us_per_unit": round((med - p.makespan) / n_units * 1e3, 1),
            "devices": dict(
                sorted(
                    {
                        d: sum(1 for x in p.device_of.values() if x == d)
                        for d in set(p.device_of.values())
                    }.items()
                )
            ),
            "predicted_ms": round(p.makespan, 4),
            "median_ms": round(med, 4),
            "p10_ms": round(float(np.percentile(w, 10)), 4),
            "p90_ms": round(float(np.percentile(w, 90)), 4),
            "ratio": round(med / p.makespan, 3),
            "busy_measured": busy_by_device(mid),
            "busy_predicted": predicted_busy(p),
            "contention": cont,
            "steal": round(steal[(a, v)][0] / max(steal[(a, v)][1], 1), 4),
        }
        rows.append(row)
    relative(rows)
    for row in rows:
        a, v, p = row["algo"], row["variant"], plans[row["algo"]]
        med = row["median_ms"]
        print(
            f"  {a:<12} {v:<9} units {row['units']:>3} pred {p.makespan:8.3f} meas {med:8.3f} "
            f"({row['p10_ms']:.3f}-{row['p90_ms']:.3f}) x{row['ratio']:.2f} "
            f"vs single x{row.get('vs_single', float('nan')):.2f} steal {row['steal']:.1%} busy "
            + " ".join(
                f"{d}:{b['unit_ms']:.2f}+{b['transfer_ms']:.2f}/{row['busy_predicted'].get(d, 0):.2f}"
                for d, b in sorted(row["busy_measured"].items())
            ),
            flush=True,
        )
    for ex in execs.values():
        ex.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="googlenet,inception_v3")
    ap.add_argument("--devices", default=None, help="comma-separated device names (default: all)")
    ap.add_argument("--algos", default="single:cl0,single:cpu0,heft,greedy,ilp,dmdar")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--gap-ms", type=float, default=5.0, help="pause before each run (ms)")
    ap.add_argument(
        "--live",
        choices=("one", "all"),
        default="one",
        help="one: each visit prepares its plan, runs it --per-visit times, closes it "
        "(only one plan's sessions alive); all: every plan prepared once, kept",
    )
    ap.add_argument("--per-visit", type=int, default=3, help="runs per visit of a plan in a round")
    ap.add_argument("--variants", default="built", help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="fidelity-out")
    a = ap.parse_args(argv)
    from hetlab.devices.platform import devices as platform_devices

    devs = platform_devices()
    if a.devices:
        want = a.devices.split(",")
        devs = [d for d in devs if d.name in want]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    algos = [
        x
        for x in a.algos.split(",")
        if x.split(":", 1)[-1] in {d.name for d in devs} or ":" not in x
    ]
    rows = []
    for m in a.models.split(","):
        rows += bench_model(
            m,
            devs,
            algos,
            a.rounds,
            out,
            a.seed,
            a.variants.split(","),
            a.gap_ms,
            a.live,
            a.per_visit,
        )
        (out / "fidelity.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
