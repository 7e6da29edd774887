"""Input shapes: ``--shape NAME=1x3x224x224`` parsing and the symbolic-dimension rule of spec §1.

A symbolic dimension is fixed by ``--shape``; symbolic dimensions with the same name share one
value across inputs; a symbolic *first* dimension otherwise defaults to 1; anything still
unresolved is an error naming the input, its declared dimensions and an example ``--shape``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hetlab.errors import HetlabError

if TYPE_CHECKING:
    import numpy as np

Dim = int | str | None  # a fixed size, a symbolic name, or an unnamed unknown


def parse_shape_args(args: Iterable[str] | None) -> dict[str, tuple[int, ...]]:
    """``["x=1x3x224x224", "mask=1x77"]`` -> ``{"x": (1, 3, 224, 224), "mask": (1, 77)}``."""
    out: dict[str, tuple[int, ...]] = {}
    for a in args or []:
        m = re.fullmatch(r"\s*([^=\s][^=]*?)\s*=\s*(\d+(?:\s*[x,]\s*\d+)*)\s*", a)
        if not m:
            raise HetlabError(
                f"malformed --shape {a!r}: write NAME=DIMxDIMx... with positive integers, "
                "e.g. --shape input=1x3x224x224"
            )
        dims = tuple(int(d) for d in re.split(r"\s*[x,]\s*", m.group(2)))
        if any(d <= 0 for d in dims):
            raise HetlabError(f"malformed --shape {a!r}: every dimension must be positive")
        out[m.group(1)] = dims
    return out


def resolve_input_shapes(
    declared: dict[str, Sequence[Dim]], given: dict[str, tuple[int, ...]] | None = None
) -> dict[str, tuple[int, ...]]:
    """Fix every dimension of every input (see the module docstring)."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise HetlabError(
            f"--shape names {', '.join(unknown)}, which the model does not have as an input; "
            f"its inputs are: {', '.join(declared) or 'none'}"
        )
    sym: dict[str, int] = {}
    for name, dims in given.items():
        decl = declared[name]
        if len(dims) != len(decl):
            raise HetlabError(
                f"--shape {name} has {len(dims)} dimensions but the model declares {len(decl)} "
                f"({_fmt(decl)})"
            )
        for i, (g, d) in enumerate(zip(dims, decl, strict=False)):
            if isinstance(d, int) and d > 0 and d != g:
                raise HetlabError(
                    f"--shape {name}: dimension {i} is fixed at {d} in the model, not {g}"
                )
            if isinstance(d, str) and sym.setdefault(d, g) != g:
                raise HetlabError(
                    f"--shape gives symbolic dimension {d!r} two values: {sym[d]} and {g}"
                )
    out: dict[str, tuple[int, ...]] = {}
    for name, decl in declared.items():
        if name in given:
            out[name] = given[name]
            continue
        dims: list[int] = []
        for i, d in enumerate(decl):
            if isinstance(d, int) and d > 0:
                dims.append(d)
            elif isinstance(d, str) and d in sym:
                dims.append(sym[d])
            elif i == 0:
                dims.append(1)
                if isinstance(d, str):
                    sym[d] = 1
            else:
                raise HetlabError(
                    f"input {name!r} has symbolic dims {_dims(decl)}: give them, "
                    f"e.g. --shape {name}={_example(decl, sym)}"
                )
        out[name] = tuple(dims)
    return out


def value_shapes(
    declared: dict[str, Sequence[Dim]], values: dict[str, np.ndarray]
) -> dict[str, tuple[int, ...]]:
    """The shapes that ``--input`` values give: each array's, checked against the input's
    declared dimensions; a single number on an input of rank 1 or more gives none (it fills
    the shape the other rules fix). One line naming ``--input NAME`` where they disagree."""
    out: dict[str, tuple[int, ...]] = {}
    for name, v in values.items():
        if name not in declared:
            raise HetlabError(
                f"--input {name}: the model has no input {name!r} "
                f"(inputs: {', '.join(declared) or 'none'})"
            )
        decl, shape = declared[name], tuple(v.shape)
        if not shape and decl:
            continue
        fixed = [d if isinstance(d, int) and d > 0 else None for d in decl]
        if decl and (
            len(shape) != len(decl)
            or any(f not in (None, s) for f, s in zip(fixed, shape, strict=True))
        ):
            raise HetlabError(
                f"--input {name}: the value has shape {list(shape)} but the model declares "
                f"{_fmt(decl)} (give a .npy file of that shape, or one number to fill it)"
            )
        out[name] = shape
    return out


def _dims(decl: Sequence[Dim]) -> str:
    """``['batch', 3, 'h', 'w']``: fixed sizes as numbers, symbols quoted, unnamed ones '?'."""
    return "[" + ", ".join(repr(d) if isinstance(d, str) else str(d or "'?'") for d in decl) + "]"


def _example(decl: Sequence[Dim], sym: dict[str, int]) -> str:
    """A plausible full shape: fixed and already resolved sizes, 1 for the batch, 640 for an
    image's sides (rank 4) and 128 for other lengths."""
    out = []
    for i, d in enumerate(decl):
        if isinstance(d, int) and d > 0:
            out.append(d)
        elif isinstance(d, str) and d in sym:
            out.append(sym[d])
        else:
            out.append(1 if i == 0 else 640 if len(decl) == 4 else 128)
    return "x".join(map(str, out))


def _fmt(decl: Sequence[Dim]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in decl) + "]"


def parse_input_args(args: Iterable[str] | None) -> dict[str, np.ndarray]:
    """``["sr=16000", "x=frame.npy"]`` -> arrays: a ``.npy`` file, or a number (a scalar of the
    input's type is cast later by the consumer; integers become int64, others float32)."""
    # lazy: the graph's shape model is numpy-free; only --input files need numpy
    import numpy as np

    out: dict[str, np.ndarray] = {}
    for a in args or []:
        name, sep, val = a.partition("=")
        if not sep or not name.strip() or not val.strip():
            raise HetlabError(f"malformed --input {a!r}: write NAME=FILE.npy or NAME=NUMBER")
        name, val = name.strip(), val.strip()
        if val.endswith(".npy"):
            try:
                out[name] = np.load(val, allow_pickle=False)
            except (OSError, ValueError) as e:
                raise HetlabError(f"--input {name}: cannot read {val}: {e}") from None
            continue
        try:
            out[name] = np.array(int(val), dtype=np.int64)
        except ValueError:
            try:
                out[name] = np.array(float(val), dtype=np.float32)
            except ValueError:
                raise HetlabError(
                    f"malformed --input {a!r}: the value must be a .npy file or a number"
                ) from None
    return out
