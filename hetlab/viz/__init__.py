"""Pure figure functions (plotly ``go.Figure``): DAG, cost heatmap, Gantt charts.

Nothing here imports ipywidgets; notebooks, tests and the widgets all call these.
"""

from hetlab.viz.accuracy import op_scatter_figure
from hetlab.viz.budget import budget_figure
from hetlab.viz.dag import dag_figure
from hetlab.viz.dag_overlay import match_nodes
from hetlab.viz.diff import moved_ops, plan_diff_figure
from hetlab.viz.gantt import compare_figure, gantt_figure
from hetlab.viz.gantt_overlays import critical_path, plan_trace
from hetlab.viz.heatmap import heatmap_figure
from hetlab.viz.layout import dag_layout
from hetlab.viz.scopes import collapse_scopes

__all__ = [
    "budget_figure",
    "collapse_scopes",
    "compare_figure",
    "critical_path",
    "dag_figure",
    "dag_layout",
    "gantt_figure",
    "heatmap_figure",
    "match_nodes",
    "moved_ops",
    "op_scatter_figure",
    "plan_diff_figure",
    "plan_trace",
]
