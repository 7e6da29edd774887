"""Settings every test directory shares."""

from __future__ import annotations

import pytest

# The longest tests start first, so that the workers of a parallel run (``make test`` runs
# pytest-xdist) end together instead of one finishing the browser test alone.
FIRST = ("tests/test_browser.py", "tests/test_notebooks.py", "tests/thirdparty/test_corpus.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(FIRST))
