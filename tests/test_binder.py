"""The Binder launch: the README's badge and binder/ open the workbench notebook."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parents[1]


def test_readme_badge_opens_the_workbench():
    urls = re.findall(
        r"\((https://mybinder\.org/v2/gh/[^)\s]+)\)", (ROOT / "README.md").read_text()
    )
    assert urls, "no mybinder badge in README.md"
    for url in urls:
        path = parse_qs(urlparse(url).query)["urlpath"][0]
        assert path.startswith("lab/tree/")
        assert (ROOT / path.removeprefix("lab/tree/")).is_file(), path


def test_binder_config_opens_the_workbench_and_installs_hetlab():
    post = (ROOT / "binder" / "postBuild").read_text()
    assert "pip install" in post and " -e ." in post
    url = re.search(r'default_url = "/lab/tree/([^"]+)"', post)
    assert url and (ROOT / url.group(1)).is_file()
    assert "python=3.11" in (ROOT / "binder" / "environment.yml").read_text()
