"""`planstate blocker …`: record blockers and move them through new, active, bypassed and resolved."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from planstate.cli.parser import Registrar, completes, workspace
from planstate.cli.results import add_limit, print_entry, print_listing, print_record

if TYPE_CHECKING:
    from planstate.ops.records import Entry


def register(cli: Registrar) -> None:
    """Add the `blocker` group: add, list, show, activate, bypass, resolve."""
    group = cli.group("blocker", "record blockers and move them through new, active, bypassed, resolved")
    for subcommand in (_add, _list, _show, _activate, _bypass, _resolve):
        subcommand(group)


def _add(group: Registrar) -> None:
    p = group.add(
        "add",
        cmd_add,
        "record a blocker (status new; --active if it blocks work now)",
        examples=["planstate blocker add --description 'Staging DB is down' --affects 'phase 2' --active"],
    )
    p.add_argument("--description", required=True, help="what is blocking")
    p.add_argument("--affects", action="append", metavar="X", help="what it blocks, e.g. 'phase 3'; repeat")
    p.add_argument("--blocked-task", action="append", metavar="TASK", help="a task that cannot proceed; repeat")
    p.add_argument("--title", help="short title (default: the description, shortened)")
    p.add_argument("--active", action="store_true", help="record it directly as active")


def cmd_add(args: argparse.Namespace) -> int:
    """Record a blocker."""
    entry = workspace(args).blocker.add(
        description=args.description,
        affects=args.affects or [],
        title=args.title,
        active=args.active,
        blocked_tasks=args.blocked_task or [],
    )
    text = f"Recorded blocker {entry.id} [{entry.data['status']}]: {entry.data['title']} ({entry.shown})"
    return print_entry(args, entry, text)


def _list(group: Registrar) -> None:
    p = group.add("list", cmd_list, "list unresolved blockers (--all: resolved ones too)")
    p.add_argument("--status", metavar="S", help="only blockers with this status")
    p.add_argument("--all", action="store_true", help="include resolved and archived blockers")
    p.add_argument("--since", metavar="WHEN", help="only blockers identified on or after a date, or within a duration")
    add_limit(p, "blockers")


def cmd_list(args: argparse.Namespace) -> int:
    """List blockers."""
    listing = workspace(args).blocker.list(status=args.status, all=args.all, since=args.since, limit=args.limit)
    empty = "no blockers" if args.all or args.status else "no unresolved blockers (--all shows resolved ones too)"
    return print_listing(args, listing, ["status", "identified", "title"], empty)


def _show(group: Registrar) -> None:
    p = group.add("show", cmd_show, "show one blocker")
    completes(p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it"), "blocker")


def cmd_show(args: argparse.Namespace) -> int:
    """Show one blocker."""
    return print_record(args, workspace(args).blocker.show(args.id))


def _moved(args: argparse.Namespace, entry: Entry) -> int:
    return print_entry(args, entry, f"Blocker {entry.id} is now {entry.data['status']} ({entry.shown})")


def _activate(group: Registrar) -> None:
    p = group.add("activate", cmd_activate, "mark a blocker active (it blocks work now)")
    completes(p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it"), "blocker")
    p.add_argument("--reason", help="why it blocks now")


def cmd_activate(args: argparse.Namespace) -> int:
    """Mark a blocker active."""
    return _moved(args, workspace(args).blocker.activate(args.id, reason=args.reason))


def _bypass(group: Registrar) -> None:
    p = group.add("bypass", cmd_bypass, "mark an active blocker bypassed by a workaround")
    completes(p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it"), "blocker")
    p.add_argument("--workaround", required=True, help="how work proceeds around it")


def cmd_bypass(args: argparse.Namespace) -> int:
    """Mark a blocker bypassed by a workaround."""
    return _moved(args, workspace(args).blocker.bypass(args.id, workaround=args.workaround))


def _resolve(group: Registrar) -> None:
    p = group.add("resolve", cmd_resolve, "mark a blocker resolved")
    completes(p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it"), "blocker")
    p.add_argument("--resolution", required=True, help="how it was resolved")


def cmd_resolve(args: argparse.Namespace) -> int:
    """Mark a blocker resolved."""
    return _moved(args, workspace(args).blocker.resolve(args.id, resolution=args.resolution))
