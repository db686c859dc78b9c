"""Run the planstate command line as `python -m planstate`."""

import sys

from planstate.cli.main import main

sys.exit(main())
