"""The profiler's options in one place: ``profile(graph, devices, options=ProfileOptions(...))``.

Every default lives here; ``profile``'s keyword arguments (``profile(g, devs, repeat=5)``)
override the fields of the options they are given with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hetlab.errors import HetlabError
from hetlab.profiling.groups import DEFAULT_PATTERNS

Progress = Callable[[int, int, str], Any]


@dataclass(frozen=True)
class ProfileOptions:
    """``repeat``/``warmup``/``seconds``: see ``measure.Budget``; ``rounds``: visits per unit
    (its samples are spread over them, see ``device_pass``); ``context``: window size of the
    in-context correction (``in_context.py``; 0 or 1: isolated costs only); ``groups``: also
    measure chains matching ``patterns`` as fused units; ``comm``: calibrate every ordered
    device pair and measure every distinct edge shape; ``handoff``: add what a unit boundary
    costs in the executor to each link (``executor.boundary``), and with ``concurrent`` what
    a unit costs more beside another device's run (``executor.concurrency``); ``cache``: read
    and write the profile cache; ``name``: the problem's name (default the model's);
    ``inputs``: arrays for some model inputs instead of seeded random ones (``--input``);
    ``progress(done, total, message)``: called after each measurement (raise
    KeyboardInterrupt from it to stop: what is done stays cached)."""

    repeat: int = 20
    warmup: int = 2
    seconds: float = 0.25
    rounds: int = 2
    context: int = 8
    groups: bool = False
    patterns: Iterable[Sequence[str]] = DEFAULT_PATTERNS
    comm: bool = True
    handoff: bool = True
    concurrent: bool = True
    cache: bool = True
    name: str | None = None
    inputs: dict[str, Any] | None = None
    progress: Progress | None = None

    def check(self) -> ProfileOptions:
        if self.repeat < 1 or self.warmup < 0 or self.rounds < 1:
            raise HetlabError(
                f"repeat and rounds must be >= 1 and warmup >= 0 "
                f"(got {self.repeat}, {self.rounds}, {self.warmup})"
            )
        return self


def options_of(options: ProfileOptions | None, overrides: dict[str, Any]) -> ProfileOptions:
    """``options`` (default ``ProfileOptions()``) with the fields ``overrides`` names."""
    base = options or ProfileOptions()
    unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(ProfileOptions)})
    if unknown:
        raise TypeError(f"profile() got unknown option(s) {', '.join(unknown)}")
    return dataclasses.replace(base, **overrides).check()
