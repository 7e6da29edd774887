"""``python -m notebooks.build`` or ``python notebooks/build``: write the course notebooks."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

if not __package__:
    # run as a folder (python notebooks/build): load it as the package notebooks.build, so the
    # chapter modules' relative imports resolve, without touching sys.path
    here = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location(
        "notebooks.build", here / "__init__.py", submodule_search_locations=[str(here)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
else:
    package = importlib.import_module(__package__)

sys.exit(package.main(sys.argv[1:]))
