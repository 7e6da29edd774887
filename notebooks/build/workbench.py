"""The workbench notebook: the widget first, then the plain Python state behind it."""

from __future__ import annotations

from .cells import code, md

NAME = "workbench.ipynb"


CELLS = [
    md("""
# hetlab workbench

Look at a model's operator DAG and the cost of every operator, compare HOPE's ILP with its
greedy search, and run or replay the plan.

The first workbench opens HOPE's profile of Inception-v3 on a Huawei P40 (a phone's CPU and
GPU, as HOPE measured them), where the knobs visibly change the plans:

* **ε, NT** shape the ILP's partition (HOPE Algorithm 1), **K** the greedy search width;
  each Gantt is redrawn for the value chosen, its makespan in the line below it.
* **Load model** loads another model (a zoo name or an .onnx path), and **Profile** measures
  every operator of it on this machine's devices; the progress bar follows it.
* **or open** (under files) opens any shipped profile: HOPE's phones, or a machine hetlab
  measured. A profile measured elsewhere is replayed on fake devices, labelled as such;
  one measured here runs for real.
* **Run** executes the plan on screen and draws its timeline under the prediction.
* **Measure precisions** (beside the **error budget** slider) profiles and times the candidate
  plans at every precision the devices declare (tf32, bf16, fp16 on a GPU with tensor cores),
  each checked against onnxruntime. Then moving the slider picks, at once, the fastest plan
  whose error stays within the budget, and the figure under it shows every candidate's time
  against its error, with the budget as a line: how much speed a looser check buys. Where
  the devices offer only fp32 (the CPU groups, PoCL) there is no error to trade, and the
  slider says so.
"""),
    code("""
from hetlab.widgets import Workbench

wb = Workbench(problem="hope/inception-v3-huawei_p40")
wb
"""),
    md("""
One GPU as four CUDA streams (`cuda0`, `cuda0.q1` ... `cuda0.q3`), measured on an H200:
the plans place operators on streams, and each stream is a row of the Gantt. **Recommend**
times the candidate plans on the replay and keeps the fastest.
"""),
    code("""
wb_gpu = Workbench(problem="h200-16core/googlenet-streams")
wb_gpu
"""),
    md("""
The state behind the widget is plain Python: `wb.problem`, `wb.ilp_plan`, `wb.greedy_plan`,
`wb.rec_plan`, `wb.run_report`. The plans are solved in the background; `wb.wait()` waits
for them:
"""),
    code("""
wb.wait()
for name, plan in [("ILP", wb.ilp_plan), ("compared", wb.greedy_plan)]:
    print(f"{name}: {plan.algo}, makespan {plan.makespan:.3f} {wb.problem.units}")
"""),
]


def cells() -> list:
    return list(CELLS)
