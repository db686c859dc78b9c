"""Work-flow commands: phase {start,complete,fail,retry,skip}, position, next, context, task {start,done}."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import out, print_json, warn
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_OK

# ---------------------------------------------------------------------------- output


def print_phase(args: argparse.Namespace, result: Any) -> int:
    """Print what a phase command did: one line (warnings on stderr), or the result as JSON."""
    if args.json:
        print_json(result.to_dict())
    else:
        if result.auto_resumed:
            out(f"{result.initiative}: suspended → active (auto-resume: work went on)")
        out(phase_line(result))
    for line in result.warnings:  # after the result, so `--json` stdout stays one document
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


def print_edited(args: argparse.Namespace, result: Any) -> int:
    """Print the fields an edit changed (`FILE: PATH: OLD → NEW`), or the result as JSON."""
    from planstate.cli.display import short

    if args.json:
        print_json(result.to_dict())
        return EXIT_OK
    if not result.changes:
        out(f"{result.file}: no change")
    for change in result.changes:
        out(f"{result.file}: {change.path}: {short(change.old)} → {short(change.new)}")
    return EXIT_OK


def print_value(args: argparse.Namespace, path: str) -> int:
    """Print one value of STATE.md, as `planstate get PATH` does."""
    from planstate.cli.display import dump_json, value_text

    value = workspace(args).get(path)
    out(dump_json(value) if args.json else value_text(value))
    return EXIT_OK


# ---------------------------------------------------------------------------- phase


def cmd_phase_start(args: argparse.Namespace) -> int:
    """Start a phase."""
    return print_phase(args, workspace(args).phase.start(args.number))


def cmd_phase_complete(args: argparse.Namespace) -> int:
    """Complete the current phase with its checkpoint result and evidence."""
    from planstate.ops.phases import parse_pairs

    evidence = parse_pairs(args.evidence or [])
    result = workspace(args).phase.complete(args.number, checkpoint=args.checkpoint, evidence=evidence)
    return print_phase(args, result)


def cmd_phase_fail(args: argparse.Namespace) -> int:
    """Mark the current phase failed."""
    return print_phase(args, workspace(args).phase.fail(args.number, reason=args.reason))


def cmd_phase_retry(args: argparse.Namespace) -> int:
    """Start a failed phase again."""
    return print_phase(args, workspace(args).phase.retry(args.number))


def cmd_phase_skip(args: argparse.Namespace) -> int:
    """Skip the current phase and move on."""
    return print_phase(args, workspace(args).phase.skip(args.number, reason=args.reason))


# ---------------------------------------------------------------------------- position, next, context


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
    if not given:
        return print_value(args, "position")
    return print_edited(args, workspace(args).position(**given))


def cmd_next(args: argparse.Namespace) -> int:
    """Show or set the next action."""
    if args.text is None:
        return print_value(args, "next_action")
    return print_edited(args, workspace(args).next(args.text))


def cmd_context(args: argparse.Namespace) -> int:
    """Show or change the resume context."""
    lists = (args.file, args.implementation, args.question, args.answered)
    clears = (args.clear_files, args.clear_implementations, args.clear_questions)
    if not any(lists) and not any(clears):
        return print_value(args, "resume_context")
    result = workspace(args).context(
        files=args.file or [],
        implementations=args.implementation or [],
        questions=args.question or [],
        answered=args.answered or [],
        clear_files=args.clear_files,
        clear_implementations=args.clear_implementations,
        clear_questions=args.clear_questions,
    )
    return print_edited(args, result)


# ---------------------------------------------------------------------------- task


def cmd_task_start(args: argparse.Namespace) -> int:
    """Start a task."""
    from planstate.ops.position import parse_plan, parse_whole

    plan = parse_plan(args.plan) if args.plan is not None else None
    wave = parse_whole(args.wave, "position.wave") if args.wave is not None else None
    return print_edited(args, workspace(args).task.start(args.text, plan=plan, wave=wave))


def cmd_task_done(args: argparse.Namespace) -> int:
    """Finish the task in progress."""
    return print_edited(args, workspace(args).task.done(next=args.next))


def register(cli: Registrar) -> None:
    """Add the phase, position, next, context and task commands."""
    from planstate.model.kinds import TASK_STATUSES

    phase = cli.group("phase", "start, complete, fail, retry or skip a phase")
    p = phase.add("start", cmd_phase_start, "start a pending phase (or the current one again after a reopen)")
    p.add_argument("number", type=int, metavar="N", help="the phase number")
    p = phase.add("complete", cmd_phase_complete, "complete the current phase; the last one completes the initiative")
    p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)")
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
    p = phase.add("fail", cmd_phase_fail, "mark the current phase failed")
    p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)")
    p.add_argument("--reason", required=True, metavar="R", help="why it failed")
    p = phase.add("retry", cmd_phase_retry, "start the current phase again after it or its checkpoint failed")
    p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)")
    p = phase.add("skip", cmd_phase_skip, "skip the current phase and move on")
    p.add_argument("number", type=int, metavar="N", help="the phase number (must be the current phase)")
    p.add_argument("--reason", metavar="R", help="why it is skipped")

    p = cli.add("position", cmd_position, "show or set the position: phase, plan, task, wave, status, step")
    p.add_argument("--phase", type=int, metavar="N", help="the current phase (a valid phase number)")
    p.add_argument("--plan", metavar="P", help="the current plan (a number or a name; empty clears)")
    p.add_argument("--plan-name", dest="plan_name", metavar="TEXT", help="the name of the plan (empty clears)")
    p.add_argument("--task", metavar="TEXT", help="the task being worked on (empty clears)")
    p.add_argument("--wave", metavar="W", help="the wave of parallel work, a whole number (empty clears)")
    p.add_argument("--status", choices=TASK_STATUSES, help="the status of the task")
    p.add_argument("--step", metavar="TEXT", help="the sub-phase step (empty clears)")

    p = cli.add("next", cmd_next, "show or set the next action")
    p.add_argument("text", nargs="?", metavar="TEXT", help="what to do next (several lines are kept)")

    p = cli.add("context", cmd_context, "show or change the resume context: files, implementations, questions")
    p.add_argument("--file", action="append", metavar="PATH", help="a file modified (repeat)")
    p.add_argument("--implementation", action="append", metavar="TEXT", help="a key implementation (repeat)")
    p.add_argument("--question", action="append", metavar="TEXT", help="an open question (repeat)")
    p.add_argument("--answered", action="append", metavar="TEXT", help="an open question now answered (repeat)")
    p.add_argument("--clear-files", action="store_true", help="empty files_modified first")
    p.add_argument("--clear-implementations", action="store_true", help="empty key_implementations first")
    p.add_argument("--clear-questions", action="store_true", help="empty open_questions first")

    task = cli.group("task", "start and finish tasks of the current phase")
    p = task.add("start", cmd_task_start, "start a task: position.task, status in_progress")
    p.add_argument("text", metavar="TEXT", help="the task")
    p.add_argument("--plan", metavar="P", help="the plan it belongs to (a number or a name)")
    p.add_argument("--wave", metavar="W", help="the wave it belongs to")
    p = task.add("done", cmd_task_done, "finish the task in progress and count it in progress")
    p.add_argument("--next", metavar="TEXT", help="start this task next")
