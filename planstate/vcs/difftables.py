"""What can happen to a phase, a decision, a blocker or a session: the `Subject` tables `planstate diff` reads by.

Each table names the events of one kind of thing (diffevents.py says how a table is applied): which status
change or field appearance makes each, the `--json` keys of its entry and how its line reads.
"""

from __future__ import annotations

import re
from typing import Any

from planstate.core.clock import parse_datetime
from planstate.model.kinds import Blocker, Decision, Phase, Session, Task
from planstate.vcs.diffevents import Change, Event, Read, Subject, newer, now, was
from planstate.vcs.difftext import Part, Plain, always, code, duration, evidence, given, not_null, raw, texts
from planstate.vcs.fieldchanges import added_items

# ---------------------------------------------------------------------------- how entries are headed


def _phase_head(subject: Subject, entry: dict[str, Any], f: Plain) -> str:
    """`phase N Name`."""
    return f"{f.strong('phase ' + str(entry['phase']))} {f.text(entry.get('name') or '')}".rstrip()


def _record_head(subject: Subject, entry: dict[str, Any], f: Plain) -> str:
    """`decision added: ID Title` (`session ...: ID agent`)."""
    label = entry.get(subject.label)
    shown = f.text(label) if label else ""
    return f"{f.strong(subject.noun + ' ' + entry['event'])}: {f.code(entry['id'])} {shown}".rstrip()


# ---------------------------------------------------------------------------- what the events read


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def seconds(start: Any, end: Any) -> float | None:
    """Seconds from one timestamp to another (whole seconds as an int), None unless both are timestamps."""
    a, b = parse_datetime(start), parse_datetime(end)
    if a is None or b is None:
        return None
    value = (b - a).total_seconds()
    return int(value) if value == int(value) else value


def _between(start: str, end: str) -> Read:
    return lambda change: seconds(change.new.get(start), change.new.get(end))


def _added(key: str) -> Read:
    return lambda change: added_items(change.old.get(key), change.new.get(key))


def _evidence(change: Change) -> Any:
    return change.new.get("evidence") or {}


def _result(entry: dict[str, Any], key: str = "checkpoint") -> bool:
    """Whether a checkpoint result is given (pending is none yet)."""
    return entry.get(key) not in (None, "pending")


def _result_with_evidence(entry: dict[str, Any], key: str) -> bool:
    return _result(entry) and given(entry, key)


def _new_result(change: Change) -> bool:
    """The checkpoint changed to a result."""
    return change.new.get("checkpoint") != change.old.get("checkpoint") and _result(change.new)


def _new_attempt(change: Change) -> bool:
    """An earlier attempt was kept: the phase started over."""
    return len(_list(change.new.get("previous"))) > len(_list(change.old.get("previous")))


def _previous_failure(change: Change) -> Any:
    last = _list(change.new.get("previous"))[-1]
    return last.get("failure") if isinstance(last, dict) else None


def _not_after_retry(change: Change) -> bool:
    return "retried" not in change.earlier  # a retried phase is active again: "retried" says it


def _again(entry: dict[str, Any], key: str) -> bool:
    attempt = entry.get(key)
    return isinstance(attempt, int) and attempt > 1


_LOG_LINE = re.compile(r"\S+ \S+ → \S+: (.*)", re.DOTALL)


def _log_reason(change: Change) -> Any:
    """The why of the last line the blocker's log gained (`<time> <from> → <to>: <why>`)."""
    gained = _list(change.new.get("log"))[len(_list(change.old.get("log"))) :]
    if not gained:
        return None
    match = _LOG_LINE.match(str(gained[-1]))
    return match.group(1) if match else None


def _superseding_title(change: Change) -> Any:
    """The title of the decision that superseded this one, when the newer side has it."""
    by = change.new.get("superseded_by")
    other = change.records.get(by) if isinstance(by, str) else None
    return other[1].get("title") if other else None


def _affects(change: Change) -> Any:
    return change.new.get("affects") or []


def _superseded_by_given(entry: dict[str, Any], key: str) -> bool:
    return given(entry, "superseded_by") and given(entry, key)


# ---------------------------------------------------------------------------- the tables

EVIDENCE = Part(" ({})", "evidence", evidence, _result_with_evidence)
CHECKPOINT = (Part("; checkpoint {}", "checkpoint", raw, _result), EVIDENCE)
FROM_TO = (Part(": {}", "from", raw, always), Part(" → {}", "to", raw, always))
STATUS = Part(" ({})", "status", raw, always)
STATUS_CHANGE = Event("status", (("from", was), ("to", now)), FROM_TO)  # a status no event of the table names

PHASES = Subject(
    section="phases",
    model=Phase,
    noun="phase",
    key="phase",
    label="name",
    head=_phase_head,
    default="pending",
    with_status=False,
    added=Event("added", line=(Part(": added"),)),
    removed=Event("removed", line=(Part(": removed"),)),
    appeared=(
        Event(
            "retried",
            (("attempt", newer("attempts")), ("previous_failure", _previous_failure)),
            (Part(": retried (attempt {})", "attempt", raw, always), Part(" after: {}", "previous_failure")),
            when=_new_attempt,
            then="pending",  # the new attempt starts from scratch: its status says where it got to
        ),
    ),
    unchanged=Event(
        "checkpoint",
        (("checkpoint", newer("checkpoint")), ("evidence", _evidence)),
        (Part(":"), Part(" checkpoint {}", "checkpoint", raw, _result), EVIDENCE),
        when=_new_result,
    ),
    statuses={
        "active": Event(
            "started",
            (("started", newer("started")), ("attempt", newer("attempts"))),
            (Part(": started"), Part(" (attempt {})", "attempt", raw, _again)),
            when=_not_after_retry,
        ),
        "completed": Event(
            "completed",
            (
                ("started", newer("started")),
                ("completed", newer("completed")),
                ("duration_seconds", _between("started", "completed")),
                ("checkpoint", newer("checkpoint")),
                ("evidence", _evidence),
            ),
            (Part(": completed"), Part(" in {}", "duration_seconds", duration, not_null), *CHECKPOINT),
        ),
        "failed": Event(
            "failed",
            (("failure", newer("failure")), ("checkpoint", newer("checkpoint")), ("evidence", _evidence)),
            (Part(": failed"), Part(": {}", "failure"), *CHECKPOINT),
        ),
        "skipped": Event("skipped", (("reason", newer("skip_reason")),), (Part(": skipped"), Part(": {}", "reason"))),
    },
    other=Event("reset", (("from", was), ("to", now)), FROM_TO),
    explains=(
        "status",
        "started",
        "completed",
        "failed_at",
        "attempts",
        "previous",
        "failure",
        "skip_reason",
        "checkpoint",
        "evidence",
    ),
)

DECISIONS = Subject(
    section="decisions",
    model=Decision,
    noun="decision",
    key="id",
    label="title",
    head=_record_head,
    default="accepted",
    added=Event("added", (("decision", newer("decision")), ("by", newer("by"))), (STATUS, Part(" by {}", "by"))),
    removed=Event("removed"),
    statuses={
        "superseded": Event(
            "superseded",
            (("superseded_by", newer("superseded_by")), ("superseded_by_title", _superseding_title)),
            (Part(", by {}", "superseded_by", code), Part(" {}", "superseded_by_title", shown=_superseded_by_given)),
        ),
        "rejected": Event("rejected", (("rejection", newer("rejection")),), (Part(": {}", "rejection"),)),
        "accepted": Event("accepted"),
    },
    other=STATUS_CHANGE,
    explains=("status", "superseded_by", "rejection"),
)

BLOCKERS = Subject(
    section="blockers",
    model=Blocker,
    noun="blocker",
    key="id",
    label="title",
    head=_record_head,
    added=Event(
        "added",
        (("description", newer("description")), ("affects", _affects)),
        (STATUS, Part(", affects {}", "affects", texts(", "))),
    ),
    removed=Event("removed"),
    statuses={
        "active": Event("activated", (("from", was), ("reason", _log_reason)), (Part(": {}", "reason"),)),
        "bypassed": Event(
            "bypassed", (("workaround", newer("workaround")),), (Part(", workaround: {}", "workaround"),)
        ),
        "resolved": Event(
            "resolved",
            (("resolution", newer("resolution")), ("resolved", newer("resolved"))),
            (Part(": {}", "resolution"),),
        ),
    },
    other=STATUS_CHANGE,
    explains=("status", "workaround", "resolution", "resolved", "log"),
)

SESSIONS = Subject(
    section="sessions",
    model=Session,
    noun="session",
    key="id",
    label="agent",
    head=_record_head,
    added=Event(
        "started",
        (("started", newer("started")), ("working_on", newer("working_on"))),
        (Part(", working on {}", "working_on"),),
    ),
    added_as="active",  # a session added already ended (or crashed) says that too
    removed=Event("removed"),
    statuses={
        "ended": Event(
            "ended",
            (
                ("ended", newer("ended")),
                ("duration_seconds", _between("started", "ended")),
                ("handoff_reason", newer("handoff_reason")),
                ("completed", _added("completed")),
                ("issues", _added("issues")),
            ),
            (
                Part(" after {}", "duration_seconds", duration, not_null),
                Part(", handoff: {}", "handoff_reason"),
                Part("; completed: {}", "completed", texts("; ")),
                Part("; issues: {}", "issues", texts("; ")),
            ),
        ),
        "crashed": Event(
            "crashed",
            (("ended", newer("ended")), ("issues", _added("issues"))),
            (Part("; issues: {}", "issues", texts("; ")),),
        ),
    },
    other=STATUS_CHANGE,
    explains=("status", "ended", "completed", "issues", "handoff_reason", "notes", "context_usage"),
)

TASKS = Subject(
    section="tasks",
    model=Task,
    noun="task",
    key="id",
    label="title",
    head=_record_head,
    default="pending",
    added=Event(
        "added",
        (("phase", newer("phase")), ("depends_on", newer("depends_on")), ("by", newer("by"))),
        (STATUS, Part(", phase {}", "phase", raw, not_null), Part(", after {}", "depends_on", texts(", "))),
    ),
    removed=Event("removed"),
    statuses={
        "in_progress": Event("started", (("from", was),)),
        "done": Event("done", (("evidence", newer("evidence")),), (Part(", evidence: {}", "evidence", evidence),)),
        "dropped": Event("dropped", (("from", was),)),
        "pending": Event("reopened", (("from", was),)),
    },
    other=STATUS_CHANGE,
    explains=("status", "evidence", "claim"),
)

RECORDS = (DECISIONS, BLOCKERS, SESSIONS, TASKS)
