"""What can happen to a phase, a decision, a blocker or a session, as tables `planstate diff` reads changes by.

Each kind of thing is a `Subject`; each thing that can happen to it is an `Event` that says which status
change or field appearance makes it, what its entry holds (its `--json` keys, in order) and how its line
reads (difftext.py writes that line as text or markdown). `events` applies a subject's table to one thing's
two sides, `line` writes one entry. Lifecycle transitions come from history lines instead, but read the
same way (`transitions`, `TRANSITION`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from planstate.core.clock import parse_datetime
from planstate.model.kinds import Blocker, Decision, Phase, Session
from planstate.model.schema import Model
from planstate.vcs.difftext import Part, Plain, always, code, duration, evidence, given, not_null, raw, render, texts


class Change(NamedTuple):
    """One thing (a phase, a record) on both sides, as an event reads it."""

    old: dict[str, Any]
    new: dict[str, Any]
    was: Any  # its status on the older side, or where an earlier event left it (a retried phase starts over)
    status: Any  # its status on the newer side
    records: dict[str, Any]  # the newer side's records of the kind by id, as (file name, data)
    earlier: tuple[str, ...] = ()  # the events already found for it


Read = Callable[[Change], Any]


def newer(key: str) -> Read:
    """Read the newer side's value of `key`."""
    return lambda change: change.new.get(key)


def was(change: Change) -> Any:
    """The status it moved from."""
    return change.was


def now(change: Change) -> Any:
    """The status it moved to."""
    return change.status


def anything(change: Change) -> bool:
    """An event that needs no more than its status (or its place in the table)."""
    return True


@dataclass(frozen=True)
class Event:
    """One kind of event: what makes it (beyond its place in a `Subject`), what its entry holds, how it reads.

    `reads` are the entry's keys after the thing's identity and `event`, each with how it is read from the
    change; `line` is the rest of its line after the head (see difftext.Part).
    """

    name: str
    reads: tuple[tuple[str, Read], ...] = ()
    line: tuple[Part, ...] = ()
    when: Callable[[Change], bool] = anything
    then: str | None = None  # a field appearance: the status the thing counts as having afterwards


@dataclass(frozen=True)
class Subject:
    """Everything that can happen to one kind of thing, and how its entries are named and headed."""

    section: str  # the section of the diff its events go to
    model: type[Model]
    noun: str  # phase, decision, blocker, session
    key: str  # what identifies it in an entry: `phase` (its number) or `id`
    label: str  # the key that names it for people: name, title or agent
    head: Callable[[Subject, dict[str, Any], Plain], str]
    added: Event
    removed: Event
    statuses: dict[str, Event]  # a change to this status makes this event
    other: Event  # a change to any other status
    explains: tuple[str, ...]  # fields its events explain: not listed again as field changes
    default: str | None = None  # its status when the field is absent
    with_status: bool = True  # whether an entry carries the thing's status next to its identity
    appeared: tuple[Event, ...] = ()  # field appearances, looked for before the status
    unchanged: Event | None = None  # what may still have happened when the status did not change
    added_as: str | None = None  # a new thing's status is compared with this one too (a session starts active)
    by_name: dict[str, Event] = field(init=False)

    def __post_init__(self) -> None:
        every = (self.added, self.removed, *self.appeared, *self.statuses.values(), self.other)
        by_name = {e.name: e for e in (*every, *([self.unchanged] if self.unchanged else []))}
        object.__setattr__(self, "by_name", by_name)


# ---------------------------------------------------------------------------- applying the tables


def events(
    subject: Subject, key: Any, old: dict[str, Any] | None, new: dict[str, Any] | None, records: dict[str, Any]
) -> list[dict[str, Any]]:
    """What happened to one thing, by `subject`'s table: its entries, oldest news first (None: absent on that side).

    `records` are the newer side's records of the kind by id, for events that name another record.
    """
    identity = _identity(subject, key, new if new is not None else old or {})
    if new is None:
        return [_entry(subject.removed, identity, Change(old or {}, {}, None, None, records))]
    if old is None:
        added = [_entry(subject.added, identity, Change({}, new, None, None, records))]
        if subject.added_as is None:
            return added
        return added + _changes(subject, identity, {"status": subject.added_as}, new, records, added)
    return _changes(subject, identity, old, new, records, [])


def _changes(
    subject: Subject,
    identity: dict[str, Any],
    old: dict[str, Any],
    new: dict[str, Any],
    records: dict[str, Any],
    earlier: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The events of a thing on both sides (after the `earlier` ones): field appearances, then its status."""
    change = Change(old, new, old.get("status", subject.default), new.get("status", subject.default), records)
    found: list[dict[str, Any]] = []
    for event in subject.appeared:
        if event.when(change):
            found.append(_entry(event, identity, change))
            change = change._replace(was=event.then)
    change = change._replace(earlier=tuple(entry["event"] for entry in earlier + found))
    by_status = _status_event(subject, change, first=not change.earlier)
    return found + ([_entry(by_status, identity, change)] if by_status is not None else [])


def _status_event(subject: Subject, change: Change, *, first: bool) -> Event | None:
    """The event the status says happened: a change's, or when it stayed, the subject's `unchanged` event."""
    if change.status == change.was:
        unchanged = subject.unchanged
        return unchanged if first and unchanged is not None and unchanged.when(change) else None
    status = change.status
    event = subject.statuses.get(status, subject.other) if isinstance(status, str) else subject.other
    return event if event.when(change) else None


def _identity(subject: Subject, key: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The keys every entry of a thing starts with: what identifies it, its name and (for records) its status."""
    out = {subject.key: key, subject.label: data.get(subject.label)}
    if subject.with_status:
        out["status"] = data.get("status", subject.default)
    return out


def _entry(event: Event, identity: dict[str, Any], change: Change) -> dict[str, Any]:
    return {**identity, "event": event.name, **{name: read(change) for name, read in event.reads}}


def line(subject: Subject, entry: dict[str, Any], f: Plain) -> str:
    """One entry of `subject` as a line, written by `f` (plain or markdown)."""
    return subject.head(subject, entry, f) + render(subject.by_name[entry["event"]].line, entry, f)


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


def added_items(old: Any, new: Any) -> list[Any]:
    """The items of list `new` that list `old` does not have (counted: a repeated item is added again)."""
    remaining = list(_list(old))
    out = []
    for item in _list(new):
        if item in remaining:
            remaining.remove(item)
        else:
            out.append(item)
    return out


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

RECORDS = (DECISIONS, BLOCKERS, SESSIONS)


# ---------------------------------------------------------------------------- lifecycle transitions


def _none_shown(f: Plain, value: Any) -> str:
    return str(value or "(none)")


TRANSITION = (
    Part(": {}", "from", _none_shown, always),
    Part(" → {}", "to", raw, always),
    Part(" ({})", "trigger", code),
    Part(" by {}", "by"),
    Part(" at {}", "at"),
    Part(": {}", "reason"),
)


def transition(source: Any, target: Any, at: Any, trigger: Any, reason: Any, by: Any) -> dict[str, Any]:
    """A lifecycle transition as an entry of the `lifecycle` section."""
    return {"from": source, "to": target, "at": at, "trigger": trigger, "reason": reason, "by": by}


def transitions(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history entries the newer side has and the older does not, oldest first, as transitions."""
    seen: dict[str, int] = {}
    for entry in old:
        seen[entry_key(entry)] = seen.get(entry_key(entry), 0) + 1
    out = []
    for entry in new:
        k = entry_key(entry)
        if seen.get(k):
            seen[k] -= 1
            continue
        get = entry.get
        out.append(transition(get("from"), get("to"), get("at"), get("trigger"), get("reason"), get("by")))
    return out


def state_transition(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The transition a change of `lifecycle.state` shows, from the lifecycle blocks of two states (when the
    history says nothing): no entry when the state stayed."""
    if old.get("state") == new.get("state"):
        return []
    return [transition(old.get("state"), new.get("state"), new.get("since"), None, new.get("reason"), new.get("by"))]


def transition_line(entry: dict[str, Any], f: Plain) -> str:
    """One lifecycle transition as a line, written by `f`."""
    return f.strong("lifecycle") + render(TRANSITION, entry, f)


def entry_key(entry: Any) -> str:
    """Data as canonical JSON: equal data, equal text."""
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, default=str)
