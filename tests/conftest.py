"""Settings every test directory shares."""

from __future__ import annotations

import sys

import pytest

# jsonschema's optional IRI checker builds 39 lark grammars at import, 3-5 s a process:
# left out here as in the kernels the tests start (tests/kernel_path/rfc3987_syntax.py);
# ``None`` in sys.modules makes the import fail, and jsonschema goes on without it
sys.modules.setdefault("rfc3987_syntax", None)

# The longest tests start first, so that the workers of a parallel run (``make test`` runs
# pytest-xdist) end together instead of one finishing the browser test alone.
FIRST = ("tests/test_browser.py", "tests/test_notebooks.py", "tests/thirdparty/test_corpus.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(FIRST))
