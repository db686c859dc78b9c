"""Rules about an initiative's records: ids and file names, references to phases and records, active sessions.

Sessions are checked against the clock too: an active session whose heartbeat is old is stale.
"""

from __future__ import annotations

from collections.abc import Container
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from planstate.check.findings import Finding
from planstate.check.reader import FileRead
from planstate.core.clock import parse_datetime
from planstate.core.durations import show
from planstate.model import verdicts
from planstate.model.kinds import State, phase_numbers, phase_reference, record_reference

if TYPE_CHECKING:
    from planstate.check.reader import Reader
    from planstate.check.recordmemo import Folder
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

Records = dict[str, list[FileRead]]  # an initiative's record files whose front matter is a mapping, by kind


def references(ctx: Context, initiative: Initiative, records: Records, state: dict[str, Any] | None) -> list[Finding]:
    """Duplicate ids, file names that disagree with their ids, and references to missing phases or records."""
    out, ids = identities(ctx, records)
    every_id = set().union(*ids.values())
    numbers = phase_numbers(State(state)) if state is not None else None
    folder = ctx.display(initiative.folder("decision")) + "/"
    for found in records["decision"]:
        out += decision_references(found, ids["decision"], numbers, folder)
    for found in records["session"]:
        out += session_references(found, ids["session"])
    for found in records["blocker"]:
        out += blocker_references(found, numbers, every_id)
    return out


def identities(ctx: Context, records: Records) -> tuple[list[Finding], dict[str, dict[str, FileRead]]]:
    """Records of one kind with the same id, and records whose file name does not start with their id; and the
    ids of each kind, with the file of each."""
    out: list[Finding] = []
    ids: dict[str, dict[str, FileRead]] = {kind: {} for kind in records}
    for kind, items in records.items():
        for found in items:
            record_id = found.data.get("id")
            if not isinstance(record_id, str):
                continue
            first = ids[kind].setdefault(record_id, found)
            if first is not found:
                message = f"id {record_id} is also the id of {first.shown}"
                hint = "give one of them a new id and rename its file to start with it"
                out.append(found.finding("duplicate-id", ["id"], message, hint))
            out += _file_name(found, record_id)
    return out, ids


def name_matches(name: str, record_id: str) -> bool:
    """Whether a record's file name is `<id>.md` or `<id>-<slug>.md`."""
    return name == f"{record_id}.md" or name.startswith(f"{record_id}-")


def _file_name(found: FileRead, record_id: str) -> list[Finding]:
    """A record whose file name is neither `<id>.md` nor `<id>-<slug>.md`."""
    name = found.name
    if name_matches(name, record_id):
        return []
    message = f"the file name {name} does not start with its id {record_id}"
    hint = f"rename the file to start with '{record_id}-' (`git mv`), or correct the id"
    return [found.finding("filename-id-mismatch", ["id"], message, hint)]


def decision_references(
    found: FileRead, decisions: Container[str], numbers: range | None, folder: str
) -> list[Finding]:
    """A decision's `supersedes` or `superseded_by` naming a missing decision (of `folder`), and a `phase` outside
    the phase `numbers`."""
    out: list[Finding] = []
    for key in ("supersedes", "superseded_by"):
        target = found.data.get(key)
        if isinstance(target, str) and target not in decisions:
            message = f"{key} names decision {target}, which does not exist in {folder}"
            hint = "correct the id; commands accept a unique prefix, and `planstate decision list` shows them"
            out.append(found.finding("missing-reference", [key], message, hint))
    number = found.data.get("phase")
    if _number(number) and numbers is not None and number not in numbers:
        message = f"phase names phase {number}, but phases are numbered {_range(numbers)}"
        hint = "correct the phase number, or set it to null"
        out.append(found.finding("missing-reference", ["phase"], message, hint))
    return out


def session_references(found: FileRead, sessions: Container[str]) -> list[Finding]:
    """A session's `resumed_from` naming a missing session."""
    target = found.data.get("resumed_from")
    if not isinstance(target, str) or target in sessions:
        return []
    message = f"resumed_from names session {target}, which does not exist"
    return [found.finding("missing-reference", ["resumed_from"], message, "correct the id, or set it to null")]


def blocker_references(found: FileRead, numbers: range | None, every_id: set[str]) -> list[Finding]:
    """A blocker's `affects` items that name a phase outside the phase `numbers` or a record no record has."""
    affects = found.data.get("affects")
    if not isinstance(affects, list):
        return []
    out: list[Finding] = []
    for index, item in enumerate(affects):
        if isinstance(item, str):
            out += _affected(found, index, item, numbers, every_id)
    return out


def _affected(found: FileRead, index: int, item: str, numbers: range | None, every_id: set[str]) -> list[Finding]:
    """What is missing that one `affects` item names."""
    out: list[Finding] = []
    phase = phase_reference(item)
    if phase is not None and numbers is not None and phase not in numbers:
        message = f"affects names phase {phase}, but phases are numbered {_range(numbers)}"
        out.append(found.finding("missing-reference", ["affects", index], message, "correct the phase number"))
    record_id = record_reference(item)
    if record_id is not None and record_id not in every_id:
        message = f"affects names record {record_id}, which does not exist in this initiative"
        out.append(found.finding("missing-reference", ["affects", index], message, "correct the id or remove the item"))
    return out


def cross(
    ctx: Context,
    initiative: Initiative,
    folders: dict[str, list[Folder]],
    state: dict[str, Any] | None,
    reader: Reader,
    now: datetime,
    stale_after: float,
) -> tuple[list[Finding], list[ActiveSession]]:
    """What `references` and `sessions` find, from the rows a check kept of each record folder (live, then archived,
    by kind; check/recordmemo.py): each rule runs on the records that could break it alone (a repeated id or a file
    name that does not start with it, a decision's phase outside the phases, a record naming another, an active
    session), which finds what running it on every record finds."""
    from collections import Counter

    from planstate.check.recordmemo import NO_MAPPING, reads_of

    made: dict[tuple[int, str], FileRead] = {}

    def reads(found: Folder, names: list[str]) -> list[FileRead]:
        missing = [name for name in names if (id(found), name) not in made]
        for name, read in zip(missing, reads_of(reader, found, missing), strict=True):
            made[id(found), name] = read
        return [made[id(found), name] for name in names]

    suspects: dict[str, list[FileRead]] = {}
    ids: dict[str, set[str]] = {}
    for kind, found_all in folders.items():
        usable: list[str | None] = []
        for found in found_all:
            if NO_MAPPING in found.shapes:
                usable += [i for i, shape in zip(found.ids, found.shapes, strict=True) if shape != NO_MAPPING]
            else:
                usable += found.ids
        present = cast("list[str]", [i for i in usable if i is not None] if None in usable else usable)
        ids[kind] = unique = set(present)
        repeated = {i for i, count in Counter(present).items() if count > 1} if len(unique) < len(present) else set()
        suspects[kind] = []
        for found in found_all:
            picked = set(found.misnamed)
            if repeated:
                rows = zip(found.names, found.ids, found.shapes, strict=True)
                picked |= {name for name, i, shape in rows if i in repeated and shape != NO_MAPPING}
            suspects[kind] += reads(found, sorted(picked))
    out, _ids = identities(ctx, suspects)
    every_id = set().union(*ids.values())
    numbers = phase_numbers(State(state)) if state is not None else None
    folder = ctx.display(initiative.folder("decision")) + "/"
    for found in folders["decision"]:
        chosen = set(found.facts)
        outside = {p for p in set(found.phases) if p is not None and p not in numbers} if numbers is not None else ()
        if outside:
            chosen |= {name for name, p in zip(found.names, found.phases, strict=True) if p in outside}
        for read in reads(found, sorted(chosen)):
            out += decision_references(read, ids["decision"], numbers, folder)
    for found in folders["session"]:
        for read in reads(found, sorted(found.facts)):
            out += session_references(read, ids["session"])
    for found in folders["blocker"]:
        for read in reads(found, sorted(found.facts)):
            out += blocker_references(read, numbers, every_id)
    active = [read for found in folders["session"] for read in reads(found, sorted(found.facts))]
    more, seen = sessions(ctx, [read for read in active if read.data.get("status") == "active"], now, stale_after)
    return out + more, seen


# ---------------------------------------------------------------------------- sessions


class ActiveSession:
    """An active session seen by the last check: what the clock-driven rule needs to look at it again."""

    __slots__ = ("id", "read", "started")

    def __init__(self, read: FileRead, record_id: str, started: datetime | None) -> None:
        self.read = read
        self.id = record_id
        self.started = started


def sessions(
    ctx: Context, items: list[FileRead], now: datetime, stale_after: float
) -> tuple[list[Finding], list[ActiveSession]]:
    """More than one active session; active sessions whose heartbeat is older than `stale_after` seconds. Also
    the active sessions, for `stale` to look at again as the clock moves."""
    active = [found for found in items if found.data.get("status") == "active"]
    out = [_another_active(found, active) for found in active[1:]]
    seen: list[ActiveSession] = []
    for found in active:
        record_id = found.data.get("id")
        if not isinstance(record_id, str):
            continue
        session = ActiveSession(found, record_id, parse_datetime(found.data.get("started")))
        seen.append(session)
        finding = stale(ctx, session, now, stale_after)
        if finding is not None:
            out.append(finding)
    return out, seen


def _another_active(found: FileRead, active: list[FileRead]) -> Finding:
    others = ", ".join(str(other.data.get("id")) for other in active if other is not found)
    hint = (
        f"end a session that is over with `planstate session end --session {found.data.get('id')}`; "
        "parallel agents may each have one"
    )
    return found.finding("multiple-active-sessions", ["status"], f"is active, and so is {others}", hint)


def stale(ctx: Context, session: ActiveSession, now: datetime, stale_after: float) -> Finding | None:
    """The stale-session finding of an active session as of `now`, if it is stale: its heartbeat (machine-local),
    else its start, is older than `stale_after` seconds."""
    from planstate.ops.heartbeats import last_heartbeat

    beat = last_heartbeat(ctx, session.id)
    last = verdicts.last_seen(beat, session.started)
    if last is None or not verdicts.silent(last, now, stale_after):
        return None
    if beat is None:
        source = "its start; there is no heartbeat on this machine"
    else:
        source = "its last heartbeat" if last == beat else "its start"
    age = (now - last).total_seconds()
    return session.read.finding(
        "stale-session",
        ["status"],
        f"is active, but its last sign of life was {show(age)} ago ({source})",
        f"if its agent is gone, `planstate session end --session {session.id}` ends it, or "
        "`planstate session reap` marks every stale session crashed",
        stable="stale",  # the age in the message grows by the minute; it stays one finding
    )


def _number(value: Any) -> bool:
    """Tell whether a value is an integer (and not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _range(numbers: range) -> str:
    return f"{numbers.start} to {numbers.stop - 1}" if len(numbers) else "(there are no phases)"
