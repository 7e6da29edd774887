"""User-facing errors: one line, non-zero exit, no traceback (spec §6)."""

from __future__ import annotations


class HetlabError(Exception):
    """A bad input or an impossible request. Its message is one line that names the
    problem and what to do; the CLI prints it to stderr and exits with ``exit_code``."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class UnsupportedOp(HetlabError):
    """A device cannot run an op (raised by ``supports`` checks, never mid-run)."""
