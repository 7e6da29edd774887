"""Chapter 6: running a plan for real, predicted against measured."""

from __future__ import annotations

from .cells import code, md

NAME = "06_run_for_real.ipynb"

SETUP = code("""
# figures come from hetlab.viz; the shipped profiles from hetlab.cost.datasets
from hetlab.widgets.backend import missing
from hetlab.cost.datasets import profiles_dir, load_hope_profile
PHONES = profiles_dir()
""")


CELLS = [
    md("""
# 6 · Run for real: predicted against measured

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
`predicted_run_ms` is what the profile says the same units cost.
"""),
    code("""
doc.get("critical_path") if report else None
"""),
    md("""
The measured trace can also be written in Chrome trace-event format and opened in Perfetto:
`hetlab run squeezenet --plan PLAN.json --trace trace.json`.
"""),
]


def cells() -> list:
    return list(CELLS)
