"""Parsing of ``--shape``-style text: ``input=1x3x224x224, mask=1x128``."""

from __future__ import annotations

from hetlab.errors import HetlabError


def parse_shapes(text: str) -> dict[str, tuple[int, ...]]:
    """``"a=1x3x8x8, b=2"`` -> ``{"a": (1, 3, 8, 8), "b": (2,)}``; empty text -> ``{}``."""
    out: dict[str, tuple[int, ...]] = {}
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        name, eq, dims = part.rpartition("=")
        if not eq or not name.strip():
            raise HetlabError(f"shape {part!r} must look like NAME=1x3x224x224")
        try:
            shape = tuple(int(d) for d in dims.lower().split("x"))
        except ValueError:
            raise HetlabError(
                f"shape {part!r}: dimensions must be integers like 1x3x224x224"
            ) from None
        if any(d <= 0 for d in shape):
            raise HetlabError(f"shape {part!r}: dimensions must be positive")
        out[name.strip()] = shape
    return out
