"""`planstate init`: create .planning/ with STATE.md, the record folders and a .gitignore."""

from __future__ import annotations

import argparse

from planstate.cli.output import out, reply, warn
from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK


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
    import os

    from planstate.core.files import absolute
    from planstate.core.layout import PLANNING
    from planstate.store.context import nearest
    from planstate.workspace import Workspace

    project = absolute(getattr(args, "dir", None) or os.environ.get("PLANSTATE_DIR") or ".")
    if project.name == PLANNING:  # --dir names the workspace itself, not its project
        project = project.parent
    above = nearest(project.parent)  # a workspace this project sits inside: commands here would stop finding it
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
    warnings = []
    if above is not None:
        warnings.append(
            f"{above} is a workspace this folder is inside; commands run here now act on the new one "
            f"(to plan more work in {above} instead, remove {ws.root} and run `planstate initiative new SLUG` there)"
        )
    if args.json:
        reply({"path": ws.ctx.display(ws.root) + "/", "initiative": state.initiative, "title": state.title})
    else:
        out(f"Created {ws.ctx.display(ws.root)}/ for {state.title!r} (initiative {state.initiative}).")
        out("Next: `planstate status` shows where it stands; `planstate set PATH VALUE` changes it.")
    for warning in warnings:
        warn(warning)
    return EXIT_OK
