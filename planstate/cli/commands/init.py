"""`planstate init`: create .planning/ with STATE.md, the record folders and a .gitignore."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from planstate.cli.output import out, reply, warn
from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK

if TYPE_CHECKING:
    from planstate.workspace import Workspace


def register(cli: Registrar) -> None:
    """Add `init`."""
    p = cli.add(
        "init",
        cmd_init,
        "create .planning/ with STATE.md, decisions/, blockers/, sessions/ (--initiative names its id)",
    )
    p.add_argument("--title", help="title of the initiative (default: the folder name)")
    p.add_argument("--phase", action="append", metavar="NAME", help="a phase name; repeat in order")
    p.add_argument("--first-phase", type=int, choices=(0, 1), default=1, help="number of the first phase (0 or 1)")
    p.add_argument("--next", metavar="TEXT", help="the first next action")


def cmd_init(args: argparse.Namespace) -> int:
    """Create .planning/ with STATE.md, record folders and a .gitignore."""
    _ws, data, warnings = create(
        getattr(args, "dir", None),
        title=args.title,
        phases=args.phase or [],
        first_phase=args.first_phase,
        initiative=getattr(args, "initiative", None),  # for init, --initiative names the new one
        actor=getattr(args, "by", None),
        next_action=args.next,
    )
    if args.json:
        reply(data)
    else:
        out(f"Created {data['path']} for {data['title']!r} (initiative {data['initiative']}).")
        out("Next: `planstate status` shows where it stands; `planstate set PATH VALUE` changes it.")
    for warning in warnings:
        warn(warning)
    return EXIT_OK


def create(
    given: str | None,
    *,
    title: str | None,
    phases: list[str],
    first_phase: int,
    initiative: str | None,
    actor: str | None,
    next_action: str | None,
) -> tuple[Workspace, dict[str, Any], list[str]]:
    """`init` in the project `given` (else PLANSTATE_DIR, else the current folder): the new workspace, what
    `--json` answers, and the warnings (the MCP server's `initiative` tool with `action: init` too)."""
    import os

    from planstate.core.files import absolute
    from planstate.core.layout import PLANNING
    from planstate.store.context import nearest
    from planstate.workspace import Workspace

    project = absolute(given or os.environ.get("PLANSTATE_DIR") or ".")
    if project.name == PLANNING:  # --dir names the workspace itself, not its project
        project = project.parent
    above = nearest(project.parent)  # a workspace this project sits inside: commands here would stop finding it
    ws = Workspace.init(
        project,
        title=title,
        phases=phases,
        first_phase=first_phase,
        initiative=initiative,
        actor=actor,
        next_action=next_action,
    )
    state = ws.state()
    warnings = []
    if above is not None:
        warnings.append(
            f"{above} is a workspace this folder is inside; commands run here now act on the new one "
            f"(to plan more work in {above} instead, remove {ws.root} and run `planstate initiative new SLUG` there)"
        )
    data = {"path": ws.ctx.display(ws.root) + "/", "initiative": state.initiative, "title": state.title}
    return ws, data, warnings
