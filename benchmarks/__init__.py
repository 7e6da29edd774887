"""hetlab's benchmark suite: each module is run as ``python -m benchmarks.NAME`` from the
repository root and writes ``benchmarks/results/<platform>/NAME.csv|json`` (see README.md)."""
