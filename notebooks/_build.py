"""Writes the notebooks of this folder (without outputs) from the cell sources below.

Run ``python notebooks/_build.py`` after editing; review this file, not the JSON.
"""

from __future__ import annotations

from pathlib import Path

import nbformat as nbf

HERE = Path(__file__).resolve().parent


def md(s: str):
    return nbf.v4.new_markdown_cell(s.strip())


def code(s: str):
    return nbf.v4.new_code_cell(s.strip())


SETUP = code("""
# hetlab is installed in this environment (pip install -e .); figures come from hetlab.viz
from hetlab.widgets.backend import missing
from hetlab.cost.datasets import profiles_dir, load_hope_profile
PHONES = profiles_dir()
print("HOPE phone profiles:", PHONES or "not found (put shared/hope-profiles beside the repository)")
""")

NOTEBOOKS: dict[str, list] = {}

NOTEBOOKS["workbench"] = [
    md("""
# hetlab workbench

Load a model, profile it on this machine's devices, look at its operator DAG and the cost of
every operator, then compare HOPE's ILP scheduler with a greedy one and run the plan for real.

* **ε, NT** shape the ILP's partition (HOPE Algorithm 1), **K** the greedy search width.
  Sliders solve again when you release them.
* **Run** executes the chosen plan on the real devices and draws the measured timeline
  beside the prediction.
* Without a model or profiler, the workbench opens a real phone profile from HOPE's
  measurements: you can explore and schedule it, but not run it here.
"""),
    SETUP,
    code("""
from hetlab.widgets import Workbench

MODEL = "squeezenet"     # a zoo name or a path to an .onnx file
wb = Workbench(model=MODEL)
if not wb.profile_button.disabled:
    wb.profile()         # measure every op on this machine's devices
elif wb.problem is None and PHONES:
    print("cannot profile here:", wb.profile_button.tooltip, "- exploring a phone profile instead")
    wb.problem = load_hope_profile("inception-v3-huawei_p40")
wb
"""),
    md("""
The state behind the widgets is plain Python: `wb.problem`, `wb.ilp_plan`, `wb.greedy_plan`,
`wb.run_report`. For example, the plans' makespans in ms:
"""),
    code("""
{name: (round(p.makespan, 3) if p else None) for name, p in [("ilp", wb.ilp_plan), ("compared", wb.greedy_plan)]}
"""),
]

NOTEBOOKS["01_model_and_dag"] = [
    md("""
# 1 · A model as an operator DAG

hetlab reads an ONNX model into an `OpGraph`: one vertex per operator, one edge per pair of
operators that pass a tensor, with its size in bytes (spec §1). The **upward rank** of an
operator (HOPE eq. 8) is 1 for a source, else 1 + the largest rank of its predecessors; the
DAG is drawn in columns of equal rank.
"""),
    SETUP,
    code("""
from hetlab.viz import dag_figure
import hetlab.graph as G

graph = None
if not missing("loader"):
    try:
        graph = G.load("squeezenet")
    except Exception as e:          # e.g. the zoo is not built yet
        print("could not load squeezenet:", e)
if graph is not None:
    print(graph.summary())
"""),
    code("""
if graph is not None:
    fig = dag_figure(graph, color="uprank")
elif PHONES:
    fig = dag_figure(load_hope_profile("inception-v3-huawei_p40"), color="uprank")
else:
    fig = None
fig
"""),
    md("Colour by operator type: the repeated blocks (fire modules, inception cells) show up."),
    code("""
fig2 = dag_figure(graph, color="op") if graph is not None else (
    dag_figure(load_hope_profile("inception-v3-huawei_p40"), color="op") if PHONES else None)
fig2
"""),
    md("""
## Width per rank: where is the parallelism?

Operators of equal upward rank have no path between them, so they *could* run in parallel.
"""),
    code("""
import collections
from hetlab.viz import dag_layout
obj = graph if graph is not None else (load_hope_profile("nasnet-large-huawei_p40") if PHONES else None)
if obj is not None:
    lay = dag_layout(obj)
    width = collections.Counter(lay.uprank.tolist())
    print(f"{len(lay.ids)} ops, depth {max(width)}, widest rank {max(width.values())} ops wide")
"""),
    md("A big one: NASNet-large as profiled on a Huawei P40 (1049 operators)."),
    code("""
dag_figure(load_hope_profile("nasnet-large-huawei_p40"), color="cost:gpu") if PHONES else None
"""),
]

NOTEBOOKS["02_profiling"] = [
    md("""
# 2 · Profiling: what does each operator cost on each device?

`hetlab.cost.profile(graph, devices)` measures every operator on every device (medians, in
ms) and the transfer cost of every edge between devices; the result is a `Problem` (spec §2).
A device that cannot run an operator gets `null` (grey, with an x, in the heatmap).
"""),
    SETUP,
    code("""
from hetlab.viz import heatmap_figure
problem = None
why = missing("loader", "zoo", "devices", "profiler")
if not why:
    import hetlab.graph as G
    from hetlab.cost import profile
    from hetlab.devices.platform import devices
    devs = devices()
    print("devices:", [d.name for d in devs])
    graph = G.load("squeezenet")
    problem = profile(graph, devs)
else:
    print("profiling needs:", *why, sep="\\n  ")
    if PHONES:
        problem = load_hope_profile("inception-v3-huawei_p40")
        print("showing a phone profile instead:", problem.name)
"""),
    code("heatmap_figure(problem) if problem is not None else None"),
    md("Which operators prefer which device? Ratios of device costs per operator type:"),
    code("""
import pandas as pd
if problem is not None:
    rows = [{"op": n.op_type, **{d: n.cost.get(d) for d in problem.devices}} for n in problem.nodes]
    df = pd.DataFrame(rows).groupby("op").sum(min_count=1).sort_values(problem.devices[0], ascending=False)
    display(df.head(12).round(3))
"""),
    md("Save a profile (atomically) to explore it later, even on a machine without those devices:"),
    code("""
import tempfile, pathlib
from hetlab.cost.problem import Problem
if problem is not None:
    path = pathlib.Path(tempfile.mkdtemp()) / f"{problem.name}.problem.json"
    problem.save(path)
    again = Problem.load(path)
    print(path.name, len(again.nodes), "ops; identical costs:",
          (again.cost_matrix == problem.cost_matrix).all())
"""),
]

NOTEBOOKS["03_ilp_vs_greedy"] = [
    md("""
# 3 · HOPE's ILP against the greedy search

HOPE (Wang et al., 2022) splits the DAG by upward rank into subgraphs of at most **NT**
operators, each cut balanced within **ε** (Algorithm 1), and solves one ILP per subgraph.
Its greedy search (GS) keeps the **K** best partial plans. Every makespan shown is the one
standard simulator's (spec §3). We use a real phone profile: Inception-v3 on a Huawei P40.
"""),
    SETUP,
    code("""
from hetlab.schedulers import schedule
from hetlab.viz import compare_figure, gantt_figure, dag_figure
problem = load_hope_profile("inception-v3-huawei_p40") if PHONES else None
have = {a: not missing(f"algo:{a}") for a in ("ilp", "greedy")}
print(problem.name if problem else "no phone profiles", have)
"""),
    code("""
plans = {}
if problem is not None:
    for algo, params in [("ilp", dict(epsilon=0.2, nt=12, time_limit=2)), ("greedy", dict(k=3))]:
        if have[algo]:
            plans[algo] = schedule(problem, algo, **params)
            print(f"{algo:7s} makespan {plans[algo].makespan:8.2f} ms  solved in {plans[algo].solve_seconds:.2f} s")
compare_figure(list(plans.values()), [a.upper() for a in plans], problem=problem) if plans else None
"""),
    md("## The partition: subgraphs of at most NT operators"),
    code("""
parts = None
try:
    from hetlab.schedulers.partition import partition
except ImportError as e:
    print("the partitioner has not landed yet:", e)
else:
    if problem is not None:
        parts = partition(problem, nt=12, epsilon=0.2)
        part_of = {problem.nodes[i].id: f"part {k % 10}" for k, p in enumerate(parts) for i in p}
        print(len(parts), "subgraphs, largest", max(map(len, parts)))
dag_figure(problem, color=part_of) if parts else None
"""),
    md("## Sweeping ε, NT and K"),
    code("""
import pandas as pd
rows = []
if problem is not None and have["ilp"]:
    for nt in (6, 12):
        for eps in (0.2,):
            p = schedule(problem, "ilp", epsilon=eps, nt=nt, time_limit=2)
            rows.append(dict(algo="ilp", nt=nt, epsilon=eps, makespan=p.makespan, solve_s=p.solve_seconds))
if problem is not None and have["greedy"]:
    for k in (1, 2, 4):
        p = schedule(problem, "greedy", k=k)
        rows.append(dict(algo="greedy", k=k, makespan=p.makespan, solve_s=p.solve_seconds))
pd.DataFrame(rows).round(3) if rows else "no scheduler available yet"
"""),
]

NOTEBOOKS["04_run_for_real"] = [
    md("""
# 4 · Run for real: predicted against measured

The executor runs a plan on this machine's devices (onnxruntime CPU core groups, OpenCL
devices), checks the outputs against plain onnxruntime, and records when every operator
started and finished (spec §5). Here we compare that timeline with the simulator's.
"""),
    SETUP,
    code("""
why = missing("loader", "zoo", "devices", "profiler", "executor", "algo:greedy")
print("ready" if not why else "this notebook needs:\\n  " + "\\n  ".join(why))
"""),
    code("""
report = plan = problem = None
if not why:
    import hetlab.graph as G
    from hetlab.cost import profile
    from hetlab.devices.platform import devices
    from hetlab.schedulers import schedule
    from hetlab.executor import run
    devs = devices()
    graph = G.load("squeezenet")
    problem = profile(graph, devs)
    plan = schedule(problem, "greedy")
    report = run(graph, plan, devs, repeat=5, check=True, problem=problem)
    doc = report.to_json() if hasattr(report, "to_json") else report
    keys = ("latency_ms", "predicted_ms", "predicted_io_ms", "predicted_host_ms", "max_rel_err")
    print({k: doc[k] for k in keys if k in doc})
"""),
    code("""
from hetlab.viz import compare_figure
compare_figure([plan, report], ["predicted (greedy)", "measured"], problem=problem) if report else None
"""),
    md("""
## Where did the time go?

`predicted_ms` is spec §3's makespan. `predicted_io_ms` adds moving the inputs and outputs
between host memory and a discrete GPU; `predicted_host_ms` also charges every unit the
host's dispatch, one unit at a time. The report's `critical_path` follows the chain of units
that set the measured latency and splits it exactly into *dispatch* (a unit ready but not yet
started: Python, a thread waking, the GIL), *copies*, *run* (inside the device) and a *tail*;
`predicted_run_ms` is what the profile says the same units cost. On the lent GPU machine the
mixed plans that missed their prediction lost the time in *run*, not in dispatch.
"""),
    code("""
doc.get("critical_path") if report else None
"""),
    md("""
The measured trace can also be written in Chrome trace-event format and opened in Perfetto:
`hetlab run squeezenet --plan PLAN.json --trace trace.json`.
"""),
]

NOTEBOOKS["05_exercises"] = [
    md("""
# 5 · Exercises

Each `check_...` function tells you whether your answer is right (and gives a hint if not).
Times are in ms; every plan is timed with hetlab's standard simulator.
"""),
    code("""
from hetlab import exercises as ex
from hetlab.viz import dag_figure, gantt_figure
SHOW_SOLUTIONS = True   # teachers: set to False before handing out
"""),
    md("""
## PartitionTuner's example (8 operators, CPU + NPU)

Costs include transfers; `None` = the NPU cannot run it. Groups `v4+v5` and `v6+v7` have
their own (fused) costs.
"""),
    code("""
pt = ex.partitiontuner_example()
for n in pt.nodes:
    print(n.id, n.op_type, n.cost)
print("groups:", [(g.nodes, g.cost) for g in pt.groups])
dag_figure(pt, color="cost:npu", height=300)
"""),
    md(
        "**Exercise 1.** OpSeq puts each operator on its fastest device and runs one at a time. Its makespan?"
    ),
    code("""
answer_1 = 15.0 if SHOW_SOLUTIONS else None   # your number here
ex.check_opseq(answer_1) if answer_1 is not None else None
"""),
    md("**Exercise 2.** With fused groups, still one unit at a time: reach 14 ms."),
    code("""
devices_2 = {"v1": "cpu", "v2": "cpu", "v3": "npu", "v4": "npu", "v5": "npu", "v6": "cpu", "v7": "cpu", "v8": "cpu"}
fused_2 = [["v4", "v5"], ["v6", "v7"]]
ex.check_pt_sequential(devices_2, fused_2)
"""),
    md("**Exercise 3.** Now let independent branches overlap: reach PartitionTuner's 12.5 ms."),
    code("""
ex.check_pt_parallel(devices_2, fused_2)
"""),
    code("""
from hetlab.schedulers import Plan
gantt_figure(Plan.build(pt, "by hand", devices_2, [pt.nodes[i].id for i in pt.topo], fused_2), pt)
"""),
    md("## Hand-scheduling a small DAG (transfers cost 1 ms)"),
    code("""
small = ex.small_dag()
for n in small.nodes:
    print(n.id, n.cost)
dag_figure(small, color="cost:gpu", height=280)
"""),
    md("**Exercise 4.** Upward ranks of A..F?"),
    code("""
ex.check_upranks({"A": 1, "B": 2, "C": 2, "D": 2, "E": 3, "F": 4})
"""),
    md(
        "**Exercise 5.** Place every op on `cpu` or `gpu` to reach the optimum (it is found by enumeration)."
    ),
    code("""
mine = {"A": "cpu", "B": "gpu", "C": "gpu", "D": "cpu", "E": "gpu", "F": "cpu"}
ex.check_hand_schedule(mine)
"""),
    code("""
if SHOW_SOLUTIONS:
    import itertools
    from hetlab.schedulers import simulate
    ids = [n.id for n in small.nodes]
    order = [small.nodes[i].id for i in small.topo]
    best = min((dict(zip(ids, d)) for d in itertools.product(small.devices, repeat=6)),
               key=lambda m: simulate(small, m, order).makespan)
    ex.check_hand_schedule(best)
    print(best)
"""),
]

NOTEBOOKS["06_reproduce_hope"] = [
    md("""
# 6 · The structure of HOPE's Fig. 4

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
            except (HetlabError, ImportError) as e:   # an algorithm not in this build
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


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        nb = nbf.v4.new_notebook()
        nb.cells = [nbf.from_dict(dict(c, id=f"{name[:12]}-{i:02d}")) for i, c in enumerate(cells)]
        nb.metadata = {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        }
        nbf.validate(nb)
        path = HERE / f"{name}.ipynb"
        tmp = path.with_suffix(".ipynb.tmp")
        tmp.write_text(nbf.writes(nb) + "\n")
        tmp.replace(path)
        print("wrote", path.name)


if __name__ == "__main__":
    main()
