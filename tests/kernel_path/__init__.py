"""``KERNEL_PATH``: this folder, put first on the ``PYTHONPATH`` of the notebook kernels and
JupyterLab servers that the tests start, for the module it holds (``rfc3987_syntax.py``)."""

from pathlib import Path

KERNEL_PATH = str(Path(__file__).resolve().parent)
