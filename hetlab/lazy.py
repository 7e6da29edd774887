"""A package face whose names are imported on first use (PEP 562's module ``__getattr__``):
a face re-exports what users reach without importing every module behind it at once."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_names(
    package: str, names: Mapping[str, str], modules: Iterable[str] = ()
) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``names[name]`` is the module that defines
    ``name``; ``modules`` are submodules the face hands out whole."""
    whole = frozenset(modules)

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(names[name]), name)
        if name in whole:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
