"""Chapter 4: HOPE's ILP (eqs. 1-6), solved exactly on a small DAG, then Algorithm 1."""

from __future__ import annotations

from .cells import answer, code, exercise, md

NAME = "04_hope_ilp.ipynb"


CELLS = [
    md(r"""
# 4 · HOPE's ILP and its partition

**After this chapter you can**
- write HOPE's integer linear program (Xia, Zhao, Cui and Feng, 2022, eqs. 1-6), including
  the linearisation of a product of binaries and the big-M ordering constraints;
- solve it exactly on a small DAG and check the result against every possible plan;
- run Algorithm 1 (the up-rank partition with ε and NT) by hand, and say what ε and NT do to
  the plan and to the solve time on a real model.
"""),
    code("""
import itertools
import os

import pandas as pd
import plotly.graph_objects as go
import pulp
from plotly.subplots import make_subplots

from hetlab.course import (INFO_KEYS, check, defaults, hand_dag, hint, ilp_decided, levels,
                           optimum, plan_info, quiet_solver, show_answer, small_dag,
                           two_branch_dag, unlocked, windows_solved)
from hetlab.cost import load_hope_profile
from hetlab.schedulers import partition, schedule, simulate
from hetlab.viz import gantt_figure, dag_figure
"""),
    md(r"""
## The program

Variables: $b_{i,j} \in \{0, 1\}$ places operator $v_i$ on device $d_j$; $st_i$ is its
start, $t_i$ its duration (receives included), $\tau$ the makespan. $cl_{i,j}$ is the cost
of $v_i$ on $d_j$ and $C_{a,c}(T)$ the time to move tensor $T$ from $d_a$ to $d_c$.

**(1) Duration.** An operator pays its compute cost and the transfer of every input that
comes from another device:

$$t_i \ \ge\ \sum_j b_{i,j}\, cl_{i,j} \;+ \sum_{v_k \in \mathrm{pred}(v_i)}\ \sum_{a \neq c}
z_{k,i,a,c}\; C_{a,c}(T_{k,i}).$$

HOPE writes the transfer as $(b_{i,j} - b_{k,j})\,C$, which is right for two devices. For
any number of devices, $z_{k,i,a,c}$ stands for the product $b_{k,a}\, b_{i,c}$ (the input
comes from $d_a$ to $d_c$), which is not linear. Because the objective pushes $z$ down, three
linear constraints are enough:

$$z_{k,i,a,c} \ \ge\ b_{k,a} + b_{i,c} - 1, \qquad z_{k,i,a,c} \ge 0 .$$

**(2) Objective.** $\min \tau$ subject to $\tau \ge st_i + t_i$ for every $v_i$.

**(3) Precedence.** For every edge $(v_i, v_k)$: $st_k \ge st_i + t_i$. (HOPE keeps one start
per device and adds $(b_{i,j} - 1) M$; with one start per operator the term is not needed.)

**(4)-(5) One operator at a time per device.** For two operators with no path between them,
one must finish before the other starts if they share a device. With a binary
$\psi_{i,k}$ and a large $M$:

$$st_i \ \ge\ st_k + t_k - \psi_{i,k} M, \qquad
st_k \ \ge\ st_i + t_i - (1 - \psi_{i,k}) M .$$

$\psi_{i,k} = 0$ puts $v_i$ after $v_k$; $\psi_{i,k} = 1$ the other way round. (Operators on
different devices need no order: the implementation adds $M (2 - b_{i,j} - b_{k,j})$ to both
sides, which switches the pair off unless both are on $d_j$.)

**(6) Placement.** $\sum_j b_{i,j} = 1$ for every $v_i$.
"""),
    *exercise(
        "ch04.order",
        "Write eq. 5 as a function: it returns True when two operators on one device, with "
        "these starts, durations and this ψ, satisfy both inequalities.",
        """
def eq5(st_i, t_i, st_k, t_k, psi, M):
    \"\"\"Both inequalities of HOPE's eq. 5, with >= for the paper's >.\"\"\"
    return st_i >= st_k + t_k - psi * M and st_k >= st_i + t_i - (1 - psi) * M
""",
    ),
    md("""
## Solved exactly on the small DAG

The whole program in about forty lines of PuLP, one constraint family per equation:
"""),
    code("""
def hope_ilp(problem):
    V, D = [n.id for n in problem.nodes], problem.devices
    cl = {(n.id, d): n.cost[d] for n in problem.nodes for d in D if n.cost[d] is not None}
    M = sum(max(c for c in n.cost.values() if c is not None) for n in problem.nodes) + sum(
        max(e.comm.values(), default=0.0) for e in problem.edges)
    m = pulp.LpProblem("hope", pulp.LpMinimize)
    b = {vd: pulp.LpVariable("b_%s_%s" % vd, cat="Binary") for vd in cl}
    st = {v: pulp.LpVariable(f"st_{v}", lowBound=0) for v in V}
    t = {v: pulp.LpVariable(f"t_{v}", lowBound=0) for v in V}
    tau = pulp.LpVariable("tau", lowBound=0)
    m += tau                                                             # (2) objective
    z = {}
    for e in problem.edges:                                              # z = b_ka * b_ic
        for a, c in itertools.permutations(D, 2):
            if (e.src, a) in b and (e.dst, c) in b:
                z[e.src, e.dst, a, c] = var = pulp.LpVariable(f"z_{e.src}_{e.dst}_{a}_{c}", lowBound=0)
                m += var >= b[e.src, a] + b[e.dst, c] - 1
    for v in V:
        m += pulp.lpSum(b[v, d] for d in D if (v, d) in b) == 1          # (6)
        m += t[v] >= pulp.lpSum(cl[v, d] * b[v, d] for d in D if (v, d) in b) + pulp.lpSum(
            problem.comm_cost(u, w, a, c) * var for (u, w, a, c), var in z.items() if w == v)  # (1)
        m += tau >= st[v] + t[v]                                         # (2)
    for e in problem.edges:
        m += st[e.dst] >= st[e.src] + t[e.src]                           # (3)
    after = {v: set() for v in V}                                        # descendants
    for i in reversed(problem.topo):
        for s, _ in problem.succs[i]:
            after[V[i]] |= {V[s]} | after[V[s]]
    for i, k in itertools.combinations(V, 2):
        if k in after[i] or i in after[k]:
            continue                                                     # a path orders them
        psi = pulp.LpVariable(f"psi_{i}_{k}", cat="Binary")
        for d in D:
            if (i, d) in b and (k, d) in b:
                off = M * (2 - b[i, d] - b[k, d])                        # only if both on d
                m += st[i] >= st[k] + t[k] - psi * M - off               # (4)-(5)
                m += st[k] >= st[i] + t[i] - (1 - psi) * M - off
    m.solve(quiet_solver())                     # HiGHS (else CBC), no log, no banner
    device_of = {v: d for (v, d), var in b.items() if var.value() > 0.5}
    order = sorted(V, key=lambda v: (st[v].value(), problem.index[v]))
    return tau.value(), device_of, order
"""),
    code("""
small = small_dag()
tau, device_of, order = hope_ilp(small)
best, _, _ = optimum(small)   # every device map x every topological order, timed
timed = simulate(small, device_of, order).makespan
print(f"ILP objective {tau:g} ms; the simulator times its plan at {timed:g} ms; "
      f"the best of all plans: {best:g} ms")
hand_dag(small, device_of=device_of, title="the ILP's placement")
"""),
    md("""
hetlab's `ilp` builds the same program. With NT at least the number of operators there is
one subgraph, so one exact ILP:
"""),
    code("""
exact = schedule(small, "ilp", nt=len(small.nodes))
print(f"ilp with NT = {len(small.nodes)}: {exact.makespan:g} ms")
gantt_figure(exact, small, title="ilp, one exact window")
"""),
    md(r"""
## Algorithm 1: cutting the DAG for the solver

The number of ordering binaries grows with the square of the number of operators, and the
solve time much faster. HOPE therefore cuts the DAG into subgraphs of at most **NT**
operators and solves one ILP per subgraph, in order, each on top of what the earlier ones
decided.

Each cut splits a subgraph $V$ at a level $r$ (chapter 1, levels recounted inside $V$):
$V_0 = \{v : \mathrm{uprank}(v) \le r\}$ and $V_1$ the rest. Every edge goes from a lower to
a higher level, so $V_0$ can run entirely before $V_1$. A cut is **balanced** when

$$\max(|V_0|, |V_1|) \ \le\ (1 + \epsilon)\,\frac{|V|}{2},$$

and among balanced cuts Algorithm 1 takes the level with the fewest vertices (the vertex
cut, `uprankCount[r]`). If no level is balanced, ε grows by 0.1. Parts larger than NT are
cut again.
"""),
    code("""
two = two_branch_dag()
hand_dag(two, values=levels(two), value_name="level", title="two_branch_dag with its levels")
"""),
    *exercise(
        "ch04.partition",
        "Run Algorithm 1 with NT = 4 and ε = 0.2: at which level is the first cut, and which "
        "subgraphs come out (in the order they are solved)?",
        """
answer = {
    "cut": 4,  # levels 1..4 hold 6 vertices <= 1.2 * 10 / 2, one vertex at level 4
    "parts": [["in", "a1", "b1"], ["a2", "b2", "a3"], ["cat", "c1", "c2", "out"]],
}
""",
    ),
    md("Once your answer passes, the cell below shows the library's partition:"),
    answer(
        "ch04.partition",
        """
parts = partition(two, nt=4, epsilon=0.2)
part_of = {two.nodes[i].id: k + 1 for k, p in enumerate(parts) for i in p}
display(hand_dag(two, values=part_of, value_name="subgraph", title="Algorithm 1, NT = 4, ε = 0.2"))
""",
    ),
    md("What the partition costs the plan: one exact window against the partitioned ILP."),
    code("""
for nt in (4, 10):
    plan = schedule(two, "ilp", nt=nt)
    print(f"ilp with NT = {nt:2d}: {plan.makespan:g} ms")
"""),
    md("""
With NT = 4 each window sees only its own operators: the later ones are decided on top of
what the earlier windows fixed, so a partitioned ILP may lose to the exact one.

## On a real model: ε × NT

Inception-v3 on a Huawei P40 (130 operators; HOPE's measurements). The defaults come from
the scheduler registry:
"""),
    code("""
phone = load_hope_profile("inception-v3-huawei_p40")
d = defaults("ilp")
print("ilp defaults:", d)
print("subgraphs per (ε, NT):")
pd.DataFrame({nt: {eps: len(partition(phone, nt, eps)) for eps in (0.05, 0.2, 0.5)}
              for nt in (4, 12, 24)}).rename_axis(index="ε", columns="NT")
"""),
    md("""
Each plan says how it was reached, in `plan.extra` (`plan_info` picks these keys):

| key | meaning |
| --- | --- |
| `subgraphs`, `windows` | Algorithm 1's partition (here: how many subgraphs), one ILP window each |
| `windows_optimal`, `windows_limit` | ILPs proved optimal, and stopped at the time limit |
| `windows_start_kept` | windows whose ILP ended on the plan it started from (its MIP start) |
| `mip_gap_max` | the largest relative MIP gap a stopped ILP reported |
| `solve_s` | seconds the solve took |
| `decided_by` | what gave the final plan: `ilp` (the ILPs), `mip-start` (no ILP changed the plan it started from), or for `ilp+` a floor, a pass or the search |
"""),
    code("""
plan = schedule(phone, "ilp", **d)
print(f"ilp at the defaults: {plan.makespan:.2f} ms")
plan_info(plan)
"""),
    md("""
`ilp` is HOPE as published: Algorithm 1, then one ILP per subgraph. `ilp+` adds further
passes, a local search and a floor at the best baseline. The sweep solves both on every
(ε, NT) cell and compares them with HOPE's greedy search (chapter 5).
"""),
    code("""
QUICK = os.environ.get("HETLAB_QUICK") == "1"   # a 2 x 3 subset of the 5 x 5 grid
EPS = [0.05, 0.5] if QUICK else [0.05, 0.1, 0.2, 0.3, 0.5]
NTS = [4, 8, 12] if QUICK else [4, 8, 12, 16, 24]
greedy = schedule(phone, "greedy")
rows = []
for eps in EPS:
    for nt in NTS:
        for algo in ("ilp", "ilp+"):
            p = schedule(phone, algo, epsilon=eps, nt=nt)  # the other parameters: defaults
            rows.append({"algo": algo, "ε": eps, "NT": nt, "makespan": p.makespan, **plan_info(p)})
sweep = pd.DataFrame(rows)
sweep.pivot(index="NT", columns=["algo", "ε"], values="makespan").round(2)
"""),
    code("""
def grid(algo, col):
    return sweep[sweep.algo == algo].pivot(index="NT", columns="ε", values=col)

fig = make_subplots(rows=1, cols=3, specs=[[{"type": "surface"}] * 3],
                    subplot_titles=["ilp makespan (ms)", "ilp+ makespan (ms)", "solve time (s)"])
for col, algo in ((1, "ilp"), (2, "ilp+")):
    g = grid(algo, "makespan")
    fig.add_trace(go.Surface(x=g.columns, y=g.index, z=g.values, showscale=False, name=algo), 1, col)
    fig.add_trace(go.Surface(x=g.columns, y=g.index, z=g.values * 0 + greedy.makespan,
                             opacity=0.35, showscale=False, colorscale="Greys", name="greedy"), 1, col)
for algo, scale in (("ilp", "Blues"), ("ilp+", "Oranges")):
    g = grid(algo, "solve_s")
    fig.add_trace(go.Surface(x=g.columns, y=g.index, z=g.values, showscale=False,
                             colorscale=scale, name=algo), 1, 3)
fig.update_scenes(xaxis_title="ε", yaxis_title="NT", zaxis_title="makespan (ms)")
fig.update_scenes(zaxis_title="solve time (s)", row=1, col=3)
fig.update_scenes(camera_eye={"x": 2.0, "y": 2.0, "z": 1.0})  # far enough that the z ticks fit
fig.update_layout(height=430, margin={"l": 10, "r": 10, "t": 60, "b": 0},
                  title="grey plane: greedy's makespan; solve time: ilp blue, ilp+ orange")
fig
"""),
    code("""
ilp_rows = sweep[sweep.algo == "ilp"].copy()
ilp_rows["windows solved"] = [windows_solved(r) for r in ilp_rows.to_dict("records")]
ilp_rows["ILP decided"] = [ilp_decided(r) for r in ilp_rows.to_dict("records")]
decided = ilp_rows[ilp_rows["ILP decided"]]
proved = decided[decided.windows_optimal == decided.windows]
print(f"greedy: {greedy.makespan:.2f} ms")
print(f"the ILP decided {len(decided)} of {len(ilp_rows)} cells; the others kept their MIP start "
      "in every window, so they say nothing about the ILP and are left out below")
print(f"where it decided, ilp beats greedy on {(decided.makespan < greedy.makespan - 1e-9).sum()} "
      f"of {len(decided)} cells and loses on {(decided.makespan > greedy.makespan + 1e-9).sum()}; "
      f"{len(proved)} of them had every window proved optimal "
      f"(beating greedy on {(proved.makespan < greedy.makespan - 1e-9).sum()})")
ilp, plus = grid("ilp", "makespan"), grid("ilp+", "makespan")
print(f"ilp+ differs from ilp on {((plus - ilp).abs() > 1e-9).sum().sum()} cells; "
      f"ilp+ is worse than ilp on {(plus > ilp + 1e-9).sum().sum()}")
print(f"its longest solve took {grid('ilp', 'solve_s').max().max():.2f} s")
ilp_rows[["ε", "NT", "makespan", "windows solved", "windows_limit", "decided_by", "ILP decided"]]
"""),
    md("""
A window stopped at its time limit keeps the best plan found so far, which depends on this
machine's speed; only the windows proved optimal give the same answer everywhere.
"""),
    md("""
**To remember.** HOPE's ILP is exact on one window; Algorithm 1 makes it affordable by
cutting the DAG along levels, with ε trading balance for a smaller cut and NT trading plan
quality for solve time. The greedy search of chapter 5 skips the solver altogether.
"""),
]


def cells() -> list:
    return list(CELLS)
