"""The workbench notebook: the widget first, then the plain Python state behind it."""

from __future__ import annotations

from .cells import code, md

NAME = "workbench.ipynb"


CELLS = [
    md("""
# hetlab workbench

Load a model, profile it on this machine's devices, look at its operator DAG and the cost of
every operator, then compare HOPE's ILP with its greedy search and run the plan for real.

* **ε, NT** shape the ILP's partition (HOPE Algorithm 1), **K** the greedy search width.
* **Profile** measures every operator on this machine's devices; the progress bar follows it.
* **Run** executes the chosen plan on the real devices and draws the measured timeline beside
  the prediction.
* Any shipped profile (HOPE's phones, or a machine hetlab measured) can be opened without
  profiling: you can explore and schedule it, and a profile measured elsewhere is replayed,
  labelled as such, instead of run.
"""),
    code("""
from hetlab.widgets import Workbench

wb = Workbench(model="squeezenet")  # a zoo name or a path to an .onnx file
wb
"""),
    md("""
The state behind the widget is plain Python: `wb.problem`, `wb.ilp_plan`, `wb.greedy_plan`,
`wb.run_report`. For example, the makespans (ms) of the plans solved so far:
"""),
    code("""
{name: (round(p.makespan, 3) if p else None)
 for name, p in [("ilp", wb.ilp_plan), ("compared", wb.greedy_plan)]}
"""),
]


def cells() -> list:
    return list(CELLS)
