"""`planstate ready [--phase N]`: the tasks to take next, in order."""

from __future__ import annotations

import argparse

from planstate.cli.output import out, reply, warn
from planstate.cli.parser import Registrar, completes, workspace
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add `ready`."""
    p = cli.add(
        "ready",
        cmd_ready,
        "list the tasks ready to take: pending, their dependencies done, no blocker on them; by wave, then age",
        examples=["planstate ready", "planstate ready --phase 2 --json"],
    )
    completes(p.add_argument("--phase", type=int, metavar="N", help="only tasks of this phase"), "phase")


def cmd_ready(args: argparse.Namespace) -> int:
    """List the ready tasks."""
    queue = workspace(args).ready(phase=args.phase)
    for line in queue.warnings():
        warn(line)
    if args.json:
        reply(queue.to_dict())
        return EXIT_OK
    if not queue.items:
        out("no task is ready")
    for entry in queue.items:
        wave = entry.data.get("wave")
        phase = entry.data.get("phase")
        cells = [entry.id, f"phase {phase}" if phase is not None else "-", f"wave {wave}" if wave is not None else "-"]
        out("  ".join([*cells, str(entry.data.get("title"))]))
    return EXIT_OK
