"""HOPE Fig. 4 on the platform at hand (``python -m benchmarks.fig4``).

``run`` is the command line, ``model`` one model's rows, ``env`` the platform side
(fingerprint, budget, profiling), ``benchmarks.rounds`` the interleaved timing of distinct
plans, ``table`` the rows and their
normalization, ``plot`` the figure."""
