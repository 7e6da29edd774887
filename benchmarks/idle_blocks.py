"""Is a plan's speed a property of its process, or of the moment? (issue 6: why the same
plan's median differs between fresh processes)

One plan with everything on ``--device`` is prepared once and warmed up; then ``--blocks``
blocks of ``--repeat`` runs each, back to back (``busy``) and with ``--pause`` s of sleep
before each block (``idle``). Prints each block's median (ms). On the 2-core dev VM,
silero_vad on cpu0 ran at two speeds, about 0.126 and 0.20 ms, each for whole blocks of 200
runs (25-40 ms) and runs of blocks, busy or idle alike: the same spread as fresh processes'
medians of that plan (0.133-0.237). So it is the moment, not the process.

    python benchmarks/idle_blocks.py --model silero_vad --device cpu0 --out idle_blocks.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def blocks(ex, feed, n: int, repeat: int, pause: float) -> list[float]:
    """Median ms of each of ``n`` blocks of ``repeat`` runs, ``pause`` s of sleep before each."""
    out = []
    for _ in range(n):
        if pause:
            time.sleep(pause)
        out.append(round(float(np.median([ex.run_once(feed).wall_ms for _ in range(repeat)])), 4))
    return out


def main() -> int:
    from benchmarks.mixed_plans import model_graph
    from hetlab.devices.platform import devices
    from hetlab.executor.api import warm_up
    from hetlab.executor.check import random_inputs
    from hetlab.executor.interpreter import Executor

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="silero_vad")
    ap.add_argument("--device", default="cpu0")
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument(
        "--pause", type=float, default=0.2, help="seconds of sleep before an idle block"
    )
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    g, values = model_graph(a.model)
    devs = {d.name: d for d in devices()}
    if a.device not in devs:
        raise SystemExit(f"unknown device {a.device!r}; devices here: {', '.join(devs)}")
    ex = Executor(g, {n.id: a.device for n in g.nodes}, devs)
    feed = {**random_inputs(g, 0), **values}
    ex.prepare()
    try:
        warm_up(lambda: ex.run_once(feed))
        doc = {
            "model": a.model,
            "device": a.device,
            "repeat": a.repeat,
            "pause_s": a.pause,
            "busy": blocks(ex, feed, a.blocks, a.repeat, 0.0),
            "idle": blocks(ex, feed, a.blocks, a.repeat, a.pause),
        }
    finally:
        ex.close()
    for k in ("busy", "idle"):
        v = doc[k]
        print(f"{a.model} on {a.device} {k:<4} block medians {min(v):.4f}-{max(v):.4f} ms: {v}")
    if a.out:
        Path(a.out).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
