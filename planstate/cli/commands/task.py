"""`planstate task start|done|add|list`: the single worker's task of the current phase, and task records."""

from __future__ import annotations

import argparse

from planstate.cli.parser import Registrar, completes, workspace
from planstate.cli.results import print_edited, print_entry, print_listing


def register(cli: Registrar) -> None:
    """Add the `task` group: start, done, add, list."""
    group = cli.group("task", "start and finish tasks of the current phase; add and list task records")
    for subcommand in (_start, _done, _add, _list):
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


def _add(group: Registrar) -> None:
    p = group.add(
        "add",
        cmd_add,
        "add a task record in a new file (tasks/), pending until the tasks it comes after are done",
        examples=[
            "planstate task add 'Add the users table' --phase 1",
            "planstate task add 'Seed the users' --after tsk-1nh2",
        ],
    )
    p.add_argument("title", metavar="TITLE", help="what is to be done")
    completes(p.add_argument("--phase", type=int, metavar="N", help="the phase it belongs to"), "phase")
    completes(
        p.add_argument(
            "--after", action="append", metavar="ID", help="a task to be done first (id or unique prefix); repeat"
        ),
        "task",
    )
    p.add_argument("--wave", type=int, metavar="N", help="the wave of parallel work it belongs to (lower is sooner)")


def cmd_add(args: argparse.Namespace) -> int:
    """Add a task record."""
    entry = workspace(args).task.add(args.title, phase=args.phase, after=args.after or [], wave=args.wave)
    return print_entry(args, entry, entry.id)


def _list(group: Registrar) -> None:
    p = group.add("list", cmd_list, "list task records, oldest first (done and dropped ones only with --all)")
    p.add_argument("--all", action="store_true", help="include done and dropped tasks")
    p.add_argument("--status", metavar="S", help="only tasks with this status (pending, in_progress, done, dropped)")
    completes(p.add_argument("--phase", type=int, metavar="N", help="only tasks of this phase"), "phase")


def cmd_list(args: argparse.Namespace) -> int:
    """List task records."""
    listing = workspace(args).task.list(all=args.all, status=args.status, phase=args.phase)
    hidden = "" if args.all or args.status else " (done and dropped ones are hidden; --all shows them)"
    return print_listing(args, listing, ["status", "phase", "wave", "title"], f"no tasks{hidden}")
