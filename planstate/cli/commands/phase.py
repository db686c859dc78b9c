"""`planstate phase …`: start, complete, fail, retry or skip a phase; add, rename, remove or move one."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import out, reply, warn
from planstate.cli.parser import Registrar, completes, workspace
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add the `phase` group: start, complete, fail, retry, skip; add, rename, remove, move."""
    group = cli.group("phase", "start, complete, fail, retry or skip a phase; add, rename, remove or move one")
    for subcommand in (_start, _complete, _fail, _retry, _skip, _add, _rename, _remove, _move):
        subcommand(group)


def _start(group: Registrar) -> None:
    p = group.add("start", cmd_start, "start a pending phase (or the current one again after a reopen)")
    completes(p.add_argument("number", type=int, metavar="N", help="the phase number"), "phase")


def cmd_start(args: argparse.Namespace) -> int:
    """Start a phase."""
    return print_phase(args, workspace(args).phase.start(args.number))


def _complete(group: Registrar) -> None:
    p = group.add(
        "complete",
        cmd_complete,
        "complete the current phase; the last one completes the initiative",
        examples=[
            "planstate phase complete 2 --evidence tests=41/41 --evidence review=approved",
            'planstate phase complete 2 --next "Start the OAuth phase with the Google provider"',
        ],
    )
    completes(
        p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)"), "phase"
    )
    p.add_argument(
        "--checkpoint",
        choices=("passed", "failed"),
        default="passed",
        help="the checkpoint result (default passed; failed keeps the phase active to retry)",
    )
    p.add_argument(
        "--evidence",
        action="append",
        metavar="KEY=VALUE",
        help="evidence for the checkpoint, e.g. tests=42/45 (repeat; values read as YAML scalars)",
    )
    p.add_argument(
        "--next",
        dest="next_action",
        metavar="TEXT",
        help="the next action, set in the same write (else one someone wrote stays, with a warning)",
    )


def cmd_complete(args: argparse.Namespace) -> int:
    """Complete the current phase with its checkpoint result and evidence."""
    from planstate.ops.phaserules import parse_pairs

    evidence = parse_pairs(args.evidence or [])
    result = workspace(args).phase.complete(
        args.number, checkpoint=args.checkpoint, evidence=evidence, next_action=args.next_action
    )
    return print_phase(args, result)


def _fail(group: Registrar) -> None:
    p = group.add(
        "fail",
        cmd_fail,
        "mark the current phase failed",
        examples=["planstate phase fail 2 --reason 'integration tests flaky on CI'"],
    )
    completes(
        p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)"), "phase"
    )
    p.add_argument("--reason", required=True, metavar="R", help="why it failed")


def cmd_fail(args: argparse.Namespace) -> int:
    """Mark the current phase failed."""
    return print_phase(args, workspace(args).phase.fail(args.number, reason=args.reason))


def _retry(group: Registrar) -> None:
    p = group.add("retry", cmd_retry, "start the current phase again after it or its checkpoint failed")
    completes(
        p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)"), "phase"
    )


def cmd_retry(args: argparse.Namespace) -> int:
    """Start a failed phase again."""
    return print_phase(args, workspace(args).phase.retry(args.number))


def _skip(group: Registrar) -> None:
    p = group.add("skip", cmd_skip, "skip the current phase and move on")
    completes(
        p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)"), "phase"
    )
    p.add_argument("--reason", metavar="R", help="why it is skipped")


def cmd_skip(args: argparse.Namespace) -> int:
    """Skip the current phase and move on."""
    return print_phase(args, workspace(args).phase.skip(args.number, reason=args.reason))


def _add(group: Registrar) -> None:
    p = group.add(
        "add",
        cmd_add,
        "add a pending phase (at the end, or after or before phase N); later phases are renumbered",
        examples=["planstate phase add 'Security review' --before 3", "planstate phase add Deploy"],
    )
    p.add_argument("name", metavar="NAME", help="the new phase's name")
    where = p.add_mutually_exclusive_group()
    completes(where.add_argument("--after", type=int, metavar="N", help="put it right after phase N"), "phase")
    completes(where.add_argument("--before", type=int, metavar="N", help="put it right before phase N"), "phase")


def cmd_add(args: argparse.Namespace) -> int:
    """Add a phase."""
    return print_structure(args, workspace(args).phase.add(args.name, after=args.after, before=args.before))


def _rename(group: Registrar) -> None:
    p = group.add(
        "rename",
        cmd_rename,
        "rename a phase (blockers that name it by name follow)",
        examples=["planstate phase rename 2 'Build the API'"],
    )
    completes(p.add_argument("number", type=int, metavar="N", help="the phase number"), "phase")
    p.add_argument("name", metavar="NAME", help="its new name")


def cmd_rename(args: argparse.Namespace) -> int:
    """Rename a phase."""
    return print_structure(args, workspace(args).phase.rename(args.number, args.name))


def _remove(group: Registrar) -> None:
    p = group.add("remove", cmd_remove, "remove a pending phase (not the current one); later phases are renumbered")
    completes(p.add_argument("number", type=int, metavar="N", help="the phase number"), "phase")


def cmd_remove(args: argparse.Namespace) -> int:
    """Remove a pending phase."""
    return print_structure(args, workspace(args).phase.remove(args.number))


def _move(group: Registrar) -> None:
    p = group.add(
        "move",
        cmd_move,
        "move a pending phase to another place; the phases between are renumbered",
        examples=["planstate phase move 5 --to 3"],
    )
    completes(p.add_argument("number", type=int, metavar="N", help="the phase number"), "phase")
    completes(p.add_argument("--to", type=int, required=True, metavar="M", help="the number it gets"), "phase")


def cmd_move(args: argparse.Namespace) -> int:
    """Move a pending phase."""
    return print_structure(args, workspace(args).phase.move(args.number, to=args.to))


def print_structure(args: argparse.Namespace, result: Any) -> int:
    """Print what a structure command did: one line (warnings on stderr), or the result as JSON."""
    if args.json:
        reply(result.to_dict())
    else:
        out(structure_line(result))
    for line in result.warnings:
        warn(line)
    return EXIT_OK


def structure_line(r: Any) -> str:
    """One line saying what a structure command did (a StructureResult)."""
    if not r.changed:
        return f"phase {r.phase} ({r.name}): nothing changed"
    text = {
        "add": f"phase {r.phase} ({r.name}) added ({r.phases_total} phases)",
        "rename": f"phase {r.phase} renamed: {r.from_name} → {r.name}",
        "remove": f"phase {r.from_phase} ({r.name}) removed ({r.phases_total} phases)",
        "move": f"phase {r.from_phase} ({r.name}) moved to {r.phase}",
    }[r.action]
    if r.renumbered:
        text += "; renumbered " + ", ".join(f"{item[0]} → {item[1]}" for item in r.renumbered)
    if r.references:
        text += "; updated " + ", ".join(r.references)
    if r.initiative_completed:
        text += f"; initiative {r.initiative} completed"
    return text


def print_phase(args: argparse.Namespace, result: Any) -> int:
    """Print what a phase command did: one line (warnings on stderr), or the result as JSON."""
    if args.json:
        reply(result.to_dict())
    else:
        if result.auto_resumed:
            out(f"{result.initiative}: suspended → active (auto-resume: work went on)")
        out(phase_line(result))
    for line in result.warnings:
        warn(line)
    return EXIT_OK


def phase_line(r: Any) -> str:
    """One line saying what a phase command did (a PhaseResult)."""
    head = f"phase {r.phase} ({r.name}): "
    if r.action == "complete" and r.checkpoint == "failed":
        return head + f"checkpoint failed; the phase stays active (`planstate phase retry {r.phase}` starts it again)"
    if r.action == "retry" and r.previous == "active":
        return head + f"retrying after a failed checkpoint (attempt {r.attempts})"
    text = head + f"{r.previous} → {r.status}"
    if r.action == "complete":
        from planstate.core.durations import show

        took = f" in {show(r.duration_seconds)}" if r.duration_seconds is not None else ""
        text += f"{took}, checkpoint passed"
    if r.action in ("start", "retry"):
        text += f" (attempt {r.attempts})"
    if r.action == "fail" and r.failure:
        text += f" ({r.failure})"
    if r.action in ("complete", "skip"):
        if r.next_phase is not None:
            text += f"; phase {r.next_phase} ({r.next_phase_name}) started"
        elif r.initiative_completed:
            text += f"; initiative {r.initiative} completed"
        elif r.unfinished:
            text += f"; still unfinished: phase {', '.join(str(n) for n in r.unfinished)}"
    return text
