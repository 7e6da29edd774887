"""The model zoo, by its public name: ``hetlab.zoo.names()``, ``hetlab.zoo.path(name)``...
(implemented in ``hetlab.graph.zoo``, beside the loader that resolves zoo names)."""

from hetlab.graph.zoo import cache_dir, info, is_zoo, names, path, stored_path

__all__ = ["cache_dir", "info", "is_zoo", "names", "path", "stored_path"]
