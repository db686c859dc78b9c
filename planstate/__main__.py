"""Run the planstate command line as `python -m planstate`."""

import sys

from planstate.cli import main

sys.exit(main())
