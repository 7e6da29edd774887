"""The profile cache: measurements keyed by model, shapes, device and settings, resumable.

Layout under ``$HETLAB_CACHE/profiles`` (else ``~/.cache/hetlab/profiles``)::

    <model key>/<device key>.json   per-signature op/group measurements of one device
    links/<pair key>.json           one link's calibration and per-shape transfers

The model key hashes the model file's sha256, the fixed input shapes, the repeat settings
and the hetlab version; a device key hashes the device's ``fingerprint()``; a pair key both
fingerprints and the calibration settings. Every file is written atomically (temporary file,
then rename) and flushed every few entries, so an interrupted profile resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_json
from hetlab.version import __version__

FLUSH_EVERY_S = 2.0
FLUSH_EVERY_N = 25
_SHA: dict[tuple[str, int, int], str] = {}


def cache_root() -> Path:
    root = os.environ.get("HETLAB_CACHE")
    return (Path(root).expanduser() if root else Path.home() / ".cache" / "hetlab") / "profiles"


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file, memoized by path, size and mtime."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    if key not in _SHA:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _SHA[key] = h.hexdigest()
    return _SHA[key]


def digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


class DeviceStore:
    """One JSON file of ``{section: {key: value}}``; ``put`` flushes now and then."""

    def __init__(self, path: Path | None, meta: dict[str, Any]) -> None:
        self.path = path
        self.doc: dict[str, Any] = {"meta": meta}
        self._dirty = 0
        self._last = time.monotonic()
        if path is not None and path.exists():
            try:
                doc = json.loads(path.read_text())
                if isinstance(doc, dict) and doc.get("meta") == json.loads(
                    json.dumps(meta, default=str)
                ):
                    self.doc = doc
            except (OSError, ValueError):
                pass  # a broken entry is simply remeasured

    def get(self, section: str, key: str) -> Any:
        return self.doc.get(section, {}).get(key)

    def put(self, section: str, key: str, value: Any) -> None:
        self.doc.setdefault(section, {})[key] = value
        self._dirty += 1
        if self._dirty >= FLUSH_EVERY_N or time.monotonic() - self._last > FLUSH_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if self.path is None or not self._dirty:
            return
        try:
            atomic_write_json(self.path, json.loads(json.dumps(self.doc, default=str)), indent=None)
        except OSError as e:
            raise HetlabError(
                f"cannot write the profile cache {self.path}: {e}; set HETLAB_CACHE "
                "to a writable folder or use --no-cache"
            ) from None
        self._dirty = 0
        self._last = time.monotonic()


class ProfileCache:
    """Stores for one model profile (``enabled=False``: in-memory stores that never write)."""

    def __init__(
        self,
        model_sha: str,
        shapes: dict[str, Any],
        settings: dict[str, Any],
        enabled: bool = True,
        root: Path | None = None,
    ) -> None:
        self.enabled = enabled
        self.root = root or cache_root()
        self.version = __version__
        self.model_meta = {
            "model_sha256": model_sha,
            "shapes": {k: list(v) for k, v in shapes.items()},
            "settings": settings,
            "hetlab": __version__,
        }
        self.model_dir = self.root / digest(self.model_meta)
        self._stores: dict[str, DeviceStore] = {}

    def _store(self, rel: str, meta: dict[str, Any]) -> DeviceStore:
        if rel not in self._stores:
            self._stores[rel] = DeviceStore(self.root / rel if self.enabled else None, meta)
        return self._stores[rel]

    def device(self, fingerprint: str) -> DeviceStore:
        meta = {**self.model_meta, "device": fingerprint}
        return self._store(f"{self.model_dir.name}/{digest(fingerprint)}.json", meta)

    def link(self, fp_src: str, fp_dst: str, settings: dict[str, Any]) -> DeviceStore:
        meta = {"src": fp_src, "dst": fp_dst, "settings": settings, "hetlab": self.version}
        return self._store(f"links/{digest(meta)}.json", meta)

    def flush(self) -> None:
        for s in self._stores.values():
            s.flush()
