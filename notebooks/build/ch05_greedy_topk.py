"""Chapter 5: HOPE's greedy search (Alg. 2): node merging, top-K, and the effect of K."""

from __future__ import annotations

from .cells import answer, code, exercise, md

NAME = "05_greedy_topk.ipynb"


CELLS = [
    md(r"""
# 5 · HOPE's greedy search: node merging and top-K

**After this chapter you can**
- merge short operators into super-ops (HOPE §3.2);
- run HOPE's greedy search (Algorithm 2): take the K ready operators that can start
  earliest, try every map of them to the devices, keep the best;
- say what K buys and what it costs, on a hand-sized DAG and on a real model.
"""),
    code("""
import time

import pandas as pd
import plotly.express as px

from hetlab.course import (check, defaults, hand_dag, hint, partitiontuner_example,
                           show_answer, two_branch_dag, unlocked)
from hetlab.cost import load_hope_profile
from hetlab.schedulers import merge_superops, schedule
from hetlab.viz import compare_figure
"""),
    md(r"""
## Node merging

Many operators are tiny beside a convolution (a ReLU under 0.1 ms beside a 3 ms Conv2D on
HOPE's Redmi). Deciding each of them separately costs search time and, worse, may send one
to another device and pay two transfers for nothing. HOPE merges a **short** operator, one
whose cost on every device that can run it is below a threshold, **with one predecessor**
into that predecessor's *super-op*. A super-op is placed as one unit and runs its members
back to back.
"""),
    code("""
pt = partitiontuner_example()
hand_dag(pt, title="PartitionTuner's example")
"""),
    *exercise(
        "ch05.merge",
        "With a threshold of 1.2 ms, which operators are short, and which super-ops does "
        "merging make?",
        """
answer = {
    "short": ["v5", "v7"],
    "superops": [["v1"], ["v2"], ["v3"], ["v4", "v5"], ["v6", "v7"], ["v8"]],
}
""",
    ),
    md("Once your answer passes, the cell below shows the library's merging:"),
    answer(
        "ch05.merge",
        """
print([[pt.nodes[i].id for i in s] for s in merge_superops(pt, 1.2)])
""",
    ),
    md(r"""
## Algorithm 2: top-K greedy search

The earliest start of a ready super-op is the latest finish of its predecessors. Each step:

1. sort the ready super-ops by earliest start and take the first **K**;
2. time every map of these K to the $|D|$ devices ($|D|^K$ maps), each on top of what is
   already committed, with the timing model of chapter 3;
3. commit the map with the least completion time of the K (ties: the least sum of their
   completions), and add the successors that became ready.

With $y$ super-ops the search costs $O(y\,K\,|D|^K)$ timings. HOPE sets K = 4 for two
devices and 3 for three; `k` left unset in the registry means that default:
"""),
    code("""
print("greedy defaults:", defaults("greedy"))
print("for the two-branch DAG's two devices:", defaults("greedy", two_branch_dag()))
"""),
    md("""
On the two-branch DAG, K = 1 decides each operator alone; K = 2 decides the two branches'
heads together:
"""),
    code("""
two = two_branch_dag()
plans = {k: schedule(two, "greedy", k=k) for k in (1, 2)}
compare_figure(list(plans.values()), [f"K = {k}: {p.makespan:g} ms" for k, p in plans.items()],
               problem=two)
"""),
    *exercise(
        "ch05.k",
        "How many device maps does one step try for K = 1, 2, 3, 4 on these two devices? "
        "And what is the smallest K that reaches the lowest makespan on `two`? (Try "
        '`schedule(two, "greedy", k=k)`.)',
        """
answer = {"maps": {1: 2, 2: 4, 3: 8, 4: 16}, "best_k": 2}  # |D|^K maps; K = 2 is enough
""",
    ),
    md("""
## The effect of K on a real model

Inception-v3 on a Huawei P40: makespan and search time for K = 1 to 6 (each step of K = 6
times 64 maps).
"""),
    code("""
phone = load_hope_profile("inception-v3-huawei_p40")
rows = []
for k in range(1, 7):
    t0 = time.perf_counter()
    p = schedule(phone, "greedy", k=k)
    rows.append({"K": k, "makespan (ms)": p.makespan, "search (s)": time.perf_counter() - t0})
ks = pd.DataFrame(rows)
display(ks.round(3))
px.line(ks, x="K", y=["makespan (ms)"], markers=True, height=300,
        title="greedy on inception-v3 / Huawei P40: makespan against K")
"""),
    code("""
best = ks.loc[ks["makespan (ms)"].idxmin()]
k0 = defaults("greedy", phone)["k"]
print(f"the best K here is {int(best.K)} ({best['makespan (ms)']:.2f} ms); "
      f"HOPE's default K = {k0} gives {ks.set_index('K').loc[k0, 'makespan (ms)']:.2f} ms")
"""),
    md("""
Each step commits all K operators at once: a wider search sees more combinations, but it
also commits more decisions before it sees what follows them.

## The merge threshold

The threshold decides how many super-ops the search sees. The phone's costs are in ms:
"""),
    code("""
rows = []
for thr in (0.0, 0.1, 0.3, 1.0):
    p = schedule(phone, "greedy", merge_threshold=thr)
    rows.append({"threshold (ms)": thr, "super-ops": len(merge_superops(phone, thr)),
                 "makespan (ms)": p.makespan})
pd.DataFrame(rows).round(3)
"""),
    md("""
**To remember.** The greedy search decides K operators at a time by trying all $|D|^K$ maps:
K trades search time for a wider view, and merging shrinks the graph the search sees. It
solves in milliseconds where the ILP of chapter 4 takes seconds.
"""),
]


def cells() -> list:
    return list(CELLS)
