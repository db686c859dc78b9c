"""`planstate session …`: work sessions of agents and people, with heartbeats, and reaping the stale ones."""

from __future__ import annotations

import argparse
import shlex

from planstate.cli.output import err, out, reply, warn
from planstate.cli.parser import Registrar, completes, option_error, workspace
from planstate.cli.results import add_limit, print_entry, print_listing, print_record
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add the `session` group: start, heartbeat, end, list, show, reap."""
    group = cli.group("session", "work sessions of agents and people, with heartbeats")
    for subcommand in (_start, _heartbeat, _end, _list, _show, _reap):
        subcommand(group)


def _start(group: Registrar) -> None:
    p = group.add(
        "start",
        cmd_start,
        "start a session (warns if another is active)",
        examples=[
            "planstate session start --agent claude-code",
            "planstate session start --agent claude-code --export",
            "planstate session start --json",
        ],
    )
    p.add_argument(
        "--agent", help="who works (default: who acts: --by, PLANSTATE_ACTOR, git's user.name or the OS account)"
    )
    p.add_argument("--working-on", metavar="TEXT", help="what the session works on")
    p.add_argument("--exclusive", action="store_true", help="refuse to start while another session is active")
    p.add_argument(
        "--export",
        action="store_true",
        help="print only `export PLANSTATE_SESSION=ID` on stdout, for the shell to eval (the rest goes to stderr)",
    )


def cmd_start(args: argparse.Namespace) -> int:
    """Start a session."""
    if args.export and args.json:
        option_error(args, "--export prints a line for the shell to eval; leave out --json")
    entry = workspace(args).session.start(agent=args.agent, working_on=args.working_on, exclusive=args.exclusive)
    resumed = entry.data.get("resumed_from")
    text = f"Started session {entry.id} of {entry.data['agent']} ({entry.shown})"
    if resumed:
        text += f", resuming from {resumed}"
    export = f"export PLANSTATE_SESSION={shlex.quote(entry.id)}"
    if not args.export:
        return print_entry(args, entry, f"{text}\n{export}")
    err(text)  # seen in the terminal, not evaluated by the shell
    return print_entry(args, entry, export)


def _heartbeat(group: Registrar) -> None:
    p = group.add("heartbeat", cmd_heartbeat, "mark a session alive (touches a machine-local file)")
    completes(
        p.add_argument(
            "--session", metavar="ID", help="the session (default: $PLANSTATE_SESSION, else the active one)"
        ),
        "session",
    )


def cmd_heartbeat(args: argparse.Namespace) -> int:
    """Record that a session is alive."""
    from planstate.text.yamltext import format_datetime

    beat = workspace(args).session.heartbeat(args.session)
    if args.json:
        reply(beat.to_dict())
    else:
        out(f"Session {beat.id} alive at {format_datetime(beat.at)}")
    return EXIT_OK


def _end(group: Registrar) -> None:
    p = group.add("end", cmd_end, "end a session")
    completes(
        p.add_argument(
            "--session", metavar="ID", help="the session (default: $PLANSTATE_SESSION, else the active one)"
        ),
        "session",
    )
    p.add_argument("--completed", action="append", metavar="X", help="something completed; repeat")
    p.add_argument("--issue", action="append", metavar="X", help="an issue met; repeat")
    p.add_argument("--handoff-reason", metavar="R", help="why work is handed off")
    p.add_argument("--notes", metavar="N", help="free notes")
    p.add_argument("--context-usage", metavar="U", help="how much of the agent's context was used, e.g. 62%%")


def cmd_end(args: argparse.Namespace) -> int:
    """End a session."""
    entry = workspace(args).session.end(
        args.session,
        completed=args.completed or [],
        issues=args.issue or [],
        handoff_reason=args.handoff_reason,
        notes=args.notes,
        context_usage=args.context_usage,
    )
    return print_entry(args, entry, f"Ended session {entry.id} ({entry.shown})")


def _list(group: Registrar) -> None:
    p = group.add("list", cmd_list, "list sessions")
    p.add_argument("--status", metavar="S", help="only sessions with this status (active, ended, crashed)")
    p.add_argument("--since", metavar="WHEN", help="only sessions started on or after a date, or within a duration")
    p.add_argument("--all", action="store_true", help="include archived sessions")
    add_limit(p, "sessions")


def cmd_list(args: argparse.Namespace) -> int:
    """List sessions."""
    listing = workspace(args).session.list(status=args.status, since=args.since, all=args.all, limit=args.limit)
    return print_listing(args, listing, ["status", "agent", "started", "ended"], "no sessions")


def _show(group: Registrar) -> None:
    p = group.add("show", cmd_show, "show one session")
    completes(p.add_argument("id", metavar="ID", help="session id or a unique prefix of it"), "session")


def cmd_show(args: argparse.Namespace) -> int:
    """Show one session."""
    entry = workspace(args).session.show(args.id)
    note = ""
    if entry.data.get("status") == "active":
        note = f" (last heartbeat on this machine: {entry.extra.get('heartbeat') or 'none'})"
    return print_record(args, entry, note)


def _reap(group: Registrar) -> None:
    p = group.add("reap", cmd_reap, "mark stale sessions crashed; with --abandon-after, idle initiatives")
    p.add_argument(
        "--stale-after", default="30m", metavar="DURATION", help="no heartbeat for this long means crashed (30m)"
    )
    p.add_argument("--abandon-after", metavar="DURATION", help="move active initiatives idle this long to abandoned")
    p.add_argument("--dry-run", action="store_true", help="say what would be done, write nothing")


def cmd_reap(args: argparse.Namespace) -> int:
    """Mark stale sessions crashed and idle initiatives abandoned."""
    from planstate.text.yamltext import format_datetime

    result = workspace(args).session.reap(
        stale_after=args.stale_after, abandon_after=args.abandon_after, dry_run=args.dry_run
    )
    for problem in result.problems:
        warn(f"skipped {problem}")
    if args.json:
        reply(result.to_dict())
        return EXIT_OK
    would = "would mark" if result.dry_run else "marked"
    for crash in result.crashed:
        seen = "last heartbeat" if crash.heartbeat else "started"
        out(f"{would} session {crash.id} of {crash.agent} crashed ({seen} {format_datetime(crash.last_seen)})")
    for gone in result.abandoned:
        last = format_datetime(gone.last_activity) if gone.last_activity else "never"
        out(f"{would} initiative {gone.initiative} abandoned (last activity {last})")
    if not result:
        out("nothing to reap")
    return EXIT_OK
