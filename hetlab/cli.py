"""``hetlab`` command line: a thin front over the library (spec §1-§6).

Each subcommand lives in a module of ``hetlab.commands``, which defines ``configure(parser)``
and ``main(args) -> int`` (or ``configure_NAME``/``main_NAME`` for a family of commands) and
imports heavy modules only inside ``main``. Every ``HetlabError`` becomes one line on stderr
and exit code 2; Ctrl-C exits with 130; nothing prints a traceback unless ``HETLAB_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from hetlab.errors import HetlabError
from hetlab.version import __version__

# subcommand -> (module, one-line help)
COMMANDS = {
    "graph": ("hetlab.commands.graph", "load a model and print its operator DAG (spec §1)"),
    "zoo": ("hetlab.commands.graph", "list the zoo models"),
    "demo": ("hetlab.commands.demo", "the headless main job: load, schedule, run, compare"),
    "devices": ("hetlab.commands.devices", "list the devices of this machine (spec §5)"),
    "profile": (
        "hetlab.commands.profile",
        "profile a model on real devices into a problem (spec §2)",
    ),
    "schedule": ("hetlab.commands.schedule", "compute a plan for a problem (spec §4)"),
    "recommend": (
        "hetlab.commands.recommend",
        "the plan hetlab would pick, from the candidates timed on the devices (spec §4)",
    ),
    "run": ("hetlab.commands.run", "run a model for real on one device or by a plan (spec §5)"),
    "stretch": (
        "hetlab.commands.stretch",
        "branch a sequential model for several devices (NN-Stretch)",
    ),
    "sweep": ("hetlab.commands.sweep", "sweep models x algorithms x parameters on Dask"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        raise HetlabError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hetlab", description="Heterogeneous execution workbench.")

    p.add_argument("--version", action="version", version=f"hetlab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (mod, helptext) in COMMANDS.items():
        sp = sub.add_parser(name, help=helptext, description=helptext)
        m = importlib.import_module(mod)
        configure = getattr(m, f"configure_{name}", None) or m.configure
        configure(sp)
        sp.set_defaults(_module=mod, _name=name)
    return p


def main(argv: list[str] | None = None) -> int:
    debug = os.environ.get("HETLAB_DEBUG") == "1"
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return 2
        m = importlib.import_module(args._module)
        run = getattr(m, f"main_{args._name}", None) or m.main
        return int(run(args) or 0)
    except HetlabError as e:
        if debug:
            raise
        print(f"hetlab: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("hetlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug, not a bad input: still one line, with the hint to debug
        if debug:
            raise
        print(
            f"hetlab: internal error: {type(e).__name__}: {e} (rerun with HETLAB_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
