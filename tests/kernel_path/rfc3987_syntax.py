"""Left out of the notebook kernels and JupyterLab servers that the tests start (this folder
comes first on their ``PYTHONPATH``; ``tests/conftest.py`` leaves it out of pytest's own
processes the same way).

A kernel that shows a plotly figure imports nbformat (plotly checks its version), which
imports jsonschema, whose optional IRI format checker imports ``rfc3987_syntax``: that builds
39 lark grammars, 3-5 s of CPU in every process on the 2-core VM. jsonschema leaves the
checker out when the import fails, and no test validates an IRI.
"""

raise ImportError("rfc3987_syntax is left out of the test kernels (tests/kernel_path)")
