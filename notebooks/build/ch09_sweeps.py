"""Chapter 9: parameter sweeps on Dask, with workers sized to what the container grants."""

from __future__ import annotations

from .cells import code, exercise, md

NAME = "09_sweeps.ipynb"


def cells() -> list:
    return _intro() + _cells() + _workers() + _hand_sweep() + _phones()


def _intro() -> list:
    return [
        md(r"""
# 9 · Parameter sweeps on Dask

One plan answers one question. How ε and NT shape HOPE's ILP, or how the greedy search's K
trades time for quality, needs a **grid**: problems × algorithms × parameter values, each
**cell** one `schedule(problem, algo, **params)`. `hetlab.sweep` runs a grid on a Dask cluster,
one task per cell, and writes every finished cell to disk as it arrives, so a stopped or
enlarged sweep computes only what is missing.

**Learning objectives.** After this chapter you can

1. count the cells of a grid, knowing which parameters each algorithm takes;
2. size a local Dask cluster from what a container grants (its cgroup's CPU quota and memory),
   not from the cores it can see;
3. run a sweep, re-run it without recomputing, and read the gap to the lower bound against
   the solve time.
"""),
        code("""
import pandas as pd
import plotly.express as px
from hetlab.course import check, hand_dag, hint, small_dag, two_branch_dag
from hetlab.sweep import cells, local_client, run_sweep, worker_sizing
"""),
    ]


def _cells() -> list:
    return [
        md(r"""
## Cells

Each algorithm takes only some parameters (greedy takes $K$; the ILP takes $\varepsilon$, NT
and a time limit; HEFT takes none), and only those multiply its cells. For problems $P$,
algorithms $A$ and a grid of value lists $V_k$:

$$
|\text{cells}| = |P| \sum_{a \in A} \prod_{k \in \text{params}(a)} |V_k| .
$$

A hand-sized sweep: the two small DAGs of the course, greedy with three values of K, the ILP
with two values of NT, and HEFT.
"""),
        code("""
hand_dag(two_branch_dag(), title="two-branch DAG (ms on each device)")
"""),
        code("""
hand = {"small_dag": small_dag().to_json(), "two_branch": two_branch_dag().to_json()}
hand_grid = {"k": [1, 2, 3], "nt": [3, 6], "epsilon": [0.2], "time_limit": [1.0]}
pd.DataFrame(cells(hand, ["greedy", "ilp", "heft"], hand_grid))
"""),
    ]


def _workers() -> list:
    return [
        md(r"""
## How many workers?

A container often *sees* every core of its host while its cgroup grants only a share of CPU
time: `cpu.max` reads `QUOTA PERIOD` (µs), that is $\text{QUOTA}/\text{PERIOD}$ CPUs, and
`memory.max` caps its memory. One worker per visible core would then oversubscribe the quota
and compete for memory. `worker_sizing` starts one single-threaded worker per whole CPU
granted, and no more than the memory gives 1 GiB each.
"""),
        code("""
from hetlab.devices import cgroup
import os
print("visible cores:", len(os.sched_getaffinity(0)), "| cgroup:", cgroup.limits())
n, mem = worker_sizing()
print(f"-> {n} workers" + (f", {mem / 2**30:.1f} GiB each" if mem else ""))
"""),
        *exercise(
            "ch09.cells",
            "Three phone profiles, the algorithms greedy, ilp and heft, and the grid "
            "`{'nt': [6, 12], 'epsilon': [0.1, 0.2, 0.4], 'k': [2, 3, 4], 'time_limit': [0.2]}`: "
            "how many cells per problem for each algorithm, and in all?",
            """
answer = {"per_problem": {"greedy": 3, "ilp": 2 * 3 * 1, "heft": 1}, "total": 3 * 10}
""",
        ),
        *exercise(
            "ch09.workers",
            "A container sees 8 cores; its `cpu.max` reads `150000 100000` and its "
            "`memory.max` 3 GiB. How many CPUs does it grant, and how many workers should a "
            "sweep start?",
            """
answer = {"cpus": 1.5, "workers": 1}  # one worker per whole CPU granted
""",
        ),
    ]


def _hand_sweep() -> list:
    return [
        md("""
## Running the hand-sized sweep

`local_client()` starts the cluster sized as above; `dashboard=True` serves Dask's dashboard,
where every task of the sweep can be watched.
"""),
        code("""
client = local_client(dashboard=True)
print("workers:", len(client.scheduler_info()["workers"]), "| dashboard:", client.dashboard_link)
df = run_sweep(hand, ["greedy", "ilp", "heft"], hand_grid, "sweeps/hand", client, progress=False)
print(df.attrs)
df["setting"] = df.algo + df.k.map(lambda k: f" K={k:g}" if k == k else "") + df.nt.map(
    lambda n: f" NT={n:g}" if n == n else "")
import plotly.graph_objects as go
tab = df.pivot(index="setting", columns="problem", values="makespan")
rel = tab / tab.min()  # each problem against its best cell
go.Figure(go.Heatmap(z=rel.values, x=rel.columns, y=rel.index, text=tab.round(2).values,
                     texttemplate="%{text} ms", colorscale="Blues", colorbar={"title": "÷ best"}),
          layout={"title": "makespan of every cell", "height": 380})
"""),
    ]


def _phones() -> list:
    return [
        md("""
Run the cell above again: every cell is read back from `sweeps/hand/cells/` and `df.attrs`
says `computed: 0`.

## A sweep over phone profiles

Inception-v3 profiled on three phones (HOPE's measurements). Each point is a cell; its gap is
$\\text{makespan} / \\text{lower bound} - 1$, with the lower bound the larger of the critical
path at every operator's best cost (free transfers) and the total best work spread over the
devices. The bound is not always reachable, so compare algorithms on the same problem rather
than against 0.
"""),
        code("""
from hetlab.cost import HOPE_DIR
from hetlab.sweep import load_problems

LARGE = False  # True: every phone profile and a wider grid (minutes on a few cores)
files = sorted(HOPE_DIR.glob("*.json" if LARGE else "inception-v3-*.json"))
problems = load_problems([str(f) for f in (files if LARGE else files[:3])])
grid = ({"nt": [6, 12, 24], "epsilon": [0.1, 0.2, 0.4], "k": [2, 3, 4], "time_limit": [0.5]}
        if LARGE else {"nt": [6, 12], "epsilon": [0.2], "k": [2, 4], "time_limit": [0.2]})
df = run_sweep(problems, ["greedy", "ilp", "heft"], grid, "sweeps/phones", client, progress=False)
print(len(problems), "problems,", len(df), "cells:", df.attrs)
ok = df[df.status == "ok"].copy()
ok["setting"] = ok.apply(lambda r: r.algo + (f" NT={r.nt:g} ε={r.epsilon:g}" if r.algo == "ilp"
                         else f" K={r.k:g}" if r.algo == "greedy" else ""), axis=1)
px.strip(ok, x="problem", y="gap", color="setting", title="makespan / lower bound − 1")
"""),
        code("""
px.scatter(ok, x="solve_seconds", y="gap", color="algo", hover_data=["problem", "setting"],
           log_x=True, title="quality against solve time")
"""),
        md("""
From a shell the same sweep is
`hetlab sweep data/hope-profiles/inception-v3-*.json --algos greedy,ilp,heft --nt 6,12
--epsilon 0.2 --k 2,4 --time-limit 0.2 --out sweeps/phones`. With `--scheduler
tcp://HOST:8786` it uses a class's shared cluster instead (`dask scheduler` on one machine,
`dask worker tcp://HOST:8786` on the others, each with hetlab installed): problems travel to
the workers as data, so no files are shared.
"""),
        code("""
client.close()
client.cluster.close()
"""),
    ]
