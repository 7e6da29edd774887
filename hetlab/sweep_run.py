"""The engine of ``hetlab sweep`` (see ``hetlab.sweep``): grid cells keyed by content, one
Dask task per cell, per-cell checkpoints under ``OUT/cells``, the pandas table.

Makespans and lower bounds are in the problem's units (ms for profiles); seconds otherwise.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import os
import socket
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_bytes, atomic_write_json
from hetlab.schedulers import schedule
from hetlab.schedulers.base import algorithm
from hetlab.schedulers.bounds import lower_bound
from hetlab.sweep_cluster import local_client

CELL_VERSION = 1  # bump when a cell's record changes meaning: old checkpoints are then ignored


def problem_sha(doc: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def cells(
    problems: Mapping[str, Mapping[str, Any]], algos: Sequence[str], grid: Mapping[str, list[Any]]
) -> list[dict[str, Any]]:
    """Every cell: each problem x algorithm x the values of the grid's parameters that the
    algorithm takes (the others are left out, so they do not multiply its cells)."""

    shas = {name: problem_sha(doc) for name, doc in problems.items()}
    out = []
    for algo in algos:
        takes = {p.name for p in algorithm(algo).params}
        names = [k for k in grid if k in takes]
        for name in problems:
            for values in itertools.product(*(grid[k] for k in names)):
                params = dict(zip(names, values, strict=False))
                key = hashlib.sha256(
                    json.dumps(
                        [CELL_VERSION, shas[name], algo, params], sort_keys=True, default=str
                    ).encode()
                ).hexdigest()[:20]
                out.append({"key": key, "problem": name, "algo": algo, "params": params})
    unknown = sorted(set(grid) - {p.name for a in algos for p in algorithm(a).params})
    if unknown:
        raise HetlabError(
            f"no algorithm among {', '.join(algos)} takes parameter(s) {', '.join(unknown)}"
        )
    return out


_PROBLEMS: dict[str, Any] = {}


def solve_cell(doc: Mapping[str, Any], algo: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Schedule one cell (runs on a worker): makespan, lower bound (problem units), their
    gap, solve seconds; ``status`` is ``ok`` or the error's one line."""

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
        rec.update(
            status="ok",
            makespan=float(plan.makespan),
            solve_seconds=float(plan.solve_seconds),
            n_nodes=len(prob.nodes),
            n_devices=len(prob.devices),
            devices_used=len({a.device for a in plan.assignments}),
        )
        try:
            lb = float(lower_bound(prob))
        except ImportError:
            lb = math.nan
        rec["lower_bound"] = lb
        rec["gap"] = plan.makespan / lb - 1 if lb > 0 else math.nan
    except HetlabError as e:  # bad input: the same every time, so it is checkpointed
        rec.update(status=f"error: {e}")
    except Exception as e:  # noqa: BLE001 - a bug in one algorithm must not end the sweep
        rec.update(status=f"failed: {type(e).__name__}: {str(e)[:300]}")
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
    # lazy: pandas is slow to import
    import pandas as pd

    rows = []
    for r in records:
        row = {"problem": r["problem"], "algo": r["algo"]}
        row.update({k: r["params"].get(k) for k in grid_names})
        row.update(dict(r["result"].items()))
        row.update(key=r["key"], reused=r.get("reused", False))
        rows.append(row)
    return pd.DataFrame(rows)


def write_table(df: Any, out: Path) -> Path:
    """``sweep.parquet`` when pyarrow is there, else ``sweep.csv`` (atomically)."""

    try:
        # lazy: pyarrow is optional and slow to import
        import pyarrow  # noqa: F401

        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return atomic_write_bytes(out / "sweep.parquet", buf.getvalue())
    except ImportError:
        return atomic_write_bytes(out / "sweep.csv", df.to_csv(index=False).encode())


class _Bar:
    """tqdm's bar (its notebook widget under Jupyter) when tqdm is there, else ``progress_bar``."""

    def __init__(self, t0: float) -> None:
        self.t0, self.bar = t0, None
        try:
            # lazy: tqdm is optional
            from tqdm.auto import tqdm

            self.tqdm = tqdm
        except ImportError:
            self.tqdm = None

    def __call__(self, done: int, total: int, reused: int) -> None:
        if self.tqdm is None:
            return progress_bar(done, total, reused, self.t0)
        if self.bar is None:
            self.bar = self.tqdm(
                total=total, initial=done, unit="cell", desc=f"sweep ({reused} reused)"
            )
        self.bar.update(done - self.bar.n)
        if done == total:
            self.bar.close()


def progress_bar(done: int, total: int, reused: int, t0: float, stream: Any = None) -> None:
    """A one-line text bar on stderr."""
    stream = stream or sys.stderr
    w = 30
    fill = int(w * done / max(1, total))
    rate = (done - reused) / max(1e-9, time.monotonic() - t0)
    eta = (total - done) / rate if rate > 0 else math.inf
    eta_s = "" if done == total or math.isinf(eta) else f" eta {eta:.0f}s"
    stream.write(
        f"\r[{'#' * fill}{'.' * (w - fill)}] {done}/{total} cells ({reused} reused){eta_s}  "
    )
    if done == total:
        stream.write("\n")
    stream.flush()


def run_sweep(
    problems: Mapping[str, Mapping[str, Any]],
    algos: Sequence[str],
    grid: Mapping[str, list[Any]],
    out: str | Path,
    client: Any = None,
    progress: bool | Callable[[int, int, int], Any] = True,
) -> Any:
    """Solve the grid on ``client`` (a ``dask.distributed.Client``; default: a LocalCluster
    for the call), checkpointing each cell under ``out/cells``; returns the DataFrame (also
    written, see ``write_table``) with ``attrs["computed"]``/``attrs["reused"]`` counts."""

    out = Path(out)
    cell_dir = out / "cells"
    cell_dir.mkdir(parents=True, exist_ok=True)
    todo_all = cells(problems, algos, grid)
    done = read_checkpoints(cell_dir, {c["key"] for c in todo_all})
    todo = [c for c in todo_all if c["key"] not in done]
    total, n_reused, t0 = len(todo_all), len(done), time.monotonic()
    tick = progress if callable(progress) else _Bar(t0) if progress else None
    if tick:
        tick(len(done), total, n_reused)
    if todo:
        own = client is None
        if own:
            client = local_client()
        try:
            # lazy: dask is optional and slow to import
            from dask.distributed import as_completed

            futs = _submit(client, problems, todo)
            for fut, result in as_completed(futs, with_results=True):
                c = futs[fut]
                if not isinstance(result, Mapping):  # the cell's future failed or was cancelled
                    result = {"status": f"failed: {type(result).__name__}: {result}"[:300]}
                rec = {**c, "result": result}
                if not str(result.get("status", "")).startswith("failed"):  # retried next time
                    atomic_write_json(cell_dir / f"{c['key']}.json", rec)
                done[c["key"]] = rec
                if tick:
                    tick(len(done), total, n_reused)
        finally:
            if own:
                _close(client)
    fresh = {c["key"] for c in todo}
    records = [{**done[c["key"]], "reused": c["key"] not in fresh} for c in todo_all]
    df = table(records, list(grid))
    df.attrs.update(computed=len(todo), reused=n_reused)
    write_table(df, out)
    return df


def _submit(
    client: Any, problems: Mapping[str, Mapping[str, Any]], todo: Sequence[Mapping[str, Any]]
) -> dict[Any, Mapping[str, Any]]:
    """Each cell of ``todo`` submitted to ``client`` (its problem scattered once): future ->
    cell."""
    needed = sorted({c["problem"] for c in todo})
    # fresh keys per call: a content-hashed key that the previous call is still
    # releasing on the scheduler comes back as "lost data" and a cancelled cell
    payload = [dict(problems[n]) for n in needed]
    scattered = dict(zip(needed, client.scatter(payload, hash=False), strict=False))
    run_id = uuid.uuid4().hex[:8]
    return {
        client.submit(
            solve_cell,
            scattered[c["problem"]],
            c["algo"],
            c["params"],
            key=f"hetlab-cell-{c['key']}-{run_id}",
            pure=False,
        ): c
        for c in todo
    }


def _close(client: Any) -> None:
    """Close a client this module made, and its cluster."""
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()
