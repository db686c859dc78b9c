"""Results several commands print alike: a value of STATE.md, the fields an edit changed, a lifecycle transition,
and records written, listed and shown; and `resume --activate`'s resuming, which the MCP server's `resume` shares."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from planstate.cli.output import out, reply, warn
from planstate.core.errors import EXIT_OK

if TYPE_CHECKING:
    from planstate.ops.records import Entry, Listing


def print_value(args: argparse.Namespace, value: Any) -> int:
    """Print one value of STATE.md as `planstate get PATH` does: bare or as a YAML block, or JSON."""
    from planstate.cli.display import value_text

    if args.json:
        reply(value)
    else:
        out(value_text(value))
    return EXIT_OK


def print_edited(args: argparse.Namespace, result: Any) -> int:
    """Print the fields an edit changed (`FILE: PATH: OLD → NEW`), or the result as JSON."""
    from planstate.cli.display import short

    if args.json:
        reply(result.to_dict())
        return EXIT_OK
    if not result.changes:
        out(f"{result.file}: no change")
    for change in result.changes:
        out(f"{result.file}: {change.path}: {short(change.old)} → {short(change.new)}")
    return EXIT_OK


def transition_line(result: Any) -> str:
    """`<initiative>: <from> → <to>`, with the reason when there is one."""
    text = f"{result.initiative}: {result.source} → {result.target}"
    return f"{text} ({result.reason})" if result.reason else text


def print_entry(args: argparse.Namespace, entry: Entry, text: str) -> int:
    """Print a written record: its warnings on stderr, then `text` (or the record as JSON)."""
    for line in entry.warnings:
        warn(line)
    if args.json:
        reply(entry.to_dict())
    else:
        out(text)
    return EXIT_OK


def print_listing(args: argparse.Namespace, listing: Listing, columns: list[str], empty: str) -> int:
    """Print a list: unreadable files as warnings, then one line per record (or, as JSON, `{"decisions": [...]}`)."""
    for line in listing_warnings(listing):
        warn(line)
    if args.json:
        reply(listing.to_dict())
        return EXIT_OK
    if not listing:
        out(empty)
    for entry in listing:
        cells = [entry.id, *(_cell(entry.data.get(c)) for c in columns)]
        out("  ".join(cells))
    return EXIT_OK


def listing_warnings(listing: Listing) -> list[str]:
    """The warnings of a list: the files it could not read, and the records listed as they are though invalid."""
    return [f"skipped {problem}" for problem in listing.problems] + [
        f"listed as it is, but it does not validate: {problem}" for problem in listing.invalid
    ]


def _cell(value: Any) -> str:
    from planstate.cli.display import short

    if value is None:
        return "-"
    return value if isinstance(value, str) else short(value, 40)


def print_record(args: argparse.Namespace, entry: Entry, note: str = "") -> int:
    """Print one record: its path and `note`, then its file as it is on disk (or JSON with the body under `body`)."""
    if args.json:
        reply(entry.to_dict())
        return EXIT_OK
    out(f"# {entry.shown}{note}")
    out(entry.path.read_text(encoding="utf-8", errors="replace"))
    return EXIT_OK


def activation_line(activated: dict[str, Any], moved: Any) -> str:
    """The line `--activate` prints above the brief: the transition, or that there was nothing to resume; a long
    reason is shortened here (the history keeps it whole) so the brief keeps most of the budget."""
    from planstate.report.brief import shorten
    from planstate.report.budget import ACTIVATION_LIMIT

    if activated["already_active"]:
        return shorten(f"{activated['initiative']} is already active; nothing to resume", ACTIVATION_LIMIT)
    return shorten(transition_line(moved), ACTIVATION_LIMIT)


def activate(ws: Any, reason: str | None) -> tuple[dict[str, Any], Any]:
    """Resume the target initiative unless it is already active (an agent's first command after a crash may well
    find it so): the `activated` data of `--json`, and the transition when there was one."""
    state = ws.state()
    if state.lifecycle.state == "active":
        return {
            "initiative": state.initiative,
            "from": "active",
            "to": "active",
            "reason": None,
            "at": None,
            "already_active": True,
        }, None
    moved = ws.resume(reason=reason)
    return {**moved.to_dict(), "already_active": False}, moved
