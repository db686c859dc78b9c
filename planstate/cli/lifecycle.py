"""Lifecycle commands (pause, suspend, error, fail, retry, complete, abandon, archive, reopen, resume) and the
initiative group (new, list, switch)."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import out, print_json
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_OK

VERBS = {
    "pause": "pause the initiative on purpose (resume continues it)",
    "suspend": "suspend the initiative because of a circumstance: a restart, a lost connection",
    "error": "record a recoverable error (--reason is the message); retry continues",
    "fail": "give up on the initiative; retry starts it again",
    "retry": "make an initiative in error or failed active again",
    "complete": "complete the initiative (every phase completed or skipped)",
    "abandon": "mark the initiative abandoned; resume continues it",
    "archive": "archive the initiative: a soft delete, hidden from lists unless --all",
    "reopen": "make a completed or archived initiative active again",
}


def transition_line(result: Any) -> str:
    """`<initiative>: <from> → <to>`, with the reason when there is one."""
    text = f"{result.initiative}: {result.source} → {result.target}"
    return f"{text} ({result.reason})" if result.reason else text


def print_transition(args: argparse.Namespace, result: Any) -> int:
    """Print one transition as a line, or as JSON."""
    if args.json:
        print_json(result.to_dict())
    else:
        out(transition_line(result))
    return EXIT_OK


def cmd_transition(args: argparse.Namespace) -> int:
    """Apply the lifecycle command named by the subparser (`args.verb`)."""
    details = None
    if getattr(args, "detail", None):
        from planstate.ops.phases import parse_pairs

        details = parse_pairs(args.detail, "detail")
    ws = workspace(args)
    result = ws.transition(args.verb, args.reason, getattr(args, "context", None), details)
    return print_transition(args, result)


# ---------------------------------------------------------------------------- initiative


def cmd_initiative_new(args: argparse.Namespace) -> int:
    """Create an initiative in .planning/initiatives/SLUG/."""
    result = workspace(args).initiative.new(
        args.slug, title=args.title, phases=args.phase or [], first_phase=args.first_phase, switch=args.switch
    )
    if args.json:
        print_json(result.to_dict())
        return EXIT_OK
    for paused in result.paused:
        out(transition_line(paused))
    out(f"Created {result.dir}/ for {result.title!r} (initiative {result.initiative}, {result.state}).")
    return EXIT_OK


def cmd_initiative_list(args: argparse.Namespace) -> int:
    """List the initiatives; `*` marks the one commands act on."""
    from planstate.model.kinds import to_json

    listing = workspace(args).initiative.list(all=args.all)
    if args.json:
        print_json(listing.to_dict())
        return EXIT_OK
    rows = listing.initiatives
    slug_width = max((len(r.initiative) for r in rows), default=0)
    state_width = max((len(r.state) for r in rows), default=0)
    title_width = max((len(r.title) for r in rows), default=0)
    for r in rows:
        mark = "*" if r.current else " "
        since = f"since {to_json(r.since)}" if r.since else ""
        line = f"{mark} {r.initiative:<{slug_width}}  {r.state:<{state_width}}  {r.title:<{title_width}}  {since}"
        out(line.rstrip() + (f"  ({r.problem})" if r.problem else ""))
    if listing.hidden:
        plural = "s" if listing.hidden > 1 else ""
        out(f"({listing.hidden} archived initiative{plural} hidden; --all lists {'them' if plural else 'it'})")
    return EXIT_OK


def cmd_initiative_switch(args: argparse.Namespace) -> int:
    """Pause the active initiative and make SLUG active."""
    result = workspace(args).initiative.switch(args.slug, reason=args.reason)
    if args.json:
        print_json(result.to_dict())
    elif result.already_active:
        out(f"{result.initiative}: already active")
    else:
        for moved in result.transitions:
            out(transition_line(moved))
    return EXIT_OK


def register(cli: Registrar) -> None:
    """Add the lifecycle commands and the initiative group."""
    for verb, help_text in VERBS.items():
        p = cli.add(verb, cmd_transition, help_text)
        p.set_defaults(verb=verb)
        p.add_argument("--reason", metavar="R", help="why (kept in lifecycle.reason and the history)")
        if verb in ("pause", "suspend"):
            p.add_argument("--context", metavar="TEXT", help="what was being worked on (default: the current task)")
        if verb == "error":
            p.add_argument("--detail", action="append", metavar="KEY=VALUE", help="a fact about the error (repeat)")

    # `resume` (the brief, and --activate for this transition) lives in cli/resume.py.

    group = cli.group("initiative", "create, list and switch initiatives")
    p = group.add("new", cmd_initiative_new, "create an initiative in .planning/initiatives/SLUG/")
    p.add_argument("slug", metavar="SLUG", help="its id: lowercase letters, digits and '-'")
    p.add_argument("--title", help="its title (default: from the slug)")
    p.add_argument("--phase", action="append", metavar="NAME", help="a phase name; repeat in order")
    p.add_argument("--first-phase", type=int, choices=(0, 1), default=1, help="number of the first phase (0 or 1)")
    p.add_argument("--switch", action="store_true", help="make it active now, pausing the active one")
    p = group.add("list", cmd_initiative_list, "list initiatives; * marks the one commands act on")
    p.add_argument("--all", action="store_true", help="include archived initiatives")
    p = group.add("switch", cmd_initiative_switch, "pause the active initiative and resume SLUG, in one transaction")
    p.add_argument("slug", metavar="SLUG", help="the initiative to make active")
    p.add_argument("--reason", metavar="R", help="why (kept in both initiatives' history)")
