"""The flags several commands share (models' shapes and inputs, the platform) and the
profile's progress bar."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def add_shape_arg(p: argparse.ArgumentParser) -> None:
    """The ``--shape NAME=1x3x224x224`` option (repeatable) shared by every model command,
    and ``--no-fold``, since what folds depends on the shapes fixed."""
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="fix an input's shape, e.g. input=1x3x640x640 (repeatable)",
    )
    p.add_argument(
        "--no-fold",
        dest="fold",
        action="store_false",
        help="keep the nodes that compute constants once the shapes are fixed (folded by "
        "default; a profile and the plans from it name the nodes of one choice)",
    )


def add_input_arg(p: argparse.ArgumentParser) -> None:
    """``--input NAME=FILE.npy`` or ``NAME=NUMBER`` (repeatable)."""
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="an input's value (a .npy file or a number); otherwise seeded random",
    )


def add_platform_args(p: argparse.ArgumentParser) -> None:
    """``--platform``, ``--queues`` and ``--whole-cpu``: the platform options of every
    command that finds devices (``platform_options`` reads them back)."""
    p.add_argument(
        "--platform",
        metavar="FILE",
        help="TOML/JSON file naming CPU core groups, OpenCL and CUDA devices",
    )
    p.add_argument(
        "--queues",
        action="append",
        default=[],
        metavar="DEVICE=N",
        help="run DEVICE as N queues (CUDA streams, OpenCL queues), named DEVICE, DEVICE.q1 ...; "
        "repeatable or comma-separated, e.g. --queues cuda0=4",
    )
    p.add_argument(
        "--whole-cpu",
        metavar="NAME",
        help="also offer the CPU groups' cores as one device NAME (e.g. cpu), the alternative "
        "to the groups",
    )


def add_precision_arg(p: argparse.ArgumentParser) -> None:
    """``--precision P`` or ``--precision DEVICE=P,...`` (``devices.precision_choice``)."""
    p.add_argument(
        "--precision",
        action="append",
        default=[],
        metavar="[DEVICE=]P",
        help="the precision of convolutions and matrix products: fp32 (default), tf32, fp16 "
        "or bf16; one for every device that declares it (the others stay fp32; refused where "
        "none does), or per "
        "device, e.g. --precision cuda0=tf32,cl0=fp32",
    )


def precision_option(args: argparse.Namespace) -> Any:
    """``--precision`` parsed (None when not given), one clear line for a bad one."""
    from hetlab.devices.precision_choice import parse_precision  # lazy: see platform_options

    return parse_precision(getattr(args, "precision", None))


def note_precision(devices: Any, choice: Any) -> None:
    """The line on stderr naming the devices a precision for all leaves at fp32."""
    from hetlab.devices.precision_choice import precision_note

    line = precision_note(devices, choice)
    if line:
        print(f"note: {line}", file=sys.stderr)


def platform_options(args: argparse.Namespace) -> dict[str, Any]:
    """``{"platform", "queues", "whole_cpu"}`` from ``add_platform_args``' flags."""
    from hetlab.devices.choice import parse_queues  # lazy: the parser is built at every start

    return {
        "platform": args.platform,
        "queues": parse_queues(args.queues),
        "whole_cpu": args.whole_cpu,
    }


@contextmanager
def progress_bar(name: str, quiet: bool = False) -> Iterator[Callable[..., None] | None]:
    """A profile's progress callback drawing a bar on stderr (None when ``quiet``); the bar
    is closed however the profile ends."""
    if quiet:
        yield None
        return
    from tqdm.auto import tqdm  # lazy: the parser is built at every start

    bar = tqdm(total=0, desc=f"profile {name}", unit="op", file=sys.stderr, leave=False)

    def progress(done: int, total: int, msg: str) -> None:
        bar.total = total
        bar.set_postfix_str(msg[:40], refresh=False)
        bar.update(done - bar.n)  # redraws at most every mininterval

    try:
        yield progress
    finally:
        bar.close()
