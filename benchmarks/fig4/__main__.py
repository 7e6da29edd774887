"""``python -m benchmarks.fig4``: see ``benchmarks.fig4.run``."""

import sys

from benchmarks.fig4.run import main

sys.exit(main())
