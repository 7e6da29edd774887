"""JupyterLab widgets (ipywidgets 8; figures as plotly mime bundles in Output widgets), thin over the core."""

from hetlab.widgets.tasks import Cancelled
from hetlab.widgets.workbench import Workbench

__all__ = ["Cancelled", "Workbench"]
