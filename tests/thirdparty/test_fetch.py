"""The fetch keeps a model only where its file is the one its entry's digest names."""

from __future__ import annotations

import hashlib

from hetlab.graph import corpus_model
from hetlab.graph.corpus_model import CorpusModel
from tests.thirdparty import fetch


def test_a_file_that_differs_from_its_digest_is_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus_model, "CACHE", tmp_path)
    good, bad, free = (CorpusModel(n, "k", "p==1", ("m.onnx",)) for n in ("a", "b", "c"))
    for m in (good, bad, free):
        m.path.write_bytes(m.name.encode())
    digest = hashlib.sha256(b"a").hexdigest()
    models = {
        "a": CorpusModel("a", "k", "p==1", ("m.onnx",), sha256=digest),
        "b": CorpusModel("b", "k", "p==1", ("m.onnx",), sha256=digest),
        "c": free,
    }
    monkeypatch.setattr(fetch, "MODELS", models)
    assert fetch.verify() == ["b"]
    assert good.path.exists() and not bad.path.exists() and free.path.exists()
