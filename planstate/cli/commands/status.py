"""`planstate status`: where the initiative is, as a summary (rich on a terminal) or JSON."""

from __future__ import annotations

import argparse

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add `status`."""
    cli.add("status", cmd_status, "show where the initiative is")


def cmd_status(args: argparse.Namespace) -> int:
    """Show where the initiative is."""
    from planstate.cli import display

    status = workspace(args).status()
    if args.json:
        reply(status.to_dict())
    elif display.use_rich():
        display.print_status_rich(status.flat())
    else:
        out(display.status_plain(status.flat()))
    return EXIT_OK
