"""`planstate position`: show the position, or set any of phase, plan, task, wave, status and step."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.parser import Registrar, completes, workspace
from planstate.cli.results import print_edited, print_value


def register(cli: Registrar) -> None:
    """Add `position`."""
    from planstate.model.kinds import TASK_STATUSES

    p = cli.add("position", cmd_position, "show or set the position: phase, plan, task, wave, status, step")
    completes(
        p.add_argument("--phase", type=int, metavar="N", help="the current phase (a valid phase number)"), "phase"
    )
    p.add_argument("--plan", metavar="P", help="the current plan (a number or a name; empty clears)")
    p.add_argument("--plan-name", dest="plan_name", metavar="TEXT", help="the name of the plan (empty clears)")
    p.add_argument("--task", metavar="TEXT", help="the task being worked on (empty clears)")
    p.add_argument("--wave", metavar="W", help="the wave of parallel work, a whole number (empty clears)")
    p.add_argument("--status", choices=TASK_STATUSES, help="the status of the task")
    p.add_argument("--step", metavar="TEXT", help="the sub-phase step (empty clears)")


def cmd_position(args: argparse.Namespace) -> int:
    """Show or set the position."""
    from planstate.ops.position import parse_plan, parse_whole

    given: dict[str, Any] = {}
    if args.phase is not None:
        given["phase"] = args.phase
    if args.plan is not None:
        given["plan"] = parse_plan(args.plan)
    if args.wave is not None:
        given["wave"] = parse_whole(args.wave, "position.wave")
    for name in ("plan_name", "task", "status", "step"):
        value = getattr(args, name)
        if value is not None:
            given[name] = value if value.strip() or name == "status" else None
    ws = workspace(args)
    if not given:
        return print_value(args, ws.get("position"))
    return print_edited(args, ws.position(**given))
