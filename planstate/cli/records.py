"""Record commands: `planstate decision …`, `planstate blocker …`, `planstate session …`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from planstate.cli.output import out, print_json, warn
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_OK

if TYPE_CHECKING:
    from planstate.ops.records import Entry, Listing


# ---------------------------------------------------------------------------- output


def _done(args: argparse.Namespace, entry: Entry, text: str) -> int:
    """Print a written record: its warnings on stderr, then `text` (or the record as JSON)."""
    for line in entry.warnings:
        warn(line)
    if args.json:
        print_json(entry.to_dict())
    else:
        out(text)
    return EXIT_OK


def _listing(args: argparse.Namespace, listing: Listing, columns: list[str], empty: str) -> int:
    """Print a list: unreadable files as warnings, then one line per record (or a JSON list)."""
    for problem in listing.problems:
        warn(f"skipped {problem}")
    for problem in listing.invalid:
        warn(f"listed as it is, but it does not validate: {problem}")
    if args.json:
        print_json(listing.to_list())
        return EXIT_OK
    if not listing:
        out(empty)
    for entry in listing:
        cells = [entry.id, *(_cell(entry.data.get(c)) for c in columns)]
        out("  ".join(cells))
    return EXIT_OK


def _cell(value: Any) -> str:
    from planstate.cli.display import short

    if value is None:
        return "-"
    return value if isinstance(value, str) else short(value, 40)


def _show(args: argparse.Namespace, entry: Entry, note: str = "") -> int:
    """Print one record: its path and `note`, then its file as it is on disk (or JSON with the body under `body`)."""
    if args.json:
        print_json(entry.to_dict())
        return EXIT_OK
    out(f"# {entry.shown}{note}")
    out(entry.path.read_text(encoding="utf-8", errors="replace"))
    return EXIT_OK


# ---------------------------------------------------------------------------- decisions


def cmd_decision_add(args: argparse.Namespace) -> int:
    """Record a decision."""
    entry = workspace(args).decision.add(
        context=args.context,
        decision=args.decision,
        reason=args.reason,
        alternatives=args.alternative or [],
        irreversible=args.irreversible,
        supersedes=args.supersedes,
        title=args.title,
        status="proposed" if args.proposed else "accepted",
        phase=args.phase,
    )
    text = f"Recorded decision {entry.id}: {entry.data['title']} ({entry.shown})"
    if entry.data.get("supersedes"):
        text += f"\nDecision {entry.data['supersedes']} is now superseded by {entry.id}."
    return _done(args, entry, text)


def cmd_decision_list(args: argparse.Namespace) -> int:
    """List decisions."""
    listing = workspace(args).decision.list(all=args.all, status=args.status, since=args.since)
    hidden = "" if args.all or args.status else " (superseded ones are hidden; --all shows them)"
    return _listing(args, listing, ["date", "status", "title"], f"no decisions{hidden}")


def cmd_decision_show(args: argparse.Namespace) -> int:
    """Show one decision."""
    return _show(args, workspace(args).decision.show(args.id))


def cmd_decision_supersede(args: argparse.Namespace) -> int:
    """Mark a decision superseded by another."""
    result = workspace(args).decision.supersede(args.id, by=args.new)
    if args.json:
        print_json(result.to_dict())
    else:
        out(f"Decision {result.old.id} is now superseded by {result.new.id} ({result.old.shown}).")
    return EXIT_OK


def cmd_decision_accept(args: argparse.Namespace) -> int:
    """Accept a proposed decision."""
    entry = workspace(args).decision.accept(args.id)
    return _done(args, entry, f"Decision {entry.id} is now accepted ({entry.shown})")


def cmd_decision_reject(args: argparse.Namespace) -> int:
    """Reject a proposed decision."""
    entry = workspace(args).decision.reject(args.id, reason=args.reason)
    return _done(args, entry, f"Decision {entry.id} is now rejected ({entry.shown})")


# ---------------------------------------------------------------------------- blockers


def cmd_blocker_add(args: argparse.Namespace) -> int:
    """Record a blocker."""
    entry = workspace(args).blocker.add(
        description=args.description,
        affects=args.affects or [],
        title=args.title,
        active=args.active,
        blocked_tasks=args.blocked_task or [],
    )
    text = f"Recorded blocker {entry.id} [{entry.data['status']}]: {entry.data['title']} ({entry.shown})"
    return _done(args, entry, text)


def cmd_blocker_list(args: argparse.Namespace) -> int:
    """List blockers."""
    listing = workspace(args).blocker.list(status=args.status, all=args.all, since=args.since)
    empty = "no blockers" if args.all or args.status else "no unresolved blockers (--all shows resolved ones too)"
    return _listing(args, listing, ["status", "identified", "title"], empty)


def cmd_blocker_show(args: argparse.Namespace) -> int:
    """Show one blocker."""
    return _show(args, workspace(args).blocker.show(args.id))


def _moved(args: argparse.Namespace, entry: Entry) -> int:
    return _done(args, entry, f"Blocker {entry.id} is now {entry.data['status']} ({entry.shown})")


def cmd_blocker_activate(args: argparse.Namespace) -> int:
    """Mark a blocker active."""
    return _moved(args, workspace(args).blocker.activate(args.id, reason=args.reason))


def cmd_blocker_bypass(args: argparse.Namespace) -> int:
    """Mark a blocker bypassed by a workaround."""
    return _moved(args, workspace(args).blocker.bypass(args.id, workaround=args.workaround))


def cmd_blocker_resolve(args: argparse.Namespace) -> int:
    """Mark a blocker resolved."""
    return _moved(args, workspace(args).blocker.resolve(args.id, resolution=args.resolution))


# ---------------------------------------------------------------------------- sessions


def cmd_session_start(args: argparse.Namespace) -> int:
    """Start a session."""
    entry = workspace(args).session.start(agent=args.agent, working_on=args.working_on, exclusive=args.exclusive)
    resumed = entry.data.get("resumed_from")
    text = f"Started session {entry.id} of {entry.data['agent']} ({entry.shown})"
    if resumed:
        text += f", resuming from {resumed}"
    return _done(args, entry, f"{text}\nexport PLANSTATE_SESSION={entry.id}")


def cmd_session_heartbeat(args: argparse.Namespace) -> int:
    """Record that a session is alive."""
    from planstate.text.yamltext import format_datetime

    beat = workspace(args).session.heartbeat(args.session)
    if args.json:
        print_json(beat.to_dict())
    else:
        out(f"Session {beat.id} alive at {format_datetime(beat.at)}")
    return EXIT_OK


def cmd_session_end(args: argparse.Namespace) -> int:
    """End a session."""
    entry = workspace(args).session.end(
        args.session,
        completed=args.completed or [],
        issues=args.issue or [],
        handoff_reason=args.handoff_reason,
        notes=args.notes,
        context_usage=args.context_usage,
    )
    return _done(args, entry, f"Ended session {entry.id} ({entry.shown})")


def cmd_session_list(args: argparse.Namespace) -> int:
    """List sessions."""
    listing = workspace(args).session.list(status=args.status, since=args.since)
    return _listing(args, listing, ["status", "agent", "started", "ended"], "no sessions")


def cmd_session_show(args: argparse.Namespace) -> int:
    """Show one session."""
    entry = workspace(args).session.show(args.id)
    note = ""
    if entry.data.get("status") == "active":
        note = f" (last heartbeat on this machine: {entry.extra.get('heartbeat') or 'none'})"
    return _show(args, entry, note)


def cmd_session_reap(args: argparse.Namespace) -> int:
    """Mark stale sessions crashed and idle initiatives abandoned."""
    from planstate.text.yamltext import format_datetime

    result = workspace(args).session.reap(
        stale_after=args.stale_after, abandon_after=args.abandon_after, dry_run=args.dry_run
    )
    for problem in result.problems:
        warn(f"skipped {problem}")
    if args.json:
        print_json(result.to_dict())
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


# ---------------------------------------------------------------------------- registration


def register(cli: Registrar) -> None:
    """Add the `decision`, `blocker` and `session` command groups."""
    decision = cli.group("decision", "record decisions, one file each in decisions/")
    p = decision.add("add", cmd_decision_add, "record a decision (never writes STATE.md)")
    p.add_argument("--context", required=True, help="where the decision was needed")
    p.add_argument("--decision", required=True, help="what was decided")
    p.add_argument("--reason", required=True, help="why this choice")
    p.add_argument("--alternative", action="append", metavar="TEXT", help="an alternative considered; repeat")
    p.add_argument("--irreversible", action="store_true", help="the decision cannot be undone cheaply")
    p.add_argument("--supersedes", metavar="ID", help="a decision this one replaces (marked superseded)")
    p.add_argument("--title", help="short title (default: the decision, shortened)")
    p.add_argument("--proposed", action="store_true", help="record it as proposed, not yet accepted")
    p.add_argument("--phase", type=int, metavar="N", help="phase it belongs to (default: position.phase)")

    p = decision.add("list", cmd_decision_list, "list decisions (superseded ones only with --all)")
    p.add_argument("--all", action="store_true", help="include superseded decisions")
    p.add_argument("--status", metavar="S", help="only decisions with this status")
    p.add_argument("--since", metavar="WHEN", help="only decisions dated on or after a date, or within a duration")

    p = decision.add("show", cmd_decision_show, "show one decision")
    p.add_argument("id", metavar="ID", help="decision id or a unique prefix of it")

    # `--by NEW` names the replacing decision here; who acts goes before the command (`planstate --by NAME ...`).
    p = decision.add("supersede", cmd_decision_supersede, "mark a decision superseded by another", by=False)
    p.add_argument("id", metavar="ID", help="the decision replaced")
    p.add_argument("--by", dest="new", required=True, metavar="ID", help="the decision that replaces it")

    p = decision.add("accept", cmd_decision_accept, "accept a proposed decision")
    p.add_argument("id", metavar="ID", help="decision id or a unique prefix of it")

    p = decision.add("reject", cmd_decision_reject, "reject a proposed decision")
    p.add_argument("id", metavar="ID", help="decision id or a unique prefix of it")
    p.add_argument("--reason", metavar="R", help="why it is rejected (kept in rejection)")

    blocker = cli.group("blocker", "record blockers and move them through new, active, bypassed, resolved")
    p = blocker.add("add", cmd_blocker_add, "record a blocker (status new; --active if it blocks work now)")
    p.add_argument("--description", required=True, help="what is blocking")
    p.add_argument("--affects", action="append", metavar="X", help="what it blocks, e.g. 'phase 3'; repeat")
    p.add_argument("--blocked-task", action="append", metavar="TASK", help="a task that cannot proceed; repeat")
    p.add_argument("--title", help="short title (default: the description, shortened)")
    p.add_argument("--active", action="store_true", help="record it directly as active")

    p = blocker.add("list", cmd_blocker_list, "list unresolved blockers (--all: resolved ones too)")
    p.add_argument("--status", metavar="S", help="only blockers with this status")
    p.add_argument("--all", action="store_true", help="include resolved blockers")
    p.add_argument("--since", metavar="WHEN", help="only blockers identified on or after a date, or within a duration")

    p = blocker.add("show", cmd_blocker_show, "show one blocker")
    p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it")

    p = blocker.add("activate", cmd_blocker_activate, "mark a blocker active (it blocks work now)")
    p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it")
    p.add_argument("--reason", help="why it blocks now")

    p = blocker.add("bypass", cmd_blocker_bypass, "mark an active blocker bypassed by a workaround")
    p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it")
    p.add_argument("--workaround", required=True, help="how work proceeds around it")

    p = blocker.add("resolve", cmd_blocker_resolve, "mark a blocker resolved")
    p.add_argument("id", metavar="ID", help="blocker id or a unique prefix of it")
    p.add_argument("--resolution", required=True, help="how it was resolved")

    session = cli.group("session", "work sessions of agents and people, with heartbeats")
    p = session.add("start", cmd_session_start, "start a session (warns if another is active)")
    p.add_argument("--agent", help="who works (default: --by, PLANSTATE_ACTOR or $USER)")
    p.add_argument("--working-on", metavar="TEXT", help="what the session works on")
    p.add_argument("--exclusive", action="store_true", help="refuse to start while another session is active")

    p = session.add("heartbeat", cmd_session_heartbeat, "mark a session alive (touches a machine-local file)")
    p.add_argument("--session", metavar="ID", help="the session (default: $PLANSTATE_SESSION, else the active one)")

    p = session.add("end", cmd_session_end, "end a session")
    p.add_argument("--session", metavar="ID", help="the session (default: $PLANSTATE_SESSION, else the active one)")
    p.add_argument("--completed", action="append", metavar="X", help="something completed; repeat")
    p.add_argument("--issue", action="append", metavar="X", help="an issue met; repeat")
    p.add_argument("--handoff-reason", metavar="R", help="why work is handed off")
    p.add_argument("--notes", metavar="N", help="free notes")
    p.add_argument("--context-usage", metavar="U", help="how much of the agent's context was used, e.g. 62%%")

    p = session.add("list", cmd_session_list, "list sessions")
    p.add_argument("--status", metavar="S", help="only sessions with this status (active, ended, crashed)")
    p.add_argument("--since", metavar="WHEN", help="only sessions started on or after a date, or within a duration")

    p = session.add("show", cmd_session_show, "show one session")
    p.add_argument("id", metavar="ID", help="session id or a unique prefix of it")

    p = session.add("reap", cmd_session_reap, "mark stale sessions crashed; with --abandon-after, idle initiatives")
    p.add_argument(
        "--stale-after", default="30m", metavar="DURATION", help="no heartbeat for this long means crashed (30m)"
    )
    p.add_argument("--abandon-after", metavar="DURATION", help="move active initiatives idle this long to abandoned")
    p.add_argument("--dry-run", action="store_true", help="say what would be done, write nothing")
