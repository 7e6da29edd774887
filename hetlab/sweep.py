"""``hetlab sweep``: a grid of problems x algorithms x parameters solved on Dask (issue 8).

    hetlab sweep PROBLEM.json... [--models a,b] --algos greedy,ilp [--epsilon 0.1,0.2]
        [--nt 8,12] [--k 2,3] [--time-limit 0.5,2] [--param NAME=V1,V2] --out DIR
        [--scheduler tcp://HOST:PORT | --workers N [--threads]]

Each cell (one problem, one algorithm, one value of each parameter the algorithm takes) is
``schedule(problem, algo, **params)`` on a Dask worker; its record (makespan and lower bound
in the problem's units, ms for profiles; solve seconds) is written to ``DIR/cells/<key>.json``
as soon as it arrives, ``key`` hashing the problem's content, the algorithm and the
parameters, so a stopped sweep started again only computes the missing cells. The table of
the whole grid is ``DIR/sweep.parquet`` (with pyarrow) or ``DIR/sweep.csv``. By default a
``dask.distributed.LocalCluster`` of one single-threaded worker process per core runs it;
``--scheduler`` uses a running cluster instead (``dask scheduler`` + ``dask worker`` on a lab's
machines, each with hetlab installed): problems travel to workers as data, no shared files.
``--models`` profiles zoo models on this machine's devices first (the profiler's cache is
reused) and sweeps their problems too.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import itertools
import json
import math
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hetlab.errors import HetlabError

CELL_VERSION = 1  # bump when a cell's record changes meaning: old checkpoints are then ignored
FLAGS = {"epsilon": "epsilon", "nt": "nt", "k": "k", "time_limit": "time-limit"}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("problems", nargs="*", help="problem files or globs (spec §2), e.g. shared/hope-profiles/*.json")
    p.add_argument("--models", help="comma-separated zoo models to profile here and sweep too")
    p.add_argument("--devices", help="with --models: devices to profile on (default all)")
    p.add_argument("--platform", metavar="FILE", help="with --models: platform file")
    p.add_argument("--algos", required=True, help="comma-separated algorithms, e.g. greedy,ilp,heft")
    for name, flag in FLAGS.items():
        p.add_argument(f"--{flag}", dest=name, help=f"comma-separated values of {name}")
    p.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2", help="any other parameter")
    p.add_argument("--out", required=True, metavar="DIR", help="results: sweep table, cells/ checkpoints")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a running Dask scheduler (default: LocalCluster)")
    p.add_argument("--workers", type=int, help="LocalCluster workers (default: usable cores)")
    p.add_argument("--threads", action="store_true", help="LocalCluster of threads in this process")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def parse_values(text: str, what: str) -> list[Any]:
    """``"0.1,0.2"`` -> ``[0.1, 0.2]`` (ints stay ints; ``true``/``false``; ``none``)."""
    out: list[Any] = []
    for s in text.split(","):
        s = s.strip()
        if not s:
            continue
        low = s.lower()
        if low in ("true", "false"):
            out.append(low == "true")
        elif low == "none":
            out.append(None)
        else:
            try:
                out.append(int(s) if s.lstrip("-").isdigit() else float(s))
            except ValueError:
                raise HetlabError(f"{what}: {s!r} is not a number; give comma-separated values") from None
    if not out:
        raise HetlabError(f"{what}: no values given")
    return out


def grid_from_args(args: argparse.Namespace) -> dict[str, list[Any]]:
    grid = {name: parse_values(getattr(args, name), f"--{flag}")
            for name, flag in FLAGS.items() if getattr(args, name, None)}  # fmt: skip
    for item in args.param:
        name, eq, vals = item.partition("=")
        if not eq or not name.strip():
            raise HetlabError(f"--param {item!r}: write NAME=V1,V2 (e.g. --param passes=1,2)")
        grid[name.strip()] = parse_values(vals, f"--param {name}")
    return grid


def problem_sha(doc: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def cells(problems: Mapping[str, Mapping[str, Any]], algos: Sequence[str], grid: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """Every cell: each problem x algorithm x the values of the grid's parameters that the
    algorithm takes (the others are left out, so they do not multiply its cells)."""
    from hetlab.schedulers.base import algorithm

    shas = {name: problem_sha(doc) for name, doc in problems.items()}
    out = []
    for algo in algos:
        takes = {p.name for p in algorithm(algo).params}
        names = [k for k in grid if k in takes]
        for name in problems:
            for values in itertools.product(*(grid[k] for k in names)):
                params = dict(zip(names, values))
                key = hashlib.sha256(json.dumps([CELL_VERSION, shas[name], algo, params], sort_keys=True,
                                                default=str).encode()).hexdigest()[:20]  # fmt: skip
                out.append({"key": key, "problem": name, "algo": algo, "params": params})
    unknown = sorted(set(grid) - {p.name for a in algos for p in algorithm(a).params})
    if unknown:
        raise HetlabError(f"no algorithm among {', '.join(algos)} takes parameter(s) {', '.join(unknown)}")
    return out


_PROBLEMS: dict[str, Any] = {}


def solve_cell(doc: Mapping[str, Any], algo: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Schedule one cell (runs on a worker): makespan, lower bound (problem units), their
    gap, solve seconds; ``status`` is ``ok`` or the error's one line."""
    from hetlab.cost.problem import Problem
    from hetlab.schedulers import schedule

    t0 = time.perf_counter()
    rec: dict[str, Any] = {"worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        sha = problem_sha(doc) if len(_PROBLEMS) < 64 else None
        prob = _PROBLEMS.get(sha) if sha else None
        if prob is None:
            prob = Problem.from_json(dict(doc))
            if sha:
                _PROBLEMS[sha] = prob
        plan = schedule(prob, algo, **params)
        rec.update(status="ok", makespan=float(plan.makespan), solve_seconds=float(plan.solve_seconds),
                   n_nodes=len(prob.nodes), n_devices=len(prob.devices),
                   devices_used=len({a.device for a in plan.assignments}))  # fmt: skip
        try:
            from hetlab.schedulers.bounds import lower_bound

            lb = float(lower_bound(prob))
        except ImportError:
            lb = math.nan
        rec["lower_bound"] = lb
        rec["gap"] = plan.makespan / lb - 1 if lb > 0 else math.nan
    except HetlabError as e:
        rec.update(status=f"error: {e}")
    rec["wall_s"] = round(time.perf_counter() - t0, 4)
    return rec


def read_checkpoints(cell_dir: Path, keys: set[str]) -> dict[str, dict[str, Any]]:
    done = {}
    for key in keys:
        f = cell_dir / f"{key}.json"
        if f.is_file():
            try:
                done[key] = json.loads(f.read_text())
            except (OSError, ValueError):
                continue  # a damaged checkpoint is recomputed
    return done


def table(records: Sequence[Mapping[str, Any]], grid_names: Sequence[str]) -> Any:
    """The pandas DataFrame: one row per cell, one column per swept parameter (NaN where
    the algorithm does not take it)."""
    import pandas as pd

    rows = []
    for r in records:
        row = {"problem": r["problem"], "algo": r["algo"]}
        row.update({k: r["params"].get(k) for k in grid_names})
        row.update({k: v for k, v in r["result"].items()})
        row.update(key=r["key"], reused=r.get("reused", False))
        rows.append(row)
    return pd.DataFrame(rows)


def write_table(df: Any, out: Path) -> Path:
    """``sweep.parquet`` when pyarrow is there, else ``sweep.csv`` (atomically)."""
    from hetlab.fileio import atomic_write_bytes

    try:
        import pyarrow  # noqa: F401

        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return atomic_write_bytes(out / "sweep.parquet", buf.getvalue())
    except ImportError:
        return atomic_write_bytes(out / "sweep.csv", df.to_csv(index=False).encode())


def progress_bar(done: int, total: int, reused: int, t0: float, stream: Any = None) -> None:
    stream = stream or sys.stderr
    w = 30
    fill = int(w * done / max(1, total))
    rate = (done - reused) / max(1e-9, time.monotonic() - t0)
    eta = (total - done) / rate if rate > 0 else math.inf
    eta_s = "" if done == total or math.isinf(eta) else f" eta {eta:.0f}s"
    stream.write(f"\r[{'#' * fill}{'.' * (w - fill)}] {done}/{total} cells ({reused} reused){eta_s}  ")
    if done == total:
        stream.write("\n")
    stream.flush()


def run_sweep(problems: Mapping[str, Mapping[str, Any]], algos: Sequence[str], grid: Mapping[str, list[Any]],
              out: str | Path, client: Any = None, progress: bool | Callable[[int, int, int], Any] = True) -> Any:  # fmt: skip
    """Solve the grid on ``client`` (a ``dask.distributed.Client``; default: a LocalCluster
    for the call), checkpointing each cell under ``out/cells``; returns the DataFrame (also
    written, see ``write_table``) with ``attrs["computed"]``/``attrs["reused"]`` counts."""
    from hetlab.fileio import atomic_write_json

    out = Path(out)
    cell_dir = out / "cells"
    cell_dir.mkdir(parents=True, exist_ok=True)
    todo_all = cells(problems, algos, grid)
    done = read_checkpoints(cell_dir, {c["key"] for c in todo_all})
    todo = [c for c in todo_all if c["key"] not in done]
    total, n_reused, t0 = len(todo_all), len(done), time.monotonic()
    tick = progress if callable(progress) else (lambda d, t, r: progress_bar(d, t, r, t0)) if progress else None
    if tick:
        tick(len(done), total, n_reused)
    if todo:
        own = client is None
        if own:
            client = local_client()
        try:
            from dask.distributed import as_completed

            needed = sorted({c["problem"] for c in todo})
            scattered = dict(zip(needed, client.scatter([dict(problems[n]) for n in needed])))
            futs = {client.submit(solve_cell, scattered[c["problem"]], c["algo"], c["params"],
                                  key=f"hetlab-cell-{c['key']}", pure=False): c for c in todo}  # fmt: skip
            for fut, result in as_completed(futs, with_results=True):
                c = futs[fut]
                rec = {**c, "result": result}
                atomic_write_json(cell_dir / f"{c['key']}.json", rec)
                done[c["key"]] = rec
                if tick:
                    tick(len(done), total, n_reused)
        finally:
            if own:
                cluster = getattr(client, "cluster", None)
                client.close()
                if cluster is not None:
                    cluster.close()
    fresh = {c["key"] for c in todo}
    records = [{**done[c["key"]], "reused": c["key"] not in fresh} for c in todo_all]
    df = table(records, list(grid))
    df.attrs.update(computed=len(todo), reused=n_reused)
    write_table(df, out)
    return df


def local_client(workers: int | None = None, threads: bool = False) -> Any:
    """A Client on a new LocalCluster: ``workers`` single-threaded workers (default: the
    usable cores), as processes (or threads of this process with ``threads``)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise HetlabError('hetlab sweep needs Dask: pip install "dask[distributed]"') from None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    n = workers or cores
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=not threads, dashboard_address=None)
    return Client(cluster)


def load_problems(paths: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{name: problem document}`` from files/globs; names are file stems (made unique)."""
    from hetlab.fileio import read_json

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
        from hetlab.cost.problem import Problem

        Problem.from_json(doc, source=f)  # validate here: one clear line, before any worker starts
        out[name] = doc
    return out


def profiled_models(models: Sequence[str], devices: str | None, platform: str | None, out: Path) -> dict[str, dict[str, Any]]:
    """Profile zoo ``models`` on this machine (saved under ``out/problems``) as documents."""
    from hetlab import zoo
    from hetlab.devices.platform import devices as platform_devices
    from hetlab.graph import load

    try:
        from hetlab.cost import profile
    except ImportError:
        raise HetlabError("--models needs the profiler (hetlab.cost.profile); give problem files instead") from None
    devs = platform_devices(platform)
    if devices:
        devs = [d for d in devs if d.name in devices.split(",")]
    docs = {}
    for m in models:
        p = profile(load(str(zoo.path(m))), devs)
        docs[m] = p.to_json()
        p.save(out / "problems" / f"{m}.json")
    return docs


def main(args: argparse.Namespace) -> int:
    algos = [a.strip() for a in args.algos.split(",") if a.strip()]
    grid = grid_from_args(args)
    out = Path(args.out)
    problems = load_problems(args.problems) if args.problems else {}
    if args.models:
        problems.update(profiled_models(args.models.split(","), args.devices, args.platform, out))
    if not problems:
        raise HetlabError("give problem files (or globs) and/or --models")
    cells(problems, algos, grid)  # unknown algorithms/parameters fail before a cluster starts
    client = None
    if args.scheduler:
        from dask.distributed import Client

        try:
            client = Client(args.scheduler, timeout=10)
        except OSError as e:
            raise HetlabError(f"cannot reach the Dask scheduler {args.scheduler}: {e}") from None
    else:
        client = local_client(args.workers, args.threads)
    try:
        df = run_sweep(problems, algos, grid, out, client, progress=not args.quiet)
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and not args.scheduler:
            cluster.close()
    ok = df[df["status"] == "ok"]
    print(f"{len(df)} cells ({df.attrs['computed']} computed, {df.attrs['reused']} reused), {len(ok)} ok -> {out}")
    if len(ok):
        cols = ["makespan", "gap", "solve_seconds"]
        print(ok.groupby("algo")[cols].median().round(4).to_string())
    return 0
