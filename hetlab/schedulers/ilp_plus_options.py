"""``ilp+``'s parameters (HOPE's and its own) and the options of one run, which its guided
passes (``ilp_guided``) read as well as ``ilp_plus`` itself."""

from __future__ import annotations

from dataclasses import dataclass, fields

from hetlab.schedulers.base import Param
from hetlab.schedulers.ilp import NODE_LIMIT, PARAMS, IlpOptions

GAP_FAST, GAP_PRECISE = 0.3, 0.03  # window MIP gap, as a share of its best-cost work

PLUS_PARAMS = PARAMS + [
    Param("floor", "bool", True, None, None, "never worse than greedy/single/heft/peft/dmda"),
    Param("passes", "int", 2, 0, 10, "guided forward passes after HOPE's (odd ones staggered)"),
    Param(
        "search",
        "bool",
        True,
        None,
        None,
        "after each pass, a local search moving units/branches between devices on the whole plan",
    ),
    Param("kicks", "int", 1000, 0, 100000, "iterated-local-search restarts per search round"),
    Param("lookahead", "int", 0, 0, 8, "following subgraphs each guided window also sees"),
    Param("balance", "bool", False, None, None, "guided windows count the remaining work spread"),
    Param(
        "gap",
        "float",
        None,
        0.0,
        10.0,
        "guided windows' MIP gap as a share of their work (None: 0.3 at the default "
        "node_limit or a time_limit under 1 s, else 0.03)",
    ),
]


@dataclass
class PlusOptions(IlpOptions):
    """The options of one ``ilp+`` run; ``PlusOptions.of("ilp+", **given)``."""

    floor: bool
    passes: int
    search: bool
    kicks: int
    lookahead: int
    balance: bool
    gap: float | None

    @property
    def window_gap(self) -> float:
        if self.gap is not None:
            return self.gap
        quick = self.time_limit < 1.0 or self.node_limit <= NODE_LIMIT
        return GAP_FAST if quick else GAP_PRECISE

    def hope(self) -> IlpOptions:
        return IlpOptions(**{f.name: getattr(self, f.name) for f in fields(IlpOptions)})
