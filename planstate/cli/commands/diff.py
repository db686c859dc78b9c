"""`planstate diff [REV1 [REV2]]`: what changed in .planning/ between two revisions, as a changelog."""

from __future__ import annotations

import argparse

from planstate.cli.output import out, reply, warn
from planstate.cli.parser import Registrar, option_error, workspace
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add `diff`."""
    p = cli.add(
        "diff",
        cmd_diff,
        "summarise what changed in .planning/ between two revisions (default: HEAD and the working tree)",
        by=False,
    )
    p.add_argument("rev1", nargs="?", default=None, metavar="REV1", help="the older revision (default HEAD)")
    p.add_argument("rev2", nargs="?", default=None, metavar="REV2", help="the newer revision (default: working tree)")
    p.add_argument("--markdown", action="store_true", help="print markdown, ready to paste as a pull-request comment")


def cmd_diff(args: argparse.Namespace) -> int:
    """Summarise what changed in .planning/ between two revisions (default: HEAD and the working tree)."""
    if args.json and args.markdown:
        option_error(args, "--json and --markdown ask for two formats; give one of them")
    ws = workspace(args)
    result = ws.diff(args.rev1, args.rev2)
    for warning in result.warnings:
        warn(warning)
    if args.json:
        reply(result.to_dict())
    elif args.markdown:
        out(result.to_markdown())
    else:
        out(result.to_text())
    return EXIT_OK
