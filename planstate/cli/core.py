"""Core commands: init, status, get, set, append, unset, validate, schema."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import out
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_FINDINGS, EXIT_OK, UsageError

_out = out  # short names used throughout this module
_workspace = workspace


def print_changes(args: argparse.Namespace, changes: list[Any], file: str) -> int:
    """Print what a write changed (`file: path: old → new` lines, or JSON)."""
    from planstate.cli.display import dump_json, short

    if args.json:
        _out(dump_json({"file": file, "changed": bool(changes), "changes": [c.to_dict() for c in changes]}))
        return EXIT_OK
    if not changes:
        _out(f"{file}: no change")
    for change in changes:
        new = "(removed)" if change.removed else short(change.new)
        _out(f"{file}: {change.path}: {short(change.old)} → {new}")
    return EXIT_OK


# ---------------------------------------------------------------------------- commands


def cmd_init(args: argparse.Namespace) -> int:
    """Create .planning/ with STATE.md, record folders and a .gitignore."""
    import os

    from planstate.core.files import absolute
    from planstate.core.layout import PLANNING
    from planstate.workspace import Workspace

    project = absolute(getattr(args, "dir", None) or os.environ.get("PLANSTATE_DIR") or ".")
    if project.name == PLANNING:  # --dir names the workspace itself, not its project
        project = project.parent
    ws = Workspace.init(
        project,
        title=args.title,
        phases=args.phase or [],
        first_phase=args.first_phase,
        initiative=getattr(args, "initiative", None),  # for init, --initiative names the new one
        actor=getattr(args, "by", None),
        next_action=args.next,
    )
    state = ws.state()
    if args.json:
        from planstate.cli.display import dump_json

        _out(dump_json({"workspace": str(ws.root), "initiative": state.initiative, "title": state.title}))
    else:
        _out(f"Created {ws.ctx.display(ws.root)}/ for {state.title!r} (initiative {state.initiative}).")
        _out("Next: `planstate status` shows where it stands; `planstate set PATH VALUE` changes it.")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """Show where the initiative is."""
    from planstate.cli import display

    status = _workspace(args).status().to_dict()
    if args.json:
        _out(display.dump_json(status))
    elif display.use_rich():
        display.print_status_rich(status)
    else:
        _out(display.status_plain(status))
    return EXIT_OK


def cmd_get(args: argparse.Namespace) -> int:
    """Print the value at a dotted path of STATE.md's front matter."""
    from planstate.cli.display import dump_json, value_text

    value = _workspace(args).get(args.path)
    _out(dump_json(value) if args.json else value_text(value))
    return EXIT_OK


def cmd_set(args: argparse.Namespace) -> int:
    """Set one or more fields in one transaction."""
    pairs = args.pairs
    if len(pairs) % 2:
        raise UsageError(f"set takes PATH VALUE pairs; {pairs[-1]!r} has no value")
    ws = _workspace(args)
    changes = ws.set_text(list(zip(pairs[::2], pairs[1::2], strict=True)))
    return print_changes(args, changes, ws.ctx.display(ws.state_path))


def cmd_append(args: argparse.Namespace) -> int:
    """Append an item to a list field."""
    ws = _workspace(args)
    changes = ws.append_text(args.path, args.value)
    return print_changes(args, changes, ws.ctx.display(ws.state_path))


def cmd_unset(args: argparse.Namespace) -> int:
    """Remove an optional field or a list item."""
    ws = _workspace(args)
    changes = ws.unset(args.path)
    return print_changes(args, changes, ws.ctx.display(ws.state_path))


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every file of the workspace."""
    from planstate.cli.display import dump_json

    result = _workspace(args).validate()
    count, problems = result
    if args.json:
        _out(dump_json(result.to_dict()))
    else:
        for problem in problems:
            _out(str(problem))
        if not problems:
            _out(f"{count} file{'s' if count != 1 else ''} valid")
    return EXIT_FINDINGS if problems else EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the JSON Schema of a file kind (or of all kinds)."""
    from planstate.cli.display import dump_json
    from planstate.model.kinds import KINDS

    def schema_of(name: str) -> dict[str, Any]:
        model = KINDS[name]
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"planstate {name}",
            **model.json_schema(),
        }

    if args.name:
        _out(dump_json(schema_of(args.name)))
    else:
        _out(dump_json({name: schema_of(name) for name in KINDS}))
    return EXIT_OK


def register(cli: Registrar) -> None:
    """Add the core commands."""
    p = cli.add(
        "init",
        cmd_init,
        "create .planning/ with STATE.md, decisions/, blockers/, sessions/ (--initiative names its id)",
    )
    p.add_argument("--title", help="title of the initiative (default: the folder name)")
    p.add_argument("--phase", action="append", metavar="NAME", help="a phase name; repeat in order")
    p.add_argument("--first-phase", type=int, choices=(0, 1), default=1, help="number of the first phase (0 or 1)")
    p.add_argument("--next", metavar="TEXT", help="the first next action")

    cli.add("status", cmd_status, "show where the initiative is")

    p = cli.add("get", cmd_get, "print the value at a dotted path of STATE.md's front matter")
    p.add_argument("path", metavar="PATH", help="dotted path, e.g. position.task or phases.0.status")

    p = cli.add("set", cmd_set, "set fields of STATE.md (all pairs in one transaction)")
    p.add_argument("pairs", nargs="+", metavar="PATH VALUE", help="dotted path and value (see docs/cli.md, Values)")

    p = cli.add("append", cmd_append, "append an item to a list field")
    p.add_argument("path", metavar="PATH", help="dotted path of a list, e.g. resume_context.files_modified")
    p.add_argument("value", metavar="VALUE", help="the item (see docs/cli.md, Values)")

    p = cli.add("unset", cmd_unset, "remove an optional field or a list item")
    p.add_argument("path", metavar="PATH", help="dotted path, e.g. position.wave")

    cli.add("validate", cmd_validate, "validate every file of the workspace")

    p = cli.add("schema", cmd_schema, "print the JSON Schema of a file kind")
    p.add_argument("name", nargs="?", choices=("state", "decision", "blocker", "session", "history"), help="file kind")
