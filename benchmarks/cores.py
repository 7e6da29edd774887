"""How many cores does this machine really give at once? N processes, each pinned to its own
core, spin on a fixed amount of integer work; each one's wall time against one alone. On a
machine whose CPU quota (cgroup ``cpu.max``) or host is smaller than its core count, the
time grows with N past that size. Prints one line per N and the cgroup quota.

    python benchmarks/cores.py [--n 1,2,4,8,12,15,16] [--work 3000000]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from pathlib import Path


def _spin(core: int, work: int, q) -> None:
    os.sched_setaffinity(0, {core})
    t = time.perf_counter()
    x = 0
    for i in range(work):
        x += i & 7
    q.put(time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="1,2,4,8,12,15,16")
    ap.add_argument("--work", type=int, default=3_000_000)
    a = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    for f in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
        if Path(f).exists():
            print(f, Path(f).read_text().strip())
    base = None
    for n in (int(v) for v in a.n.split(",")):
        if n > len(cores):
            continue
        q = mp.Queue()
        ps = [mp.Process(target=_spin, args=(cores[i], a.work, q)) for i in range(n)]
        [p.start() for p in ps]
        ts = sorted(q.get() for _ in ps)
        [p.join() for p in ps]
        base = base or ts[0]
        print(
            f"n={n:2d} median {ts[len(ts) // 2] / base:5.2f}x max {ts[-1] / base:5.2f}x of one alone ({base * 1e3:.0f} ms)",
            flush=True,
        )


if __name__ == "__main__":
    main()
