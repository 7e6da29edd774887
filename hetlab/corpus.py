"""The corpus of real third-party models, by its public name: ``hetlab.corpus.MODELS``
(name -> ``CorpusModel``), ``CACHE`` (where ``tests/thirdparty/fetch.py`` puts them)...
(implemented in ``hetlab.graph.corpus``, beside the loader)."""

from hetlab.graph.corpus import CACHE, MODELS, CorpusModel, packages

__all__ = ["CACHE", "MODELS", "CorpusModel", "packages"]
