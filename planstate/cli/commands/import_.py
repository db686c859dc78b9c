"""`planstate import`: bring another tool's plans (GSD, Backlog.md, workflow session files) into the workspace."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK

if TYPE_CHECKING:
    from planstate.interop.write import Imported

SOURCES = ("gsd", "backlog", "workflow")


def register(cli: Registrar) -> None:
    """Add `import`."""
    p = cli.add(
        "import",
        cmd_import,
        "import plans from GSD, Backlog.md or workflow session files (prints the plan, then writes)",
        examples=["planstate import gsd ../old/.planning --dry-run", "planstate import backlog backlog/"],
    )
    p.add_argument("source", choices=SOURCES, help="the tool the files come from")
    p.add_argument("path", help="the folder to import: GSD's .planning/, Backlog.md's backlog/, or .workflow/")
    p.add_argument("--dry-run", action="store_true", help="print the plan and what is not mapped; write nothing")


def cmd_import(args: argparse.Namespace) -> int:
    """Print the plan and the report of what is not mapped, then import (unless --dry-run)."""
    from planstate.cli.parser import workspace
    from planstate.workspace import Workspace

    show = None if args.json else _show_plan
    project = _new_workspace_folder(args)
    if project is not None:  # no workspace yet: the import makes one, as `init` does, here or in --dir
        by = getattr(args, "by", None)
        result = Workspace.init_from(project, args.source, args.path, actor=by, dry_run=args.dry_run, on_plan=show)
    else:
        result = workspace(args).import_from(args.source, args.path, dry_run=args.dry_run, on_plan=show)
    if args.json:
        reply(result.to_dict())
        return EXIT_OK
    counts = result.counts()
    done = ("would create", "would update") if args.dry_run else ("created", "updated")
    out(f"{counts['create']} {done[0]}, {counts['update']} {done[1]}, {counts['unchanged']} unchanged")
    if result.unmapped:
        out(f"Not mapped ({len(result.unmapped)}):")
        for item in result.unmapped:
            out(f"  {item.path}: {item.what}: {item.why}")
    return EXIT_OK


def _show_plan(plan: Imported) -> None:
    """Print what the import will do, before it does it."""
    import sys

    out(f"Import from {plan.source} ({plan.path}){': dry run, nothing written' if plan.dry_run else ''}")
    for action in plan.actions:
        if action.action != "unchanged":
            out(f"  {action.line()}")
    sys.stdout.flush()  # seen before the writes, even when stdout is a pipe


def _new_workspace_folder(args: argparse.Namespace) -> Path | None:
    """The project folder to create `.planning/` in, when the import finds no workspace: `--dir` (or PLANSTATE_DIR)
    naming a folder that is not a workspace and is not in one, or the current folder when neither it nor a
    parent has one. None: a workspace is there to import into."""
    import os

    from planstate.core.files import absolute
    from planstate.core.layout import PLANNING
    from planstate.store.context import nearest

    given = getattr(args, "dir", None) or os.environ.get("PLANSTATE_DIR") or None
    folder = absolute(given or ".")
    if folder.name == PLANNING or (given is not None and not folder.is_dir()):
        return None  # a workspace named outright, or a folder that is not there: finding it says what is wrong
    if given is not None and not (folder / PLANNING).is_dir() and PLANNING not in folder.resolve().parts:
        return folder
    return folder if given is None and nearest(folder) is None else None
