"""JupyterLab widgets (ipywidgets 8 + plotly FigureWidget), thin over the core."""

from hetlab.widgets.workbench import Workbench

__all__ = ["Workbench"]
