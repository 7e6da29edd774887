"""``hetlab demo``: the headless main job. It grows with the product: load a zoo model, profile
it on this machine's devices, schedule it with every algorithm, run the best plan for real, and
compare the measured latency with the prediction."""

from __future__ import annotations

import argparse


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", default="squeezenet", help="zoo name or .onnx path")


def main(args: argparse.Namespace) -> int:
    from hetlab.graph.cli import format_summary
    from hetlab.graph.onnx_io import load

    g = load(args.model)
    print(format_summary(g.summary()))
    return 0
