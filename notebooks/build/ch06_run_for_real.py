"""Chapter 6: the critical path of a plan, running it for real, and replaying a profile."""

from __future__ import annotations

from .cells import code, exercise, md

NAME = "06_run_for_real.ipynb"


def cells() -> list:
    return _intro() + _timing() + _exercise() + _real_run() + _replay()


def _intro() -> list:
    return [
        md(r"""
# 6 · Run for real: predicted against measured, and the critical path

**Learning objectives.** After this chapter you can

1. compute the start times of a plan by hand and find its **critical path**, the chain of
   operators and waits that sets the makespan, and the **slack** of every operator off it;
2. run a plan on this machine's devices and compare the measured latency with the simulator's
   prediction;
3. split a measured run's latency along its critical path into dispatch, copies, run and tail;
4. replay a profile measured on other hardware on stand-in devices, and read the result as a
   replay rather than a measurement.
"""),
        code("""
from hetlab.course import check, critical_path, hand_dag, hand_gantt, hint, slack, small_dag
from hetlab.schedulers import Plan, schedule, simulate
from hetlab.viz import compare_figure
"""),
    ]


def _timing() -> list:
    return [
        md(r"""
## The timing of a plan

A plan gives every operator $v$ a device $d(v)$ and every device an order. In the standard
timing model a unit *receives* its inputs from other devices before it computes, and that
occupies its device too. With $c_{v,d}$ the cost of $v$ on $d$, $t_{uv}$ the transfer of edge
$u \to v$ between two devices and $\mathrm{prev}(v)$ the operator before $v$ on its device:

$$
S_v = \max\Big(\max_{u \in \mathrm{pred}(v)} F_u,\; F_{\mathrm{prev}(v)}\Big), \qquad
F_v = S_v + c_{v,d(v)} + \sum_{u \in \mathrm{pred}(v),\, d(u) \ne d(v)} t_{uv},
$$

and the makespan is $\max_v F_v$. Every $S_v$ equals the finish of *something*: a predecessor
whose result $v$ waited for, or the operator before it on its device. Following those
back from the operator that finishes last gives the **critical path**. An operator off it
has **slack**: it could finish later by

$$
\mathrm{slack}_v = L_v - F_v, \qquad
L_v = \min\Big(\min_{s \in \mathrm{succ}(v)} (L_s - \tau_s),\; L_{\mathrm{next}(v)} -
\tau_{\mathrm{next}(v)}\Big),
$$

where $\tau_s = F_s - S_s$ and $L = $ makespan for the last operators, without delaying the
plan.

## A worked example

Six operators on a CPU and a GPU; each node is labelled with its cost on both, each edge with
its transfer time (1 ms). The plan below runs B on the GPU and everything else on the CPU,
in the order A..F.
"""),
        code("""
p = small_dag()
ORDER = ["A", "B", "C", "D", "E", "F"]
worked = {"A": "cpu", "B": "gpu", "C": "cpu", "D": "cpu", "E": "cpu", "F": "cpu"}
t = simulate(p, worked, ORDER)
hand_dag(p, values=t.start, value_name="start", device_of=worked,
         title="worked plan: start times (ms)")
"""),
        md("""
E's inputs are ready at 5 ms (C) but the CPU is busy with D until 6 ms: E waits for its
*device*. D waits for C, C for A. So the chain that sets the makespan of 11 ms is
A → C → D → E → F, and B, whose result is ready at 4 ms, has slack.
"""),
        code("""
plan = Plan.of(worked, ORDER)  # a plan no scheduler made: a device per node, an order
print("critical path:", " → ".join(critical_path(p, plan)))
print("slack (ms):   ", slack(p, plan))
hand_gantt(p, plan, title="worked plan: receives in grey, the critical path in red")
"""),
    ]


def _exercise() -> list:
    return [
        md("""
## Exercise

Now the plan runs B **and E** on the GPU. Find every start time, then the critical path.
"""),
        code("""
from hetlab.course import PLAN
hand_dag(p, device_of=PLAN, title="the exercise's plan (order A..F)")
"""),
        *exercise(
            "ch06.critical",
            "Fill in the start time of every node (ms) and the critical path, first node first.",
            """
answer = {
    "start": {"A": 0.0, "B": 2.0, "C": 2.0, "D": 5.0, "E": 5.0, "F": 9.0},
    "critical": ["A", "C", "E", "F"],
}
""",
        ),
    ]


def _real_run() -> list:
    return [
        md("""
## Running a real model

The executor runs a plan on this machine's devices (onnxruntime CPU core groups, OpenCL
devices), checks its outputs against plain onnxruntime, and records when every operator
started and finished. We profile SqueezeNet on the CPU groups and run a plan a few times.
To learn something about transfers, the plan must move tensors between devices: the cell
takes the best plan of a few schedulers that does, and splits the model in two when every
scheduler keeps it on one device (as they often do on a small machine).

An OpenCL device that runs on the same cores (PoCL, for example) is scheduled the same way;
set `WITH_OPENCL = True` to include it. It shares its cores with the CPU groups and takes
much longer to profile. A machine with a single device replays the shipped 2-core profile on
stand-in devices instead, and says so.
"""),
        code("""
from hetlab.calibrate import run  # the executor's run, with the calibrated predictions
from hetlab.course import crossing_plan, crossings, devices_to_run, profile_here

WITH_OPENCL = False
graph, devs, shipped = devices_to_run(WITH_OPENCL)
problem, devs = profile_here(graph, devs) if shipped is None else (shipped, devs)
print("devices:", [d.name for d in devs])
plan, how = crossing_plan(problem)
print(f"plan: {how}; {crossings(problem, plan)} tensors cross devices")
report = run(graph, plan, devs, repeat=5, check=shipped is None, problem=problem)
doc = report.to_json()
print(f"predicted {doc['predicted_ms']:.2f} ms, measured median {doc['latency_ms']['median']:.2f} ms"
      f" (p10 {doc['latency_ms']['p10']:.2f}, p90 {doc['latency_ms']['p90']:.2f})"
      + (f"; outputs within {doc['max_rel_err']:.1e} of onnxruntime" if shipped is None else ""))
"""),
        code("""
compare_figure([plan, report], [f"predicted ({plan.algo})", "measured"], problem=problem)
"""),
        md(r"""
## Where did the measured time go?

`predicted_ms` is the simulator's makespan. `predicted_io_ms` adds moving the model's inputs
and outputs between host memory and a discrete GPU; `predicted_host_ms` also charges each unit
the host's dispatch, one unit at a time. All three are printed below.

The report's `critical_path` follows, in the measured run, the chain of units that set the
latency, and splits it exactly:

$$
\text{latency} = \text{dispatch} + \text{copies} + \text{run} + \text{tail}.
$$

*Dispatch* is the time a unit was ready but not yet started (Python, a thread waking up),
*copies* its transfers, *run* its time inside the device, *tail* what follows the last unit.
`predicted_run_ms` is what the profile says the same units cost: when *run* exceeds it, the
devices were slower than profiled; when *dispatch* is large, the time went between them.
"""),
        code("""
import pandas as pd
print({k: doc.get(k) for k in ("predicted_ms", "predicted_io_ms", "predicted_host_ms")})
cp = doc["critical_path"]
print("predicted critical path:", len(critical_path(problem, plan)), "operators")
pd.Series(cp, name="measured critical path").to_frame()
"""),
    ]


def _replay() -> list:
    return [
        md("""
The measured trace can also be written in Chrome's trace-event format and opened in
Perfetto: `report.write_trace("trace.json")`, or `hetlab run squeezenet --plan PLAN.json
--trace trace.json` from a shell.

## Replaying a profile measured elsewhere

A profile carries per-operator costs, so a plan made from it can be *replayed* on stand-in
devices (`hetlab.devices.replay_devices`) that sleep for each unit's profiled cost. The executor then
runs as it would on the real machine: its dispatch, threads and transfers are real; the
devices are not. Below, GoogLeNet as profiled on a 16-core host with a discrete GPU.
**These timings are a replay, not a measurement of that host.**
"""),
        code("""
from hetlab.cost import load_measured_profile
from hetlab.devices import replay_devices, graph_from_problem

far = load_measured_profile("h100-16core", "googlenet")
stand_ins = replay_devices(far)
rows = []
for algo in ["single:cpu0", "heft"]:
    pl = schedule(far, algo)
    rep = run(graph_from_problem(far), pl, stand_ins, repeat=5).to_json()
    rows.append({"plan": algo, "devices": rep["devices"], "predicted_ms": pl.makespan,
                 "replayed_ms (not measured)": rep["latency_ms"]["median"]})
pd.DataFrame(rows).round(3)
"""),
        md("""
The replay adds what the executor itself costs around each unit. A plan of many small units
pays it many times; that is one reason measured mixed plans can miss their prediction by
more than single-device ones.

Things to try: plan SqueezeNet with `"heft"` or `"single:cpu0"` and compare the critical
paths; replay `load_measured_profile("xeon-2core-pocl", "squeezenet")`.
"""),
    ]
