"""``hetlab graph`` and ``hetlab zoo`` (spec §1)."""

from __future__ import annotations

import argparse
import json
import sys

from hetlab.commands.options import add_input_arg, add_shape_arg


def configure_graph(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a zoo model name (see `hetlab zoo`)")
    add_shape_arg(p)
    add_input_arg(p)
    p.add_argument("--json", action="store_true", help="print the graph document of spec §1")


def configure_zoo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")


def format_summary(s: dict) -> str:
    w = s["widest_level"]
    lines = [
        f"model      {s['model']}",
        "inputs     "
        + ", ".join(f"{k}={'x'.join(map(str, v)) or 'scalar'}" for k, v in s["inputs"].items()),
        f"vertices   {s['vertices']} ({_folding(s)})",
        f"edges      {s['edges']}",
        f"depth      {s['depth']} (the deepest level)",
        f"widest     {w['width']} vertices at level {w['uprank']}",
        f"GFLOPs     {s['flops'] / 1e9:.3f}",
        "ops        " + ", ".join(f"{k} {v}" for k, v in s["ops"].items()),
    ]
    return "\n".join(lines)


def _folding(s: dict) -> str:
    f = s["fold"]
    if not f["enabled"]:
        return "not folded: --no-fold"
    if not f["folded"]:
        return f"not folded: {f['note']}" if f.get("note") else "nothing to fold"
    return f"{f['vertices_before']} before folding"


def main_graph(args: argparse.Namespace) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.graph.onnx_io import load
    from hetlab.graph.shapes import parse_input_args, parse_shape_args

    g = load(args.model, parse_shape_args(args.shape), parse_input_args(args.input), args.fold)
    if args.json:
        json.dump(g.to_json(), sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_summary(g.summary()))
    return 0


def main_zoo(args: argparse.Namespace) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab import zoo

    rows = [
        {"name": n, **{k: v for k, v in zoo.info(n).items() if k != "file"}} for n in zoo.names()
    ]
    if args.json:
        json.dump(rows, sys.stdout)
        sys.stdout.write("\n")
        return 0
    for r in rows:
        shapes = ", ".join(f"{k}={'x'.join(map(str, v))}" for k, v in r.get("inputs", {}).items())
        print(f"{r['name']:<16}{r.get('vertices', '?'):>6} vertices   {shapes}")
    return 0
