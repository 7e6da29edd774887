"""Chapter 7: the structure of HOPE's Fig. 4 on its phone profiles."""

from __future__ import annotations

from .cells import code, md

NAME = "07_reproduce_hope.ipynb"

SETUP = code("""
# figures come from hetlab.viz; the shipped profiles from hetlab.cost.datasets
from hetlab.widgets.backend import missing
from hetlab.cost.datasets import profiles_dir, load_hope_profile
PHONES = profiles_dir()
""")


CELLS = [
    md("""
# 7 · The structure of HOPE's Fig. 4

HOPE compares, per model and phone, the latency of: CPU only, GPU only, MOSAIC, StarPU
(DMDAR), HOPE:GS (greedy) and HOPE:LP (ILP), each **normalized to GPU only**. Here every bar is
the standard simulator's makespan on a real phone profile (HOPE's own measurements of each
operator); HOPE's reported numbers, where the profile carries them, are printed beside.
"""),
    SETUP,
    code("""
from hetlab.schedulers import schedule
from hetlab.errors import HetlabError
import pandas as pd
ALGOS = [("CPU", "single:cpu"), ("GPU", "single:gpu"), ("MOSAIC", "mosaic"), ("StarPU", "dmdar"),
         ("HOPE:GS", "greedy"), ("HOPE:LP", "ilp")]
MODELS = ["inception-v3-huawei_p40"]   # add more phones/models when you have minutes to spare
rows = []
if PHONES:
    for m in MODELS:
        prob = load_hope_profile(m)
        for label, algo in ALGOS:
            try:
                kw = {"time_limit": 2} if algo == "ilp" else {}
                mk = schedule(prob, algo, **kw).makespan
            except (HetlabError, ImportError) as e:   # an algorithm that cannot plan this profile
                mk = None
                print(f"{m} {label}: {e}")
            rows.append(dict(model=m, version=label, makespan=mk))
df = pd.DataFrame(rows)
df
"""),
    code("""
import plotly.graph_objects as go
fig = None
if len(df) and df.makespan.notna().any():
    gpu = df[df.version == "GPU"].set_index("model").makespan
    df["normalized"] = df.apply(lambda r: r.makespan / gpu.get(r.model) if r.makespan and gpu.get(r.model) else None, axis=1)
    fig = go.Figure([go.Bar(name=v, x=d.model, y=d.normalized) for v, d in df.groupby("version", sort=False)])
    fig.update_layout(barmode="group", yaxis_title="latency / GPU-only latency", height=380,
                      title="normalized latency (simulated on HOPE's phone profiles)")
fig
"""),
    md("What HOPE's own result files report for these profiles (ms):"),
    code("""
if PHONES:
    for m in MODELS:
        r = load_hope_profile(m).extra.get("_hope_results", {})
        print(m, {k: v for k, v in r.items() if not isinstance(v, dict)} or sorted(r))
"""),
]


def cells() -> list:
    return list(CELLS)
