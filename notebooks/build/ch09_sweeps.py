"""Chapter 9: parameter sweeps on Dask."""

from __future__ import annotations

from .cells import code, md

NAME = "09_sweeps.ipynb"


CELLS = [
    md("""
# Parameter sweeps on Dask

`hetlab sweep` solves a grid of problems x algorithms x parameters (HOPE's ε and NT, the greedy
search's K, ILP time limits) on a Dask cluster, one cell per task, and checkpoints every finished
cell under `OUT/cells/`, so running the same sweep again (or a larger one) only computes what is
missing. Makespans and lower bounds are in the problem's units (ms for the profiles here).

From a shell the same sweep is:

```
hetlab sweep data/hope-profiles/inception-v3-*.json --algos greedy,ilp,heft \\
    --nt 6,12,24 --epsilon 0.1,0.2,0.4 --k 2,3,4 --time-limit 0.5 --out sweeps/hope
```

Add `--scheduler tcp://HOST:8786` to use a class's shared cluster (`dask scheduler` on one
machine, `dask worker tcp://HOST:8786` on the others, each with hetlab installed).
"""),
    code("""
import glob, os
from pathlib import Path
from dask.distributed import Client, LocalCluster
from hetlab.fileio import read_json
from hetlab.sweep import run_sweep

PROFILES = Path("../data/hope-profiles")
LARGE = False   # True: every phone profile and a wider grid (minutes on a few cores)
files = sorted(glob.glob(str(PROFILES / ("*.json" if LARGE else "inception-v3-*.json"))))
problems = {Path(f).stem: read_json(f) for f in (files if LARGE else files[:3])}
if not problems:  # no phone profiles beside the repository: the course's built-in problems
    from hetlab.course import partitiontuner_example, small_dag
    problems = {"partitiontuner_table1": partitiontuner_example().to_json(), "small_dag": small_dag().to_json()}
print(len(problems), "problems:", ", ".join(problems))
"""),
    code("""
grid = {"nt": [6, 12, 24], "epsilon": [0.1, 0.2, 0.4], "k": [2, 3, 4], "time_limit": [0.5 if LARGE else 0.2]}
if not LARGE:
    grid = {"nt": [6, 12], "epsilon": [0.2], "k": [2, 4], "time_limit": [0.2]}
cluster = LocalCluster(n_workers=len(os.sched_getaffinity(0)), threads_per_worker=1, dashboard_address=":0")
client = Client(cluster)
print("dashboard:", client.dashboard_link)
df = run_sweep(problems, ["greedy", "ilp", "heft"], grid, "sweeps/notebook", client)
print(df.attrs)  # computed / reused cells: run this cell again and nothing is recomputed
df.head()
"""),
    md("""
## Gap to the lower bound and solve time

Each point is one cell. The lower bound (critical path at best costs, or total work / devices)
is not always reachable, so a gap above 0 is not necessarily a bad plan; compare algorithms on
the same problem.
"""),
    code("""
import plotly.express as px
ok = df[df["status"] == "ok"].copy()
ok["setting"] = ok.apply(lambda r: r["algo"] + (f" nt={int(r['nt'])} eps={r['epsilon']}" if r["algo"] == "ilp"
                                              else f" k={int(r['k'])}" if r["algo"] == "greedy" else ""), axis=1)
fig = px.strip(ok, x="problem", y="gap", color="setting", title="makespan / lower bound - 1")
fig.show()
px.scatter(ok, x="solve_seconds", y="gap", color="algo", hover_data=["problem", "setting"], log_x=True,
           title="quality vs solve time").show()
"""),
    code("""
client.close(); cluster.close()
"""),
]


def cells() -> list:
    return list(CELLS)
