"""`planstate get PATH`: print the value at a dotted path of STATE.md's front matter."""

from __future__ import annotations

import argparse

from planstate.cli.parser import Registrar, workspace
from planstate.cli.results import print_value


def register(cli: Registrar) -> None:
    """Add `get`."""
    p = cli.add(
        "get",
        cmd_get,
        "print the value at a dotted path of STATE.md's front matter",
        examples=["planstate get next_action", "planstate get position --json"],
    )
    p.add_argument("path", metavar="PATH", help="dotted path, e.g. position.task or phases.2.status (phase 2)")


def cmd_get(args: argparse.Namespace) -> int:
    """Print the value at a dotted path of STATE.md's front matter."""
    return print_value(args, workspace(args).get(args.path))
