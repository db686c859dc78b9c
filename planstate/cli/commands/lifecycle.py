"""The lifecycle verbs: `planstate pause`, `suspend`, `error`, `fail`, `retry`, `complete`, `abandon`, `archive`,
`reopen` (resuming is `planstate resume --activate`, in resume.py)."""

from __future__ import annotations

import argparse

from planstate.cli.commands import LIFECYCLE_VERBS
from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar, workspace
from planstate.cli.results import transition_line
from planstate.core.errors import EXIT_OK

HELP = {
    "pause": "pause the initiative on purpose (resume --activate continues it)",
    "suspend": "suspend the initiative because of a circumstance: a restart, a lost connection",
    "error": "record a recoverable error (--reason is the message); retry continues",
    "fail": "give up on the initiative; retry starts it again",
    "retry": "make an initiative in error or failed active again",
    "complete": "complete the initiative (every phase completed or skipped)",
    "abandon": "mark the initiative abandoned; resume --activate continues it",
    "archive": "archive the initiative: a soft delete, hidden from lists unless --all",
    "reopen": "make a completed or archived initiative active again",
}


def register(cli: Registrar) -> None:
    """Add the lifecycle verbs, each a command of its own."""
    for verb in LIFECYCLE_VERBS:
        p = cli.add(verb, cmd_transition, HELP[verb])
        p.set_defaults(verb=verb)
        p.add_argument("--reason", metavar="R", help="why (kept in lifecycle.reason and the history)")
        if verb in ("pause", "suspend"):
            p.add_argument("--context", metavar="TEXT", help="what was being worked on (default: the current task)")
        if verb == "error":
            p.add_argument("--detail", action="append", metavar="KEY=VALUE", help="a fact about the error (repeat)")


def cmd_transition(args: argparse.Namespace) -> int:
    """Apply the lifecycle verb the command was registered with (`args.verb`)."""
    details = None
    if getattr(args, "detail", None):
        from planstate.ops.phaserules import parse_pairs

        details = parse_pairs(args.detail, "detail")
    ws = workspace(args)
    result = ws.transition(args.verb, args.reason, getattr(args, "context", None), details)
    if args.json:
        reply(result.to_dict())
    else:
        out(transition_line(result))
    return EXIT_OK
