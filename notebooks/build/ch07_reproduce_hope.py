"""Chapter 7: HOPE Fig. 4 from the shipped phone profiles, and when heterogeneity pays."""

from __future__ import annotations

from .cells import code, exercise, md

NAME = "07_reproduce_hope.ipynb"


def cells() -> list:
    return _intro() + _hand() + _fig4() + _what_if()


def _intro() -> list:
    return [
        md(r"""
# 7 · Reproducing HOPE's Fig. 4, and when a mixed plan pays

HOPE (Xia, Zhao, Cui and Feng, 2022) schedules a CNN over a phone's CPU and GPU. Its Fig. 4
compares, for each model and phone, the latency of CPU only, GPU only, MOSAIC, StarPU (DMDAR),
HOPE's greedy search (HOPE:GS) and its ILP (HOPE:LP), each **normalised to GPU only**.

**Learning objectives.** After this chapter you can

1. compute a normalised latency and the gain of a mixed plan over the best single device;
2. rebuild Fig. 4 from HOPE's own per-operator phone measurements, and set it beside the
   latencies HOPE measured on the phones;
3. explain with a what-if platform why HOPE's premise, devices of *comparable* speed, matters:
   see where the mixed plan stops paying as one device gets faster or the link slower.
"""),
        code("""
import os

import pandas as pd
import plotly.graph_objects as go
from hetlab.course import ORDER, PLAN, check, hint, small_dag
from hetlab.cost import load_hope_profile, load_measured_profile
from hetlab.schedulers import Plan, schedule
from hetlab.viz import compare_figure
"""),
    ]


def _hand() -> list:
    return [
        md(r"""
## The quantities of Fig. 4

With $T_{\text{GPU}}$ the GPU-only latency, a plan $P$'s bar is $T_P / T_{\text{GPU}}$:
below 1 it beats the GPU alone. The **gain** of a mixed plan over the best single device is

$$
g = \frac{\min_d T_d}{T_{\text{mixed}}} - 1 ,
$$

so $g = 0.5$ means 50 % more inferences per second than the best device alone.

On the six-operator example: everything on the CPU, everything on the GPU, and the mixed
plan of chapter 6's exercise (B and E on the GPU), on one time axis.
"""),
        code("""
p = small_dag()
plans = [Plan.build(p, f"{d}-only", dict.fromkeys(ORDER, d), ORDER) for d in p.devices]
plans.append(Plan.build(p, "mixed", PLAN, ORDER))
compare_figure(plans, [pl.algo for pl in plans], problem=p)
"""),
        *exercise(
            "ch07.normalized",
            "From the three plans above: the single-device latencies, the three latencies "
            "normalised to GPU only, and the gain of the mixed plan.",
            """
answer = {
    "single": {"cpu": 2 + 4 + 3 + 1 + 3 + 1, "gpu": 3 + 1 + 2 + 4 + 3 + 2},
    "normalized": {"cpu": 14 / 15, "gpu": 1.0, "mixed": 11 / 15},
    "gain": 14 / 11 - 1,
}
""",
        ),
    ]


def _fig4() -> list:
    return [
        md("""
## Fig. 4 on HOPE's phone profiles

Each profile holds HOPE's measurements of every operator of a model on one phone: its cost on
the CPU (2 threads) and on the GPU, and the transfer of every tensor between them. Every bar
below is the standard simulator's makespan of one algorithm's plan on that profile. The
diamonds are what HOPE's result files report as *measured on the phone* for the same model
(CPU-only, and the greedy and ILP plans), where the profile carries them; HOPE's ILP result
files are told apart from its greedy ones by their names only.
"""),
        code("""
ALGOS = {"CPU": "single:cpu", "GPU": "single:gpu", "MOSAIC": "mosaic", "StarPU": "dmdar",
         "HOPE:GS": "greedy", "HOPE:LP": "ilp"}
QUICK = os.environ.get("HETLAB_QUICK") == "1"   # the tests' run: two phones, fewer what-ifs
PHONES = ["redmi", "vivo_z3"] if QUICK else ["redmi", "lenovo_k5", "oneplus5t", "vivo_z3"]
MODEL = "inception-v3"
rows = []
for phone in PHONES:
    prob = load_hope_profile(f"{MODEL}-{phone}")
    for label, algo in ALGOS.items():  # every algorithm at its default parameters
        rows.append({"phone": phone, "version": label, "ms": schedule(prob, algo).makespan})
sim = pd.DataFrame(rows)
sim["normalized"] = sim.ms / sim.phone.map(sim[sim.version == "GPU"].set_index("phone").ms)
sim.pivot(index="phone", columns="version", values="normalized")[list(ALGOS)].round(3)
"""),
        code("""
def hope_measured(phone):
    \"\"\"HOPE's measured latencies (ms, CPU with 2 threads) for MODEL on one phone.\"\"\"
    res = load_hope_profile(f"{MODEL}-{phone}").extra.get("_hope_results", {})
    out = {}
    for label, key in [("HOPE:GS", "greedy"), ("HOPE:LP", "ilp_probably")]:
        r = res.get(key)
        if r:
            out["GPU"] = r["alone_gpu_measured_ms"]
            out["CPU"] = r["alone_cpu_measured_ms"]["cpu2thr"]
            out[label] = r["real_measured_ms"]["cpu2thr"]
    return out

measured = pd.DataFrame([{"phone": ph, "version": v, "ms": ms}
                         for ph in PHONES for v, ms in hope_measured(ph).items()])
measured["normalized"] = measured.ms / measured.phone.map(
    measured[measured.version == "GPU"].set_index("phone").ms)

colours = dict(zip(ALGOS, ["#4C78A8", "#F58518", "#54A24B", "#B279A2", "#E45756", "#72B7B2"]))
fig = go.Figure(go.Bar(x=[sim.phone, sim.version], y=sim.normalized, name="simulated",
                       marker_color=sim.version.map(colours)))
hope = measured[measured.version != "GPU"]
fig.add_scatter(x=[hope.phone, hope.version], y=hope.normalized, mode="markers",
                name="measured by HOPE", marker={"symbol": "diamond", "size": 11,
                "color": "white", "line": {"width": 2, "color": "black"}})
fig.add_hline(y=1, line_dash="dot")
fig.update_layout(height=440, yaxis_title="latency / GPU-only latency",
                  title=f"{MODEL}: simulated on HOPE's profiles (bars), measured by HOPE (diamonds)")
fig
"""),
    ]


def _what_if() -> list:
    return [
        md("""
Two things to read in it. First, the order of the bars: where the simulator and HOPE agree on
which plan wins, the profile explains the result. Second, the distance between a bar and its
diamond: HOPE measured its plans with an older profile than the one shipped here, and on a
phone a plan's operators run slower beside each other than alone, which no per-operator
profile sees.

## What if: when does a mixed plan pay?

The phones' CPU and GPU run Inception-v3 at similar speeds. On a host with a discrete GPU the
GPU is several times faster than a CPU group, and every scheduler puts the whole model on it.
A **what-if platform** (`hetlab.cost.what_if`) divides one device's costs by a speed
factor, or multiplies the links' bandwidth, in a copy of a measured profile. What follows is
computed on such copies: **what-if, not measurements.**

The GPU:CPU speed ratio of a profile is $r = \\sum_v c_{v,\\text{CPU}} / \\sum_v c_{v,\\text{GPU}}$
over the operators both can run. For each ratio we scale the GPU and compute the gain $g$ of
the best plan (HEFT, PEFT, DMDA, greedy, or a single device when none of them beats it).
"""),
        code("""
import numpy as np
from hetlab.cost import what_if

MIXED = ["heft", "peft", "dmda", "greedy"]
PROFILES = {
    "phone (Huawei P40)": (load_hope_profile("inception-v3-huawei_p40"), "cpu", "gpu"),
    "16-core host + GPU": (load_measured_profile("h100-16core", "inception_v3"), "cpu0", "cl0"),
}

def speed_ratio(prob, cpu, gpu):
    m = prob.cost_matrix
    i, j = prob.dev_index[cpu], prob.dev_index[gpu]
    both = np.isfinite(m[:, i]) & np.isfinite(m[:, j])
    return m[both, i].sum() / m[both, j].sum()

def gain(prob):
    single = min(schedule(prob, f"single:{d}").makespan for d in prob.devices)
    best = min([single] + [schedule(prob, a).makespan for a in MIXED])
    return single / best - 1

RATIOS = np.logspace(-1, 2, 7 if QUICK else 13)
BANDWIDTH = np.logspace(-2, 2, 5 if QUICK else 9)
curves = {}
for label, (prob, cpu, gpu) in PROFILES.items():
    r0 = speed_ratio(prob, cpu, gpu)
    ratios = np.sort(np.append(RATIOS, r0))
    curves[label] = {
        "r0": r0,
        "ratios": ratios,
        "speed": [gain(what_if(prob, {gpu: r / r0})) for r in ratios],
        "bandwidth": [gain(what_if(prob, bandwidth=b)) for b in BANDWIDTH],
        "bandwidth_equal": [gain(what_if(prob, {gpu: 1 / r0}, bandwidth=b)) for b in BANDWIDTH],
        "at_measured": gain(prob),
    }
    print(f"{label}: measured GPU:CPU speed ratio {r0:.2f}, gain {curves[label]['at_measured']:.1%}")
"""),
        code("""
from plotly.subplots import make_subplots

fig = make_subplots(rows=1, cols=2, subplot_titles=(
    "gain against the GPU:CPU speed ratio", "gain against the link bandwidth"))
for k, (label, c) in enumerate(curves.items()):
    colour = ["#4C78A8", "#F58518"][k]
    fig.add_scatter(x=c["ratios"], y=c["speed"], name=label, line={"color": colour}, row=1, col=1)
    fig.add_scatter(x=BANDWIDTH, y=c["bandwidth"], name=label, line={"color": colour},
                    showlegend=False, row=1, col=2)
    fig.add_scatter(x=BANDWIDTH, y=c["bandwidth_equal"], name=f"{label}, GPU as fast as CPU",
                    line={"color": colour, "dash": "dash"}, row=1, col=2)
    for col, x in [(1, c["r0"]), (2, 1.0)]:
        fig.add_scatter(x=[x], y=[c["at_measured"]], mode="markers+text", text=["measured"],
                        textposition="top center", marker={"size": 12, "color": colour,
                        "symbol": "star"}, showlegend=False, row=1, col=col)
fig.update_xaxes(type="log", title_text="GPU:CPU speed ratio (what-if)", row=1, col=1)
fig.update_xaxes(type="log", title_text="bandwidth × measured (what-if)", row=1, col=2)
fig.update_yaxes(tickformat=".0%")
fig.update_yaxes(title_text="gain over the best single device", row=1, col=1)
fig.update_layout(height=440, legend={"orientation": "h", "y": -0.25},
                  title="What-if platforms (not measured): stars mark the real ones")
fig
"""),
        md("""
The gain peaks where the two devices are about equally fast and falls to zero as one of them
pulls ahead: past that point the slower device only adds transfers, and the best plan is the
fast device alone. The phone sits near the peak; the host with a discrete GPU sits far to the
right, where no mixed plan pays. Narrower links pull the gain down, because every operator
moved to the other device pays its transfers; at its measured speeds the host gains nothing
at any bandwidth, and even with a GPU slowed to the CPU's speed (dashed) its links cap the
gain well below the phone's. This is HOPE's premise as a picture:
its schedulers help when the devices are of comparable speed.

Things to try: another phone profile (`inception-v3-vivo_z3`), scaling the CPU instead of
the GPU, or `latency=` instead of `bandwidth=` in `what_if`.
"""),
    ]
