"""How `planstate diff` reads what happened to a thing: a `Subject`'s table of `Event`s, applied to its two sides.

Each kind of thing (a phase, a decision, a blocker, a session) is a `Subject`; each thing that can happen to
it is an `Event` that says which status change or field appearance makes it, what its entry holds (its
`--json` keys, in order) and how its line reads (difftext.py writes that line as text or markdown). The
tables themselves are difftables.py. `events` applies a subject's table to one thing's two sides, `line`
writes one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from planstate.model.schema import Model
from planstate.vcs.difftext import Part, Plain, render


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
    archived: Event = Event("archived")  # a record moved into its kind's `archive/` folder
    by_name: dict[str, Event] = field(init=False)

    def __post_init__(self) -> None:
        every = (self.added, self.removed, *self.appeared, *self.statuses.values(), self.other, self.archived)
        by_name = {e.name: e for e in (*every, *([self.unchanged] if self.unchanged else []))}
        object.__setattr__(self, "by_name", by_name)


# ---------------------------------------------------------------------------- applying the tables


def events(
    subject: Subject,
    key: Any,
    old: dict[str, Any] | None,
    new: dict[str, Any] | None,
    records: dict[str, Any],
    *,
    archived: bool = False,
) -> list[dict[str, Any]]:
    """What happened to one thing, by `subject`'s table: its entries, oldest news first (None: absent on that side).

    `records` are the newer side's records of the kind by id, for events that name another record; `archived`
    says the record moved into its kind's `archive/` folder, the last news of it.
    """
    identity = _identity(subject, key, new if new is not None else old or {})
    if archived and old is not None and new is not None:
        found = _changes(subject, identity, old, new, records, [])
        return [*found, _entry(subject.archived, identity, Change(old, new, None, None, records))]
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
