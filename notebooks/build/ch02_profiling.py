"""Chapter 2: profiling, and the cost model a scheduler reads."""

from __future__ import annotations

from .cells import answer, code, exercise, md

NAME = "02_profiling.ipynb"


CELLS = [
    md(r"""
# 2 · Profiling: what does each operator cost on each device?

**After this chapter you can**
- say what a profile holds: a cost per operator and device, a transfer time per edge and
  device pair, a link model per device pair;
- explain how an isolated cost is corrected: the per-call overhead, and the in-context factor;
- fit and use a link model, $\text{time} = \ell + \text{bytes} / \beta$ (OverSeer's
  calibration), and compare it with a measured transfer;
- use grouped (fused) costs as PartitionTuner does.
"""),
    code("""
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from hetlab.course import check, hint, show_answer, unlocked, hand_dag, partitiontuner_example
from hetlab.cost import load_measured_profile, load_hope_profile
from hetlab.schedulers import schedule
from hetlab.viz import heatmap_figure
"""),
    md("""
## A hand-sized profile

PartitionTuner's example (Jeong et al., ETRI J. 2022): eight operators on a CPU and an NPU.
The NPU cannot run four of them (`–`). Two chains also have a *grouped* cost, measured as
one fused unit: `v4+v5` and `v6+v7`. Its edges cost nothing (the costs already include the
transfers).
"""),
    code("""
pt = partitiontuner_example()
display(pd.DataFrame({n.id: n.cost for n in pt.nodes}).T.rename_axis("operator"))
print("grouped costs:", {"+".join(g.nodes): g.cost for g in pt.groups})
hand_dag(pt, title="PartitionTuner's example")
"""),
    *exercise(
        "ch02.opseq",
        "*OpSeq* runs one operator at a time, each on its fastest device. Which device does "
        "it pick for each operator, and what is its makespan (ms)?",
        """
answer = {
    # each operator alone, on its fastest device (ties: cpu); NPU-less ones on the cpu
    "device": {"v1": "cpu", "v2": "cpu", "v3": "npu", "v4": "npu",
               "v5": "cpu", "v6": "cpu", "v7": "cpu", "v8": "cpu"},
    "makespan": 1 + 2 + 2 + 2 + 1 + 1 + 1 + 5,
}
""",
    ),
    md("""
Fusing a chain can beat its members run apart (`v4+v5` costs 2.5 ms on the NPU, and `v5`
alone cannot run there), and letting the two branches overlap saves more. Once your answer
passes, the cell below shows OpSeq's makespan beside PartitionTuner's own scheduler, which
uses both:
"""),
    answer(
        "ch02.opseq",
        """
for algo in ("opseq", "partitiontuner"):
    plan = schedule(pt, algo)
    print(f"{algo:15s} {plan.makespan:5.1f} ms   fused groups: {plan.fused}")
""",
    ),
    md(r"""
## What hetlab measures, and how

`hetlab.profiling.profile(graph, devices)` runs every operator **alone** on every device, many
times, and keeps the median. Two corrections make those isolated times add up to what a
whole-model run takes:

- **per-call overhead** $o_d$: what one call costs on device $d$ even for a trivial operator
  (measured on a one-Relu model, less the per-node slope of a 16-Relu chain). A whole-model
  run pays it once, not once per operator, so it is subtracted;
- **in-context factor** $\kappa_{\tau,d}$ per operator type $\tau$: inside a longer unit,
  tensors keep their layout and small operators fuse into big ones. Windows of consecutive
  operators are timed as one unit, and one factor per type is fitted so that the members add
  up to each window.

$$w_{v,d} = \left(\tilde m_{v,d} - o_d\right)\,\kappa_{\tau(v),d}$$

where $\tilde m_{v,d}$ is the median of the isolated runs. A shipped profile keeps all three:
"""),
    code("""
sq = load_measured_profile("xeon-2core-pocl", "squeezenet")
info = sq.extra["profile"]
print("per-call overhead o_d (ms):", info["overhead_ms"])
rows = [{"operator": n.id.split("/")[-1], "op": n.op_type,
         "isolated median": n.extra["stats"]["cpu0"]["median"],
         "κ": n.extra["context"]["cpu0"], "cost w": n.cost["cpu0"]} for n in sq.nodes[:8]]
pd.DataFrame(rows).round(4)
"""),
    md("""
### A tiny live profile

The same measurement, here and now, on one CPU core group (`cpu0`) of this machine, with few
repeats to keep it short. Its costs will not equal the shipped ones: another machine, and far
fewer samples. Should the measurement fail here (no `cpu0`, a runtime error), the cell says
so and compares with the profile of the 16-core host instead.
"""),
    code("""
from hetlab.calibrate import profile
from hetlab.course import measured_or_shipped

live, measured = measured_or_shipped(
    lambda: profile("squeezenet", ["cpu0"], repeat=3, warmup=1, seconds=0.01, rounds=1,
                    comm=False, handoff=False, concurrent=False, cache=False),
    ["cpu0"], shipped=("h100-16core", "squeezenet"), what="a live profile of cpu0")
other = "live (this machine)" if measured else "shipped (16-core host)"
print(len(live.nodes), f"operators; whole model on cpu0 ({other}):",
      live.extra["profile"]["whole_model_ms"]["cpu0"]["median"], "ms")
both = pd.DataFrame({"shipped (2-core machine)": {n.id: n.cost["cpu0"] for n in sq.nodes},
                     other: {n.id: n.cost["cpu0"] for n in live.nodes}}).dropna()
px.scatter(both, x="shipped (2-core machine)", y=other, log_x=True, log_y=True,
           height=330, title="squeezenet on cpu0: cost per operator (ms), two machines")
"""),
    md(r"""
## Links: calibration and the transfer model

Moving a tensor from device $a$ to device $b$ is what the executor does: copy it out of $a$,
copy it into $b$. Like OverSeer's *Calibrator*, hetlab times tensors of 1 KB to 16 MB on each
ordered device pair and fits

$$C_{a,b}(T) = \ell_{a,b} + \frac{\mathrm{bytes}(T)}{\beta_{a,b}}$$

(latency $\ell$ in ms, bandwidth $\beta$ in bytes per ms). HOPE instead measures each tensor
shape the model actually sends; a profile keeps both: the fitted link in `problem.comm`, the
measured time of each edge in `edge.comm`.
"""),
    code("""
LINK = "cpu0->cl0"
cal = sq.extra["calibration"][LINK]
pts = pd.DataFrame(cal["points"], columns=["bytes", "ms"])
link = sq.comm[LINK]
fit = pd.DataFrame({"bytes": pts.bytes, "ms": [link.time(b) for b in pts.bytes]})
fig = go.Figure([go.Scatter(x=pts.bytes, y=pts.ms, mode="markers", name="measured"),
                 go.Scatter(x=fit.bytes, y=fit.ms, mode="lines", name="ℓ + bytes/β")])
fig.update_layout(xaxis_type="log", yaxis_type="log", height=320, xaxis_title="bytes",
                  yaxis_title="ms", title=f"{LINK}: ℓ = {link.latency:.3f} ms, β = {link.bandwidth:.3g} B/ms")
fig
"""),
    code("""
edge = sq.edges[0]
print(edge.src, "->", edge.dst, "| tensor", edge.extra["shapes"])
"""),
    *exercise(
        "ch02.transfer",
        "For this first edge of squeezenet, how many bytes does its tensor hold, and how "
        "long does the link model of `cpu0->cl0` say it takes to move (ms)? Use `sq`, "
        "`edge` and `sq.comm`.",
        """
from hetlab.cost import load_measured_profile

sq = load_measured_profile("xeon-2core-pocl", "squeezenet")
edge = sq.edges[0]
n, c, h, w = (int(x) for x in edge.extra["shapes"].split(":")[0].split("x"))
nbytes = 4 * n * c * h * w  # float32
link = sq.comm["cpu0->cl0"]
answer = {"bytes": nbytes, "ms": link.latency + nbytes / link.bandwidth}
""",
    ),
    md("Once your answer passes, the library's link model beside the time measured for it:"),
    answer(
        "ch02.transfer",
        """
print(f"the link model says {link.time(edge.bytes):.3f} ms; measured for this tensor: "
      f"{edge.comm[LINK]:.3f} ms")
""",
    ),
    md("""
The fit is made on fresh tensors of every size; a tensor of a real model may pay a layout
change or a cold cache on top. That is why HOPE profiles the model's own tensors.

## A whole profile at a glance

HOPE's phones: Inception-v3 on a Huawei P40, CPU and GPU. Each row is an operator, each
column a device, on a log colour scale.
"""),
    code("""
phone = load_hope_profile("inception-v3-huawei_p40")
heatmap_figure(phone)
"""),
    md("""
**To remember.** A cost is a corrected median of isolated runs; a transfer has a fitted link
model and, where measured, the time of the model's own tensor; a fused group has a cost of
its own. Every scheduler in the next chapters reads only these numbers.
"""),
]


def cells() -> list:
    return list(CELLS)
