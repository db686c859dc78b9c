"""`planstate decision …`: record decisions, one file each in decisions/, and move them through their statuses."""

from __future__ import annotations

import argparse

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar, completes, workspace
from planstate.cli.results import add_limit, print_entry, print_listing, print_record
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add the `decision` group: add, list, show, supersede, accept, reject."""
    group = cli.group("decision", "record decisions, one file each in decisions/")
    for subcommand in (_add, _list, _show, _supersede, _accept, _reject):
        subcommand(group)


def _add(group: Registrar) -> None:
    p = group.add(
        "add",
        cmd_add,
        "record a decision in a new file (STATE.md's decisions region shows it)",
        examples=[
            "planstate decision add --context 'Sessions must survive restarts' --decision 'Store them in Redis' "
            "--reason 'Already run in prod' --alternative Postgres",
        ],
    )
    p.add_argument("--context", required=True, help="where the decision was needed")
    p.add_argument("--decision", required=True, help="what was decided")
    p.add_argument("--reason", required=True, help="why this choice")
    p.add_argument("--alternative", action="append", metavar="TEXT", help="an alternative considered; repeat")
    p.add_argument("--irreversible", action="store_true", help="the decision cannot be undone cheaply")
    completes(
        p.add_argument("--supersedes", metavar="ID", help="a decision this one replaces (marked superseded)"),
        "decision",
    )
    p.add_argument("--title", help="short title (default: the decision, shortened)")
    p.add_argument("--proposed", action="store_true", help="record it as proposed, not yet accepted")
    completes(
        p.add_argument("--phase", type=int, metavar="N", help="phase it belongs to (default: position.phase)"), "phase"
    )


def cmd_add(args: argparse.Namespace) -> int:
    """Record a decision."""
    entry = workspace(args).decision.add(
        context=args.context,
        decision=args.decision,
        reason=args.reason,
        alternatives=args.alternative or [],
        irreversible=args.irreversible,
        supersedes=args.supersedes,
        title=args.title,
        status="proposed" if args.proposed else "accepted",
        phase=args.phase,
    )
    text = f"Recorded decision {entry.id}: {entry.data['title']} ({entry.shown})"
    if entry.data.get("supersedes"):
        text += f"\nDecision {entry.data['supersedes']} is now superseded by {entry.id}."
    return print_entry(args, entry, text)


def _list(group: Registrar) -> None:
    p = group.add("list", cmd_list, "list decisions (superseded ones only with --all)")
    p.add_argument("--all", action="store_true", help="include superseded and archived decisions")
    p.add_argument("--status", metavar="S", help="only decisions with this status")
    p.add_argument("--since", metavar="WHEN", help="only decisions dated on or after a date, or within a duration")
    add_limit(p, "decisions")


def cmd_list(args: argparse.Namespace) -> int:
    """List decisions."""
    listing = workspace(args).decision.list(all=args.all, status=args.status, since=args.since, limit=args.limit)
    hidden = "" if args.all or args.status else " (superseded ones are hidden; --all shows them)"
    return print_listing(args, listing, ["date", "status", "title"], f"no decisions{hidden}")


def _show(group: Registrar) -> None:
    p = group.add("show", cmd_show, "show one decision")
    completes(p.add_argument("id", metavar="ID", help="decision id or a unique prefix of it"), "decision")


def cmd_show(args: argparse.Namespace) -> int:
    """Show one decision."""
    return print_record(args, workspace(args).decision.show(args.id))


def _supersede(group: Registrar) -> None:
    p = group.add(
        "supersede",
        cmd_supersede,
        "mark decision OLD superseded by decision NEW",
        examples=["planstate decision supersede dec-1ng9pk dec-1nh2aa"],
    )
    completes(p.add_argument("id", metavar="OLD", help="the decision replaced"), "decision")
    p.add_argument("new", metavar="NEW", help="the decision that replaces it")


def cmd_supersede(args: argparse.Namespace) -> int:
    """Mark a decision superseded by another."""
    result = workspace(args).decision.supersede(args.id, args.new)
    if args.json:
        reply(result.to_dict())
    else:
        out(f"Decision {result.old.id} is now superseded by {result.new.id} ({result.old.shown}).")
    return EXIT_OK


def _accept(group: Registrar) -> None:
    p = group.add("accept", cmd_accept, "accept a proposed decision")
    completes(p.add_argument("id", metavar="ID", help="decision id or a unique prefix of it"), "decision")


def cmd_accept(args: argparse.Namespace) -> int:
    """Accept a proposed decision."""
    entry = workspace(args).decision.accept(args.id)
    return print_entry(args, entry, f"Decision {entry.id} is now accepted ({entry.shown})")


def _reject(group: Registrar) -> None:
    p = group.add("reject", cmd_reject, "reject a proposed decision")
    completes(p.add_argument("id", metavar="ID", help="decision id or a unique prefix of it"), "decision")
    p.add_argument("--reason", metavar="R", help="why it is rejected (kept in rejection)")


def cmd_reject(args: argparse.Namespace) -> int:
    """Reject a proposed decision."""
    entry = workspace(args).decision.reject(args.id, reason=args.reason)
    return print_entry(args, entry, f"Decision {entry.id} is now rejected ({entry.shown})")
