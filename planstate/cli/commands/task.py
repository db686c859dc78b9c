"""`planstate task start|done`: start and finish tasks of the current phase."""

from __future__ import annotations

import argparse

from planstate.cli.parser import Registrar, workspace
from planstate.cli.results import print_edited


def register(cli: Registrar) -> None:
    """Add the `task` group: start, done."""
    group = cli.group("task", "start and finish tasks of the current phase")
    for subcommand in (_start, _done):
        subcommand(group)


def _start(group: Registrar) -> None:
    p = group.add(
        "start",
        cmd_start,
        "start a task: position.task, status in_progress",
        examples=["planstate task start 'Add the users table' --plan 1"],
    )
    p.add_argument("text", metavar="TEXT", help="the task")
    p.add_argument("--plan", metavar="P", help="the plan it belongs to (a number or a name)")
    p.add_argument("--wave", metavar="W", help="the wave it belongs to")


def cmd_start(args: argparse.Namespace) -> int:
    """Start a task."""
    from planstate.ops.position import parse_plan, parse_whole

    plan = parse_plan(args.plan) if args.plan is not None else None
    wave = parse_whole(args.wave, "position.wave") if args.wave is not None else None
    return print_edited(args, workspace(args).task.start(args.text, plan=plan, wave=wave))


def _done(group: Registrar) -> None:
    p = group.add("done", cmd_done, "finish the task in progress and count it in progress")
    p.add_argument("--next", metavar="TEXT", help="start this task next")


def cmd_done(args: argparse.Namespace) -> int:
    """Finish the task in progress."""
    return print_edited(args, workspace(args).task.done(next=args.next))
