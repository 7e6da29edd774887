"""JupyterLab widgets (ipywidgets 8 + plotly FigureWidget), thin over the core."""

from hetlab.widgets.tasks import Cancelled
from hetlab.widgets.workbench import Workbench

__all__ = ["Cancelled", "Workbench"]
