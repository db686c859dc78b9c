"""`planstate next [TEXT]`: show or set the next action."""

from __future__ import annotations

import argparse

from planstate.cli.parser import Registrar, workspace
from planstate.cli.results import print_edited, print_value


def register(cli: Registrar) -> None:
    """Add `next`."""
    p = cli.add(
        "next",
        cmd_next,
        "show or set the next action",
        examples=["planstate next", "planstate next 'Run the migration'"],
    )
    p.add_argument("text", nargs="?", metavar="TEXT", help="what to do next (several lines are kept)")


def cmd_next(args: argparse.Namespace) -> int:
    """Show or set the next action."""
    ws = workspace(args)
    if args.text is None:
        return print_value(args, ws.get("next_action"))
    return print_edited(args, ws.next(args.text))
