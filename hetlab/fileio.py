"""Atomic file writes and tolerant JSON reads shared by every stage."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hetlab.errors import HetlabError


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename, so that an
    interrupted write never leaves a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp's 0600 would make results private
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def atomic_write_json(path: str | os.PathLike, doc: Any, indent: int | None = 1) -> Path:
    """Serialize ``doc`` as JSON and write it atomically."""
    return atomic_write_bytes(path, (json.dumps(doc, indent=indent) + "\n").encode())


def read_json(path: str | os.PathLike, what: str = "JSON file") -> Any:
    """Read a JSON document, turning every failure into one clear ``HetlabError``."""
    p = Path(path)
    if not p.exists():
        raise HetlabError(f"{what} not found: {p}")
    if p.is_dir():
        raise HetlabError(f"{what} is a directory, not a file: {p}")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise HetlabError(f"cannot read {what} {p}: {e}") from None
    if not text.strip():
        raise HetlabError(f"{what} is empty: {p}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise HetlabError(f"{what} {p} is not valid JSON (line {e.lineno}: {e.msg})") from None
