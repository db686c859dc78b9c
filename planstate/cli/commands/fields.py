"""`planstate set`, `append` and `unset`: change fields of STATE.md, typed by the schema."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import out
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_OK, UsageError


def register(cli: Registrar) -> None:
    """Add `set`, `append` and `unset`."""
    p = cli.add(
        "set",
        cmd_set,
        "set fields of STATE.md (all pairs in one transaction)",
        examples=[
            "planstate set next_action 'Write the migration'",
            "planstate set position.plan 2 position.wave 1",
            "planstate set resume_context.files_modified '[src/db.py, tests/test_db.py]'",
        ],
    )
    values = "text for a text field (null clears it), YAML for the rest (3, true, [a, b])"
    p.add_argument(
        "pairs",
        nargs="+",
        metavar="PATH VALUE",
        help=f"dotted path and value: {values}; `planstate schema state` lists the fields",
    )
    p = cli.add(
        "append",
        cmd_append,
        "append an item to a list field",
        examples=["planstate append resume_context.files_modified src/auth.py"],
    )
    p.add_argument("path", metavar="PATH", help="dotted path of a list, e.g. resume_context.files_modified")
    p.add_argument("value", metavar="VALUE", help="the item, typed as for `set`")

    p = cli.add(
        "unset",
        cmd_unset,
        "remove an optional field or a list item",
        examples=["planstate unset position.wave", "planstate unset resume_context.open_questions.0"],
    )
    p.add_argument("path", metavar="PATH", help="dotted path, e.g. position.wave")


def cmd_set(args: argparse.Namespace) -> int:
    """Set one or more fields in one transaction."""
    pairs = args.pairs
    if len(pairs) % 2:
        raise UsageError(f"set takes PATH VALUE pairs; {pairs[-1]!r} has no value")
    ws = workspace(args)
    changes = ws.set_text(list(zip(pairs[::2], pairs[1::2], strict=True)))
    return print_changes(args, changes, ws.ctx.display(ws.state_path))


def cmd_append(args: argparse.Namespace) -> int:
    """Append an item to a list field."""
    ws = workspace(args)
    changes = ws.append_text(args.path, args.value)
    return print_changes(args, changes, ws.ctx.display(ws.state_path))


def cmd_unset(args: argparse.Namespace) -> int:
    """Remove an optional field or a list item."""
    ws = workspace(args)
    changes = ws.unset(args.path)
    return print_changes(args, changes, ws.ctx.display(ws.state_path))


def print_changes(args: argparse.Namespace, changes: list[Any], file: str) -> int:
    """Print what a write changed (`file: path: old → new` lines, or JSON)."""
    from planstate.cli.display import short
    from planstate.cli.output import reply

    if args.json:
        reply({"path": file, "changed": bool(changes), "changes": [c.to_dict() for c in changes]})
        return EXIT_OK
    if not changes:
        out(f"{file}: no change")
    for change in changes:
        new = "(removed)" if change.removed else short(change.new)
        out(f"{file}: {change.path}: {short(change.old)} → {new}")
    return EXIT_OK
