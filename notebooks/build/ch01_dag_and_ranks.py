"""Chapter 1: a model as a DAG; HOPE's level (eq. 8) beside HEFT's rank_u."""

from __future__ import annotations

from .cells import answer, code, exercise, md

NAME = "01_dag_and_ranks.ipynb"


CELLS = [
    md(r"""
# 1 · A model as a DAG, and two ways to rank its operators

**After this chapter you can**
- read a model as a directed acyclic graph (DAG) of operators, with a cost per operator and
  device and a transfer time per edge;
- compute HOPE's *upward rank* (a level counted from the inputs, Xia, Zhao, Cui and Feng,
  2022, eq. 8) and HEFT's *rank_u* (Topcuoglu, Hariri and Wu, 2002) by hand;
- say why the two differ, and what each one is used for.
"""),
    code("""
from hetlab.course import check, hint, show_answer, unlocked, small_dag, hand_dag, levels
from hetlab.cost import load_measured_profile, load_hope_profile
from hetlab.schedulers import mean_costs, upward_rank
from hetlab.viz import dag_figure
"""),
    md("""
## A hand-sized example

Six operators on two devices. Each node is labelled with its cost (ms) on the `cpu` and on
the `gpu`; each edge with the time to move its tensor from one device to the other (1 ms
either way, nothing when both ends share a device).
"""),
    code("""
small = small_dag()
hand_dag(small, title="small_dag: six operators, two devices")
"""),
    md(r"""
## HOPE's upward rank: a level counted from the inputs

HOPE (eq. 8) gives each vertex

$$\mathrm{uprank}(v_j) = 1 + \max_{v_i \in \mathrm{pred}(v_j)} \mathrm{uprank}(v_i),
\qquad \mathrm{uprank}(v) = 1 \text{ for a source.}$$

It is the number of vertices on the longest path from an input to $v_j$: a *level*. It
ignores every cost. Two operators of the same level have no path between them, so they may
run at the same time. HOPE uses the level to cut the DAG into subgraphs (chapter 4); hetlab
draws DAGs in columns of equal level.
"""),
    *exercise(
        "ch01.level",
        "Give the level of each of the six operators.",
        'level = {"A": 1, "B": 2, "C": 2, "D": 2, "E": 3, "F": 4}',
    ),
    md(r"""
## HEFT's rank_u: the costliest path to the exit

HEFT orders operators by

$$\mathrm{rank}_u(v_i) = \overline{w}_i + \max_{v_j \in \mathrm{succ}(v_i)}
\left(\overline{c}_{i,j} + \mathrm{rank}_u(v_j)\right), \qquad
\mathrm{rank}_u(v_{\mathrm{exit}}) = \overline{w}_{\mathrm{exit}},$$

where $\overline{w}_i$ is the mean cost of $v_i$ over the devices that can run it and
$\overline{c}_{i,j}$ the mean transfer time of edge $(v_i, v_j)$ over ordered pairs of
distinct devices. It is computed backwards, from the exit. A large rank_u means a long,
costly road still ahead: HEFT schedules such operators first (chapter 3).
"""),
    *exercise(
        "ch01.rank_u",
        "Give the mean cost $\\overline{w}$ and rank_u of each operator. The checker looks "
        "at the mean costs first.",
        """
answer = {
    "mean_cost": {"A": 2.5, "B": 2.5, "C": 2.5, "D": 2.5, "E": 3.0, "F": 1.5},
    # from the exit back: rank_u(E) = 3 + 1 + 1.5; rank_u(A) = 2.5 + 1 + max(9, 9, 5)
    "rank_u": {"A": 12.5, "B": 9.0, "C": 9.0, "D": 5.0, "E": 5.5, "F": 1.5},
}
""",
    ),
    md("""
## Side by side

Once both your answers pass, the cell below compares them with the library's, which
computes both: B, C and D share a level, but D's rank_u is much smaller, because the path
after D is short.
"""),
    code("""
import pandas as pd
"""),
    answer(
        ("ch01.level", "ch01.rank_u"),
        """
ids = [n.id for n in small.nodes]
rank_u = dict(zip(ids, upward_rank(small)))
display(pd.DataFrame({"level (HOPE)": levels(small), "mean cost": dict(zip(ids, mean_costs(small))),
                      "rank_u (HEFT)": rank_u}))
display(hand_dag(small, values=rank_u, value_name="rank_u", title="rank_u on the small DAG"))
""",
    ),
    md("""
**Why they differ.**

| | HOPE's level | HEFT's rank_u |
| --- | --- | --- |
| direction | from the inputs (forward) | to the exit (backward) |
| counts | vertices on the longest path | costs and transfers on the costliest path |
| depends on the devices | no | yes (mean costs) |
| used for | cutting the DAG into ordered subgraphs | the order in which operators are placed |

A level is a property of the graph alone. rank_u changes when the profile changes.
"""),
    md("""
## A real model

SqueezeNet as profiled by hetlab on a 2-core machine (`data/profiles/xeon-2core-pocl`):
each column of the figure is one level. Hover a node for its name and costs.
"""),
    code("""
sq = load_measured_profile("xeon-2core-pocl", "squeezenet")
print(sq.name, "-", len(sq.nodes), "operators on", ", ".join(sq.devices))
dag_figure(sq, color="level")
"""),
    md("""
Each point below is an operator: its level against its rank_u. Operators of one level spread
over a wide range of rank_u; the level says when an operator *can* run, rank_u how much work
still depends on it.
"""),
    code("""
import plotly.express as px

sq_ids = [n.id for n in sq.nodes]
sq_level = levels(sq)
df = pd.DataFrame({"operator": sq_ids, "op": [n.op_type for n in sq.nodes],
                   "level": [sq_level[v] for v in sq_ids], "rank_u (ms)": upward_rank(sq)})
px.scatter(df, x="level", y="rank_u (ms)", color="op", hover_name="operator", height=360,
           title="squeezenet: HOPE's level against HEFT's rank_u")
"""),
    md("""
## Where is the parallelism?

The number of operators per level bounds how many can run at once. Inception-v3 on a Huawei
P40 (HOPE's own measurements, `data/hope-profiles`) is wide in its inception blocks:
"""),
    code("""
import collections

phone = load_hope_profile("inception-v3-huawei_p40")
width = collections.Counter(levels(phone).values())
print(f"{len(phone.nodes)} operators, {max(width)} levels, widest level {max(width.values())} operators")
px.bar(x=list(width), y=list(width.values()), labels={"x": "level", "y": "operators"},
       height=280, title="inception-v3: operators per level")
"""),
    md("""
**To remember.** A level (HOPE) counts hops from the inputs and ignores costs; rank_u (HEFT)
adds mean costs and transfers on the way to the exit. Chapter 3 uses rank_u to order a list
scheduler; chapter 4 uses levels to cut the DAG for HOPE's ILP.
"""),
]


def cells() -> list:
    return list(CELLS)
