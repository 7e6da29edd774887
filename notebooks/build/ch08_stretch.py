"""Chapter 8: NN-Stretch, a sequential model made wide enough for two devices."""

from __future__ import annotations

from .cells import code, exercise, md

NAME = "08_stretch.ipynb"


def cells() -> list:
    return _intro() + _constraints() + _exercise() + _real_model() + _measured()


def _intro() -> list:
    return [
        md(r"""
# 8 · NN-Stretch: branch a sequential model, and adapt when a device is contended

Most CNNs are one long chain of operators, so two devices cannot work on them at the same
time: a scheduler can only hand the chain back and forth. NN-Stretch (Wei et al., MobiSys
2023) *stretches* the chain into a short, wide model: at each **meeting point** (a stage
boundary, where the feature map's spatial size changes) the next segment is duplicated into
one **branch per device**, each shallower (fewer repeated blocks) and narrower (fewer
channels), so that the branches together keep the segment's FLOPs, split in proportion to the
devices' throughput. A 1×1 convolution per branch restores its share of the channels, and a
Concat joins them.

**Learning objectives.** After this chapter you can

1. split a segment's FLOPs over the devices by their throughput (eq. 6) and compute the
   stretched segment's latency;
2. decide with eq. 4 whether a meeting point pays for its transfers;
3. stretch a real model, predict and measure it against the original on one device;
4. read an adaptive run that moves work off a contended device and back.

The stretched model has fresh random weights: its accuracy needs retraining, which is not
part of this chapter. It is about latency and structure.
"""),
        code("""
from hetlab.course import check, hand_dag, hand_gantt, hint, segment, stretch_numbers, stretched
from hetlab.schedulers import Plan
"""),
    ]


def _constraints() -> list:
    return [
        md(r"""
## The constraints

For a segment with $F$ FLOPs, devices $d_1..d_n$ of throughput $\theta_i$ (FLOPs per ms) and
branch $i$ on $d_i$ with $F_i$ FLOPs, NN-Stretch asks for

$$
\begin{aligned}
\text{(eq. 4, amortisation)} &\quad C_{\text{meet}} \le \alpha \cdot \min_i T_{d_i}(\text{segment}),\\
\text{(eq. 5, no lagging branch)} &\quad T_{d_i}(\text{branch}_i) \le \beta \cdot T_{d_i}(\text{segment}),\\
\text{(eq. 6, balance)} &\quad \frac{F_i}{\sum_j F_j} \approx \frac{\theta_i}{\sum_j \theta_j},
\qquad \sum_i F_i \approx F,
\end{aligned}
$$

where $C_{\text{meet}}$ is the transfer time at the meeting points (the input sent to the
other branches, their outputs sent back). With eq. 6 met exactly, every branch takes
$F / \sum_j \theta_j$, and the stretched segment takes that plus $C_{\text{meet}}$.

## A worked example

A segment of four equal blocks, 120 MFLOP in all, on a CPU of 20 GFLOP/s and a GPU of
40 GFLOP/s (20 and 40 MFLOP per ms). Sending its input to the CPU takes 0.1 ms, getting the
CPU branch's output back 0.15 ms.
"""),
        code("""
THR = {"cpu": 20.0, "gpu": 40.0}
COMM = {"send input": 0.1, "return output": 0.15}
seg = segment(120.0, 4, THR)
hand_dag(seg, title="the original segment: 4 blocks (ms on each device)", height=260)
"""),
        code("""
wide, place = stretched(120.0, 4, THR, COMM)
print(stretch_numbers(120.0, THR, sum(COMM.values()), alpha=0.1))
hand_dag(wide, device_of=place, title="stretched: one branch per device, shares by eq. 6")
"""),
        code("""
seg_ids = [n.id for n in seg.nodes]
hand_gantt(seg, Plan.of(dict.fromkeys(seg_ids, "gpu"), seg_ids),
           title="the original segment on the GPU", critical=False)
"""),
        code("""
hand_gantt(wide, Plan.of(place, [wide.nodes[i].id for i in wide.topo]),
           title="stretched on CPU + GPU: receives in grey", critical=False)
"""),
    ]


def _exercise() -> list:
    return [
        md(r"""
Each branch takes 2 ms, the transfers 0.25 ms: 2.25 ms against 3 ms on the GPU alone. Eq. 4
holds, since $0.25 \le 0.1 \times 3$.

## Exercise

A segment of 160 MFLOP in four blocks, on a CPU of 30 GFLOP/s and a GPU of 50 GFLOP/s.
Sending its input to the CPU takes 0.2 ms, getting the output back 0.3 ms; $\alpha = 0.1$.
"""),
        *exercise(
            "ch08.balance",
            "Give each branch's FLOPs (MFLOP), each branch's latency (ms), the stretched "
            "segment's latency, and whether eq. 4 holds.",
            """
answer = {
    "flops": {"cpu": 160 * 30 / 80, "gpu": 160 * 50 / 80},
    "branch_ms": {"cpu": 60 / 30, "gpu": 100 / 50},
    "stretched_ms": 2.0 + 0.2 + 0.3,
    "eq4": 0.2 + 0.3 <= 0.1 * 160 / 50,
}
""",
        ),
    ]


def _real_model() -> list:
    return [
        md("""
## Stretching a real model

SqueezeNet, on two of this machine's CPU groups. Its segments are the stretches between
changes of the feature map's size; a segment with repeated blocks can be branched.
"""),
        code("""
from hetlab.devices import devices
from hetlab.graph import load
from hetlab.stretch import segments
from hetlab.course import cpu_pair, runnable_here, stretch_search

DEVS = {d.name: d for d in devices()}
PAIR = cpu_pair(DEVS)
print("this machine's CPU groups:", PAIR)
g = load("squeezenet")
for s in segments(g):
    print(f"segment {s.index}: {len(s.nodes):3d} nodes, {s.flops / 1e9:5.2f} GFLOP, "
          f"{s.depth} blocks", "" if s.branchable else f"(kept: {s.why_not})")
"""),
        md("""
Each device's throughput comes from one whole-model run on it. The constraints leave a handful
of candidates (a meeting point at every stage or merged stages, times three ways of scaling:
depth, width, or both); each is scheduled, and the least predicted latency wins.

The result depends on this machine: on a fast CPU every segment is short, so its transfers
break eq. 4, and two unequal core groups (one busy with other work) can break eq. 5. When the
measurement leaves nothing to branch, the cell says so and stretches for the throughput of
the 2-core machine whose profile ships with the course.
"""),
        code("""
import pandas as pd
from hetlab.stretch import Constraints, branch_plan, estimated_problem, main_device

found = stretch_search(g, DEVS, PAIR, Constraints(alpha=0.1, beta=1.1))
PAIR, cm, best = found.pair, found.costs, found.best
print(f"stretched for {' + '.join(PAIR)}, costs from: {found.source}")
print("throughput GFLOP/s:", {d: round(v / 1e6, 1) for d, v in cm.throughput.items()})
pd.DataFrame(found.rows)
"""),
        code("""
import tempfile
from pathlib import Path
from hetlab.stretch import write

WORK = Path(tempfile.mkdtemp(prefix="stretch-"))
out = write(g, best.plan, WORK / "squeezenet-stretched.onnx")
sg = load(str(out))
plan = branch_plan(sg, estimated_problem(sg, cm, PAIR), PAIR, main_device(cm, PAIR))
print(f"{len(sg.nodes)} nodes; {sum(n.flops for n in sg.nodes) / 1e9:.2f} GFLOP "
      f"(original {sum(n.flops for n in g.nodes) / 1e9:.2f})")
"""),
    ]


def _measured() -> list:
    return [
        md("""
## Measured: the original on one device, the stretched model on two

Both run on the real devices, the stretched one checked against plain onnxruntime. On a
machine shared with other work the second core is rarely free, so read the medians with that
in mind. A machine without the two CPU groups skips this part and says so.
"""),
        code("""
from hetlab.executor import run

REPEAT = 5
HERE = runnable_here(PAIR, DEVS)
if HERE:
    single = {d: run(g, d, DEVS, repeat=REPEAT).latency_ms["median"] for d in PAIR}
    wide_run = run(sg, plan, DEVS, repeat=REPEAT, check=True)
    best_dev = min(single, key=single.get)
    print("original, one device (ms):", single)
    print(f"stretched on {' + '.join(PAIR)}: {wide_run.latency_ms['median']:.1f} ms "
          f"(predicted {plan.makespan:.1f} from {found.source}; outputs within "
          f"{wide_run.max_rel_err:.1e})")
    print(f"speed-up over {best_dev}: {single[best_dev] / wide_run.latency_ms['median']:.2f}x")
"""),
        md("""
## Adapting to a contended device

An adaptive run watches each device's busy time against its profile. When one device is more
than 1.5× slower than expected (and slower than the others) for two runs in a row, it
re-plans without it; every few runs it tries the original plan again and returns to it once
the device has recovered. Below, CPU-bound processes occupy the first device's core during
the middle runs; the static pass meets the same interference without moving.
"""),
        code("""
from hetlab.executor import random_inputs
from hetlab.stretch import AdaptiveConfig, adaptive_figure, adaptive_run

N = 12
if HERE:
    doc = adaptive_run(sg, plan, DEVS, random_inputs(sg, 0), N,
                       AdaptiveConfig(), interfere=f"{PAIR[0]}:3:{N - 3}", compare=True)
    print("adaptive median", doc["latency_ms"]["median"], "ms; static median",
          doc["static_median_ms"], "ms")
    print("switches:", doc["adaptive"]["switches"])
    display(adaptive_figure(doc, title="squeezenet stretched, interference on " + PAIR[0]))
"""),
        md("""
Things to try: `Constraints(beta=1.0)` or `min_width=0.75`; `resnet50` instead of
`squeezenet` (its search takes longer); three devices; `AdaptiveConfig(threshold=1.3,
probe_every=2)`. From a shell: `hetlab stretch squeezenet --devices cpu0,cpu1 --out s.onnx`,
then `hetlab run s.onnx --plan s.plan.json --adaptive --compare --interfere cpu0:3:9
--repeat 12`.
"""),
    ]
