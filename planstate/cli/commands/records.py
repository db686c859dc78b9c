"""`planstate records archive`: move finished records older than a date into their kind's `archive/` folder."""

from __future__ import annotations

import argparse

from planstate.cli.output import out, reply, warn
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add the `records` group: archive."""
    group = cli.group("records", "what applies to every kind of record: archiving old ones")
    _archive(group)


def _archive(group: Registrar) -> None:
    p = group.add(
        "archive",
        cmd_archive,
        "move finished records dated before a date into archive/ folders",
        examples=["planstate records archive --before 2026-10-01 --dry-run", "planstate records archive --before 90d"],
    )
    p.add_argument(
        "--before", metavar="WHEN", required=True, help="a date, a timestamp, or a duration back from now (90d)"
    )
    p.add_argument("--kind", choices=("decision", "blocker", "session"), help="only records of this kind")
    p.add_argument("--dry-run", action="store_true", help="only say what would move")


def cmd_archive(args: argparse.Namespace) -> int:
    """Archive finished records."""
    result = workspace(args).records.archive(before=args.before, kind=args.kind, dry_run=args.dry_run)
    for problem in result.problems:
        warn(f"skipped {problem}")
    if args.json:
        reply(result.to_dict())
        return EXIT_OK
    would = "would archive" if result.dry_run else "archived"
    for moved in result.moved:
        out(f"{would} {moved.kind} {moved.id}: {moved.path} -> {moved.to}")
    counts = result.counts()
    total = ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items() if n)
    out(f"{would} {total}" if total else "nothing to archive")
    return EXIT_OK
