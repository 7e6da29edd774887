"""Chapter 10: the streams of one GPU as devices, and when heterogeneity pays."""

from __future__ import annotations

from .cells import code, exercise, md

NAME = "10_streams.ipynb"


def cells() -> list:
    return _intro() + _streams() + _measured() + _exercise() + _crossover()


def _intro() -> list:
    return [
        md(r"""
# 10 · One GPU, several streams: where hetlab's best result comes from

Chapters 3-7 split a model between *different* devices: a CPU and a GPU of a phone, or core
groups and PoCL on a small machine. On a host with a discrete GPU that split rarely pays: the
GPU is so much faster that every scheduler puts the whole model on it. hetlab's largest
measured gains come instead from treating **the streams of one GPU as devices**: the
scheduler places the branches of a model (Inception's parallel towers, NASNet's cells) on
different streams, and the GPU runs them side by side.

**After this chapter you can**
1. say how a GPU's streams become devices of a problem (their cost, their links);
2. read the measured table: plans over four streams against one stream and against PyTorch;
3. locate a platform on the what-if curve that says when two *different* devices pay.

Nothing here needs a GPU: the costs come from a shipped profile, and the measurements from
the benchmark file committed with hetlab
(`benchmarks/results/nvidia-h200-16core/gpu_queues.json`, whose README gives the date, the
commit and the command).
"""),
        code("""
import numpy as np
import pandas as pd
import plotly.express as px

from hetlab.course import check, crossover, hint, stream_results, stream_table, streams_problem
from hetlab.cost import load_hope_profile, load_measured_profile, only_devices
from hetlab.schedulers import schedule
from hetlab.viz import gantt_figure
"""),
    ]


def _streams() -> list:
    return [
        md(r"""
## Streams as devices

A stream is an in-order queue of one GPU: kernels on one stream run one after the other,
kernels on different streams may overlap. To the schedulers, each stream is a device
(`hetlab.cost.with_queues`):

- a node costs on a stream what it costs on the GPU, times a **slowdown** $s$ on every stream
  but the first, because kernels running at once share the GPU. $s$ is measured: four copies
  of the whole model, one per stream, take $s$ times as long as one copy alone;
- a tensor passing between two streams moves no bytes: the link costs only the wait on an
  event between them (measured at about zero inside a CUDA graph).

Below, GoogLeNet's GPU costs from a shipped profile (`h100-16core`, the GPU through OpenCL),
with the slowdown measured for GoogLeNet on the H200's CUDA streams. It mixes two
measurements to show the mechanism; the measured table in the next section is the evidence.
"""),
        code("""
doc = stream_results()
streams = streams_problem("googlenet", doc)
print("devices:", streams.devices, "| slowdown on the views:",
      streams.extra["queues"]["cl0"]["slowdown"])
rows = []
for algo in ("single:cl0", "heft", "peft"):
    plan = schedule(streams, algo)
    rows.append({"plan": algo, "predicted ms": plan.makespan,
                 "streams used": len(set(plan.device_of.values()))})
display(pd.DataFrame(rows).round(3))
heft = schedule(streams, "heft")
gantt_figure(heft, streams, title=f"heft over four streams: {heft.makespan:.2f} ms (predicted)")
"""),
        md("""
Each row of the chart is a stream. The scheduler moves the towers of each inception block to
the other streams; the prediction prices each node at its own cost and ignores how much the
kernels beside it slow it down beyond $s$, so it is optimistic. Only a measurement says
whether the overlap survives on the GPU.
"""),
    ]


def _measured() -> list:
    return [
        md("""
## What the measured table says

Medians of 50 runs per plan on the H200 host, every plan checked against onnxruntime. The
columns: onnxruntime on 16 CPU threads; PyTorch eager and as a CUDA graph (where onnx2torch
converts the model); hetlab's kernels on one OpenCL queue (`cl0`) and on one CUDA stream as
one CUDA graph (`cuda0`); and the `ilp`, `greedy` and `heft` plans over four streams.
"""),
        code("""
table = pd.DataFrame(stream_table(doc)).set_index("model")
print("source:", doc["_source"], "| GPU:", doc["device"]["device"])
table.round(3)
"""),
        code("""
cols = ["torch CUDA graph", "cuda0 (1 stream)", "ilp (streams)"]
long = table[cols].reset_index().melt(id_vars="model", var_name="run", value_name="ms")
px.bar(long.dropna(), x="model", y="ms", color="run", barmode="group", log_y=True, height=360,
       title="measured: PyTorch's CUDA graph, one stream, ilp over four streams")
"""),
        code("""
faster = table["ilp vs 1 stream"]
vs_torch = table["ilp vs torch"].dropna()
print(f"ilp over four streams against one stream: {faster.min():.2f}x-{faster.max():.2f}x "
      f"faster (most on {faster.idxmax()}, least on {faster.idxmin()})")
print(f"against PyTorch's best run: faster on {(vs_torch > 1).sum()} of {len(vs_torch)} models; "
      f"{', '.join(f'{m} {v:.2f}x' for m, v in vs_torch.items())}")
"""),
        md("""
Read it with the models' shapes in mind. Wide models with many independent branches
(pnasnet_mobile, nasnet_large, the Inceptions) give the streams something to overlap; a chain
such as resnet50 gives them almost nothing, and the plan is about as fast as one stream. The
gain over PyTorch comes mostly from elsewhere: hetlab runs the whole model as one captured
graph of its own fused kernels, and the streams add their overlap on top.
"""),
    ]


def _exercise() -> list:
    return [
        md("""
## Do the streams pay?

hetlab offers a model's plan the extra streams only when they run enough extra work: four
copies on four streams take $s$ times one copy's time, so the streams run $4 / s$ copies in
the time of one, and hetlab asks for at least 1.5.
"""),
        *exercise(
            "ch10.pays",
            "From the `slowdown` column: how many copies per unit of time do four streams run "
            "for googlenet and for nasnet_large, and does each pass hetlab's rule?",
            """
from hetlab.course import stream_results

slow = {r["model"]: r["streams"]["slowdown"] for r in stream_results()["rows"]}
copies = {m: 4 / slow[m] for m in ("googlenet", "nasnet_large")}
answer = {"copies": copies, "pays": {m: c >= 1.5 for m, c in copies.items()}}
""",
        ),
    ]


def _crossover() -> list:
    return [
        md(r"""
## When do two *different* devices pay? The what-if crossover

Chapter 7 made one device faster or slower in a copy of a measured profile
(`hetlab.cost.what_if`). Here the question is where the gain crosses zero. For each
GPU:CPU speed ratio $r$, the GPU's costs are scaled so that it runs the model $r$ times
faster than the CPU, and the gain of the best mixed plan (HEFT or PEFT) over the best single
device is computed. **What-if, not measurements**; the stars mark the real platforms.
"""),
        code("""
RATIOS = np.logspace(-1, 2, 13)
PLATFORMS = {
    "phone (Huawei P40)": (load_hope_profile("inception-v3-huawei_p40"), "cpu", "gpu"),
    "16-core host + H100 (OpenCL)": (
        only_devices(load_measured_profile("h100-16core", "inception_v3"), ["cpu0", "cl0"]),
        "cpu0", "cl0"),
}
curves = {label: crossover(prob, slow, fast, RATIOS) for label, (prob, slow, fast)
          in PLATFORMS.items()}
for label, c in curves.items():
    lo, hi, r0 = c["pays_from"], c["pays_until"], c["measured_ratio"]
    where = f"pays (gain >= 5%) for ratios {lo:.2g}-{hi:.2g}" if lo else "never pays"
    inside = "inside" if lo and lo <= r0 <= hi else "outside"
    print(f"{label}: a mixed plan {where}; the measured ratio {r0:.2f} is {inside} that "
          f"range (gain {c['measured_gain']:.0%})")
"""),
        code("""
import plotly.graph_objects as go

fig = go.Figure(layout={"height": 380, "xaxis_type": "log", "title":
                        "what-if gain of a mixed plan against the GPU:CPU speed ratio (not measured)"})
for label, c in curves.items():
    fig.add_scatter(x=c["ratios"], y=c["gains"], name=label)
    fig.add_scatter(x=[c["measured_ratio"]], y=[c["measured_gain"]], mode="markers",
                    marker={"symbol": "star", "size": 13}, name=f"{label}: measured")
fig.update_layout(xaxis_title="GPU:CPU speed ratio", yaxis_title="gain over the best device",
                  yaxis_tickformat=".0%")
fig
"""),
        md("""
The gain is largest where the two devices are about equally fast and falls to zero as one
pulls ahead: past that point the slower device only adds transfers. Where each real platform
sits on its curve is what matters; the lines printed above say whether it is inside the
range where a mixed plan pays.

That is why the streams work where a CPU + GPU split does not: the streams of one GPU are
*equal* devices (ratio 1, at the top of the curve) linked by shared memory (transfers of
almost nothing). What limits them is the slowdown $s$, the share of the GPU each stream gets.

**To remember.** Heterogeneity pays when the devices are of comparable speed and cheap to
move data between. On a host with a discrete GPU, the devices that meet both conditions are
the GPU's own streams; the measured table says by how much, model by model.
"""),
    ]
