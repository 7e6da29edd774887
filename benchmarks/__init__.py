"""hetlab's benchmark suite: each module is run as ``python -m benchmarks.NAME`` from the
repository root; its current result on each platform is kept as
``benchmarks/results/<platform>/NAME.csv|json`` (see README.md)."""
