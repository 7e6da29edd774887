"""Pure figure functions (plotly ``go.Figure``): DAG, cost heatmap, Gantt charts.

Nothing here imports ipywidgets; notebooks, tests and the widgets all call these.
"""

from hetlab.viz.dag import dag_figure
from hetlab.viz.gantt import compare_figure, gantt_figure
from hetlab.viz.heatmap import heatmap_figure
from hetlab.viz.layout import dag_layout

__all__ = ["compare_figure", "dag_figure", "dag_layout", "gantt_figure", "heatmap_figure"]
