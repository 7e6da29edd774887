import sys

from hetlab.cli import main

sys.exit(main())
