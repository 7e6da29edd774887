"""Chapter 3: list scheduling; HEFT's EST/EFT by hand, then PEFT and StarPU's dmda."""

from __future__ import annotations

from .cells import answer, code, exercise, md

NAME = "03_list_scheduling.ipynb"


CELLS = [
    md(r"""
# 3 · List scheduling: HEFT, PEFT and StarPU's dmda

**After this chapter you can**
- state the timing model every plan in hetlab is measured with (blocking receives);
- run HEFT by hand: its order, then the earliest start (EST) and earliest finish (EFT) of
  each operator on each device;
- say how PEFT and StarPU's dmda change the priority or the placement, and compare the three
  on a real profile.
"""),
    code("""
import pandas as pd
import plotly.express as px

from hetlab.course import check, hint, show_answer, unlocked, small_dag, lookahead_dag, hand_dag
from hetlab.cost import load_hope_profile, load_measured_profile
from hetlab.schedulers import optimistic_cost_table, rank_oct, schedule, upward_rank
from hetlab.viz import compare_figure, gantt_figure
"""),
    md(r"""
## The timing model

A plan gives each operator a device and each device an order. An operator $v$ placed on
device $d$ may start once $d$ is free and every predecessor has finished; it then receives
the inputs that live on another device (blocking), and computes:

$$\mathrm{EST}(v, d) = \max\Big(\mathrm{avail}(d),\ \max_{u \in \mathrm{pred}(v)}
\mathrm{AFT}(u)\Big)$$

$$\mathrm{EFT}(v, d) = \mathrm{EST}(v, d) + \sum_{u \in \mathrm{pred}(v),\
\mathrm{dev}(u) \neq d} c_{u,v} + w_{v,d}$$

$\mathrm{AFT}(u)$ is the actual finish of a placed predecessor, $\mathrm{avail}(d)$ the
finish of the last operator on $d$. The simulator times every plan this way, whichever
algorithm made it.

## A list scheduler

1. give every operator a **priority**;
2. repeatedly take the ready operator of highest priority and **place** it on a device,
   never moving it again.

HEFT's priority is rank_u (chapter 1), its placement the device of least EFT. Topcuoglu et
al. let an operator start in an idle gap between two operators already placed on $d$, when
the gap holds its receives and its compute (insertion); otherwise it starts after the last one,
as above. `heft` inserts, `heft-append` only appends.
"""),
    code("""
small = small_dag()
rank_u = dict(zip([n.id for n in small.nodes], upward_rank(small)))
hand_dag(small, values=rank_u, value_name="rank_u", title="small_dag with rank_u")
"""),
    *exercise(
        "ch03.eft",
        "Run HEFT by hand: list the operators in the order HEFT places them, and for each "
        "one the device it picks, its EST and its EFT there (ms). When both devices give "
        "the same EFT, HEFT takes the first (`cpu`). The checker looks at the order, then "
        "the start times, then the finish times.",
        """
answer = {
    "order": ["A", "B", "C", "E", "D", "F"],
    "placed": {
        "A": ("cpu", 0, 2),  # cpu 0+2 = 2 beats gpu 0+3
        "B": ("gpu", 2, 4),  # gpu 2+1(from A)+1 = 4 beats cpu 2+4 = 6
        "C": ("cpu", 2, 5),  # cpu 2+3 = 5 beats gpu max(4,2)+1+2 = 7
        "E": ("cpu", 5, 9),  # cpu 5+1(from B)+3 = 9 ties gpu 5+1(from C)+3: cpu
        "D": ("gpu", 4, 9),  # gpu 4+1(from A)+4 = 9 beats cpu 9+1 = 10
        "F": ("cpu", 9, 11),  # cpu 9+1(from D)+1 = 11 beats gpu 9+1(from E)+2 = 12
    },
}
""",
    ),
    md(
        "Once your table passes, the cell below compares it with the library's HEFT, drawn as "
        "a Gantt chart (one row per device):"
    ),
    answer(
        "ch03.eft",
        """
heft = schedule(small, "heft")
display(pd.DataFrame([vars(a) for a in heft.assignments]).set_index("node"))
display(gantt_figure(heft, small, title=f"HEFT on small_dag: {heft.makespan:g} ms"))
""",
    ),
    md(r"""
## PEFT: look one step ahead

HEFT places each operator where it finishes first, even when that device is a bad place for
what follows. PEFT (Arabnejad and Barbosa, 2014) keeps an *optimistic cost table*: the
shortest remaining time after $v$ if $v$ runs on $d$ and every later operator runs where it
is best,

$$\mathrm{OCT}(v, d) = \max_{s \in \mathrm{succ}(v)} \ \min_{e \in D}
\Big(\mathrm{OCT}(s, e) + w_{s,e} + \overline{c}_{v,s}\,[e \neq d]\Big),
\qquad \mathrm{OCT}(v_{\mathrm{exit}}, d) = 0 .$$

Its priority is $\mathrm{rank}_{oct}(v)$, the mean of $\mathrm{OCT}(v, \cdot)$, and it places
$v$ on the device of least $\mathrm{EFT}(v, d) + \mathrm{OCT}(v, d)$.
"""),
    code("""
ids = [n.id for n in small.nodes]
oct_ = pd.DataFrame(optimistic_cost_table(small), index=ids, columns=small.devices)
oct_["rank_oct"] = rank_oct(small)
oct_
"""),
    md("""
## StarPU's dmda: no ranks at all

StarPU's `dmda` policy (Augonnet et al., 2011) is a runtime policy: an operator is pushed
when its last input is ready, in that order, to the device of least *expected termination*
(the device's expected end, plus the transfers, plus the cost). `dmdar` lets a device first
take the operators whose inputs it already holds. HOPE compares against `dmdar`.

On the small DAG the algorithms are close. A four-operator chain shows what PEFT's look-ahead
is for: `prep` finishes first on the CPU, but every operator after it is far cheaper on the
GPU, and moving a tensor between the two costs 4 ms.
"""),
    code("""
look = lookahead_dag()
hand_dag(look, title="lookahead_dag: ms on each device, 4 ms per transfer")
"""),
    code("""
rows = []
for name, prob in {"small_dag": small, "lookahead_dag": look}.items():
    for algo in ("heft", "peft", "dmda", "dmdar"):
        plan = schedule(prob, algo)
        rows.append({"DAG": name, "algorithm": algo, "makespan (ms)": plan.makespan,
                     "devices used": " + ".join(sorted(set(plan.device_of.values())))})
display(pd.DataFrame(rows).pivot(index="algorithm", columns="DAG"))
plans = {a: schedule(look, a) for a in ("heft", "peft")}
print("where prep runs:", {a: p.device_of["prep"] for a, p in plans.items()})
compare_figure(list(plans.values()), [f"{a}: {p.makespan:g} ms" for a, p in plans.items()],
               problem=look)
"""),
    md("""
HEFT places `prep` where it finishes first, on the CPU, and then pays a transfer to reach
the GPU, where the rest of the chain is cheap. PEFT adds to each finish time the optimistic
cost of what follows (the OCT column below): on the CPU that includes the transfer, so `prep`
stays on the GPU with its successors. dmda, like HEFT, looks only at finish times.
"""),
    code("""
pd.DataFrame(optimistic_cost_table(look), index=[n.id for n in look.nodes], columns=look.devices)
"""),
    md("""
## On real profiles

Each algorithm on three profiles: two of HOPE's phones and googlenet as hetlab measured it on
a 16-core host with a GPU. Makespans are normalised to the best single device.
"""),
    code("""
profiles = {
    "inception-v3 · Huawei P40": load_hope_profile("inception-v3-huawei_p40"),
    "pnasnet-mobile · Mi 9": load_hope_profile("pnasnet-mobile-mi9"),
    "googlenet · GPU host": load_measured_profile("h100-16core", "googlenet"),
}
rows = []
for label, prob in profiles.items():
    single = min(schedule(prob, f"single:{d}").makespan for d in prob.devices)
    for algo in ("heft", "peft", "dmda", "dmdar"):
        plan = schedule(prob, algo)
        rows.append({"profile": label, "algorithm": algo, "makespan (ms)": plan.makespan,
                     "vs best single device": plan.makespan / single,
                     "solve (s)": plan.solve_seconds})
df = pd.DataFrame(rows)
display(df.round(3))
px.bar(df, x="profile", y="vs best single device", color="algorithm", barmode="group",
       height=340, title="list schedulers, normalised to the best single device")
"""),
    md("""
**To remember.** A list scheduler decides each operator once, in priority order, with a
greedy placement: it is fast (milliseconds) but never reconsiders. HOPE's ILP (chapter 4)
decides a whole subgraph at once.
"""),
]


def cells() -> list:
    return list(CELLS)
