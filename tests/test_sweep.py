"""``hetlab sweep`` on a LocalCluster: the table, and no recomputation after a restart."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("dask.distributed")

from hetlab.sweep import cells, run_sweep
from tests.executor.dags import inception_problem, random_problem


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def problems():
    return {
        "rand": random_problem(30, 1).to_json(),
        "incep": inception_problem(blocks=2, branches=3, depth=2).to_json(),
    }


def test_cells_take_only_the_parameters_an_algorithm_has():
    cs = cells(problems(), ["heft", "dmdar"], {})
    assert len(cs) == 4 and all(c["params"] == {} for c in cs)
    assert len({c["key"] for c in cs}) == 4


def test_sweep_table_then_restart_recomputes_nothing(client, tmp_path):
    algos = ["heft", "mosaic", "dmdar"]
    calls = []
    df = run_sweep(
        problems(), algos, {}, tmp_path, client, progress=lambda d, t, r: calls.append((d, t, r))
    )
    assert (
        len(df) == 6 and set(df["algo"]) == set(algos) and set(df["problem"]) == {"rand", "incep"}
    )
    assert (df["status"] == "ok").all()
    assert df.attrs == {"computed": 6, "reused": 0}
    assert calls[-1] == (6, 6, 0)
    # a makespan is never below the lower bound (when the build has one)
    lb = df["lower_bound"]
    assert all(math.isnan(b) or m >= b - 1e-6 for m, b in zip(df["makespan"], lb, strict=False))
    assert len(list((tmp_path / "cells").glob("*.json"))) == 6
    table = (
        tmp_path / "sweep.parquet"
        if (tmp_path / "sweep.parquet").exists()
        else tmp_path / "sweep.csv"
    )
    assert table.is_file()

    df2 = run_sweep(problems(), algos, {}, tmp_path, client, progress=False)
    assert df2.attrs == {"computed": 0, "reused": 6} and df2["reused"].all()
    assert list(df2["makespan"]) == list(df["makespan"])

    # one more algorithm: only its cells are computed
    df3 = run_sweep(problems(), algos + ["peft"], {}, tmp_path, client, progress=False)
    assert df3.attrs == {"computed": 2, "reused": 6} and len(df3) == 8


def test_grid_parameters_multiply_cells(client, tmp_path):
    from hetlab.schedulers.base import MODULES, algorithm

    algo = "ilp" if "ilp" in MODULES and _available("ilp") else None
    if algo is None:
        pytest.skip("ilp is not in this build yet")
    grid = {"nt": [4, 8], "time_limit": [0.05]}
    # random_problem(16, 2) at nt=4 trips a MIP-start bound check in ilp_model (reported);
    # seed 5 solves at every nt
    df = run_sweep(
        {"rand": random_problem(16, 5).to_json()},
        [algo, "heft"],
        grid,
        tmp_path,
        client,
        progress=False,
    )
    assert len(df) == 3  # ilp x nt{4,8} x time_limit{0.05} + heft (takes neither)
    ilp = df[df["algo"] == algo]
    assert sorted(ilp["nt"]) == [4, 8] and (ilp["status"] == "ok").all(), list(ilp["status"])
    heft = df[df["algo"] == "heft"].iloc[0]
    assert heft["nt"] is None or math.isnan(heft["nt"])
    assert algorithm(algo)


def _available(name: str) -> bool:
    from hetlab.errors import HetlabError
    from hetlab.schedulers.base import algorithm

    try:
        algorithm(name)
        return True
    except (HetlabError, ModuleNotFoundError):
        return False


def test_a_crashing_cell_is_recorded_and_not_checkpointed(client, tmp_path, monkeypatch):
    from hetlab.schedulers import base

    def boom(problem, **kw):
        raise ZeroDivisionError("boom")

    algo = base.algorithm("heft")
    monkeypatch.setattr(algo, "func", boom)  # threads of this process share the registry
    df = run_sweep(
        {"rand": random_problem(8, 3).to_json()}, ["heft"], {}, tmp_path, client, progress=False
    )
    assert df["status"].iloc[0].startswith("failed: ZeroDivisionError")
    assert not list((tmp_path / "cells").glob("*.json"))


def test_a_cell_whose_future_fails_is_recorded_failed_and_not_checkpointed(tmp_path, monkeypatch):
    import dask.distributed

    from hetlab import sweep_run

    class FutureCancelledError(Exception):
        pass

    class Client:  # as_completed hands back a failed future's error, as dask does for lost data
        def scatter(self, data, hash=True):
            return list(data)

        def submit(self, fn, *args, key, pure):
            return key

    monkeypatch.setattr(
        dask.distributed,
        "as_completed",
        lambda futs, with_results: [(f, FutureCancelledError("lost data")) for f in futs],
    )
    df = sweep_run.run_sweep(problems(), ["heft"], {}, tmp_path, Client(), progress=False)
    assert list(df["status"].str.startswith("failed: FutureCancelledError")) == [True, True]
    assert not list((tmp_path / "cells").glob("*.json"))  # retried by the next sweep


@pytest.mark.parametrize(
    ("cpus", "memory", "workers", "want"),
    [
        (2.0, None, None, 2),  # the quota, not the visible cores
        (None, None, None, None),  # no quota: one per visible core
        (8.0, 3 << 30, None, 3),  # memory for 3 workers of 1 GiB only
        (8.0, 1 << 29, None, 1),  # never fewer than one
        (2.0, 8 << 30, 5, 5),  # an explicit count wins
    ],
)
def test_workers_are_sized_from_the_cgroup(monkeypatch, cpus, memory, workers, want):
    from hetlab.devices import cgroup
    from hetlab.sweep import worker_sizing

    visible = 16
    monkeypatch.setattr(cgroup.os, "sysconf", lambda k: {"SC_PAGE_SIZE": 4096}.get(k, 1 << 30))
    n, mem = worker_sizing(workers, cgroup.Limits(cpus=cpus, memory=memory), visible)
    machine = 4096 << 30
    assert n == (want if want is not None else visible)
    assert mem == min(memory or machine, machine) // n
