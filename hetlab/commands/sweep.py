"""``hetlab sweep``: a grid of problems x algorithms x parameters solved on Dask.

    hetlab sweep PROBLEM.json... [--models a,b] --algos greedy,ilp [--epsilon 0.1,0.2]
        [--nt 8,12] [--k 2,3] [--node-limit 200,1000] [--time-limit 10] [--param NAME=V1,V2]
        --out DIR
        [--scheduler tcp://HOST:PORT | --workers N [--threads]]

Each cell (one problem, one algorithm, one value of each parameter the algorithm takes) is
``schedule(problem, algo, **params)`` on a Dask worker; its record (makespan and lower bound
in the problem's units, ms for profiles; solve seconds) is written to ``DIR/cells/<key>.json``
as soon as it arrives, ``key`` hashing the problem's content, the algorithm and the
parameters, so a stopped sweep started again only computes the missing cells. The table of
the whole grid is ``DIR/sweep.parquet`` (with pyarrow) or ``DIR/sweep.csv``. By default a
``dask.distributed.LocalCluster`` of single-threaded worker processes runs it, one per CPU that
the container's cgroup grants (quota and memory, not the visible cores: ``worker_sizing``);
``--scheduler`` uses a running cluster instead (``dask scheduler`` + ``dask worker`` on a lab's
machines, each with hetlab installed): problems travel to workers as data, no shared files.
``--models`` profiles zoo models on this machine's devices first (the profiler's cache is
reused) and sweeps their problems too.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hetlab.errors import HetlabError
from hetlab.sweep import load_problems, profiled_models
from hetlab.sweep_cluster import local_client
from hetlab.sweep_run import cells, run_sweep

FLAGS = {
    "epsilon": "epsilon",
    "nt": "nt",
    "k": "k",
    "node_limit": "node-limit",
    "time_limit": "time-limit",
}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "problems",
        nargs="*",
        help="problem files or globs (spec §2), e.g. data/hope-profiles/*.json",
    )
    p.add_argument("--models", help="comma-separated zoo models to profile here and sweep too")
    p.add_argument("--devices", help="with --models: devices to profile on (default all)")
    p.add_argument("--platform", metavar="FILE", help="with --models: platform file")
    p.add_argument(
        "--algos", required=True, help="comma-separated algorithms, e.g. greedy,ilp,heft"
    )
    for name, flag in FLAGS.items():
        p.add_argument(f"--{flag}", dest=name, help=f"comma-separated values of {name}")
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=V1,V2", help="any other parameter"
    )
    p.add_argument(
        "--out", required=True, metavar="DIR", help="results: sweep table, cells/ checkpoints"
    )
    p.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="a running Dask scheduler (default: LocalCluster)",
    )
    p.add_argument(
        "--workers", type=int, help="LocalCluster workers (default: the CPUs the cgroup grants)"
    )
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
                raise HetlabError(
                    f"{what}: {s!r} is not a number; give comma-separated values"
                ) from None
    if not out:
        raise HetlabError(f"{what}: no values given")
    return out


def grid_from_args(args: argparse.Namespace) -> dict[str, list[Any]]:
    grid = {
        name: parse_values(getattr(args, name), f"--{flag}")
        for name, flag in FLAGS.items()
        if getattr(args, name, None)
    }
    for item in args.param:
        name, eq, vals = item.partition("=")
        if not eq or not name.strip():
            raise HetlabError(f"--param {item!r}: write NAME=V1,V2 (e.g. --param passes=1,2)")
        grid[name.strip()] = parse_values(vals, f"--param {name}")
    return grid


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
        # lazy: dask is optional and slow to import
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
    print(
        f"{len(df)} cells ({df.attrs['computed']} computed, {df.attrs['reused']} reused), {len(ok)} ok -> {out}"
    )
    if len(ok):
        cols = ["makespan", "gap", "solve_seconds"]
        print(ok.groupby("algo")[cols].median().round(4).to_string())
    return 0
