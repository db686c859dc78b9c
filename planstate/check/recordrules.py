"""Rules about an initiative's records: ids and file names, references to phases and records, active sessions.

Sessions are checked against the clock too: an active session whose heartbeat is old is stale.
"""

from __future__ import annotations

from collections.abc import Container
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planstate.check.findings import Finding
from planstate.check.reader import FileRead
from planstate.core.clock import parse_datetime
from planstate.core.durations import show
from planstate.model import verdicts
from planstate.model.kinds import State, phase_numbers, phase_reference, record_reference
from planstate.store.cache import decode

if TYPE_CHECKING:
    from planstate.check.reader import Reader
    from planstate.store.context import Context
    from planstate.store.folders import Vouched
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
    for found in records["task"]:
        out += task_references(found, ids["task"], numbers)
    return out + task_cycles(records["task"])


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
    return out + _phase_outside(found, numbers)


def _phase_outside(found: FileRead, numbers: range | None) -> list[Finding]:
    """A record's `phase` outside the phase `numbers` (a decision's, a task's)."""
    number = found.data.get("phase")
    if not _number(number) or numbers is None or number in numbers:
        return []
    message = f"phase names phase {number}, but phases are numbered {_range(numbers)}"
    return [found.finding("missing-reference", ["phase"], message, "correct the phase number, or set it to null")]


def session_references(found: FileRead, sessions: Container[str]) -> list[Finding]:
    """A session's `resumed_from` naming a missing session."""
    target = found.data.get("resumed_from")
    if not isinstance(target, str) or target in sessions:
        return []
    message = f"resumed_from names session {target}, which does not exist"
    return [found.finding("missing-reference", ["resumed_from"], message, "correct the id, or set it to null")]


def blocker_references(found: FileRead, numbers: range | None, every_id: Container[str]) -> list[Finding]:
    """A blocker's `affects` items that name a phase outside the phase `numbers` or a record no record has."""
    affects = found.data.get("affects")
    if not isinstance(affects, list):
        return []
    out: list[Finding] = []
    for index, item in enumerate(affects):
        if isinstance(item, str):
            out += _affected(found, index, item, numbers, every_id)
    return out


def _affected(found: FileRead, index: int, item: str, numbers: range | None, every_id: Container[str]) -> list[Finding]:
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


def task_references(found: FileRead, tasks: Container[str], numbers: range | None) -> list[Finding]:
    """A task's `depends_on` items naming a task that does not exist, and a `phase` outside the phase `numbers`."""
    out: list[Finding] = []
    depends = found.data.get("depends_on")
    for index, target in enumerate(depends if isinstance(depends, list) else []):
        if isinstance(target, str) and target not in tasks:
            message = f"depends_on names task {target}, which does not exist in this initiative"
            hint = "correct the id (`planstate task list --all` shows them), or remove the item"
            out.append(found.finding("missing-reference", ["depends_on", index], message, hint))
    return out + _phase_outside(found, numbers)


def task_cycles(tasks: list[FileRead]) -> list[Finding]:
    """Each cycle of `depends_on` among `tasks` (a task depending on itself too), once, on the task with the smallest
    id in it: found in one depth-first walk, linear in the tasks and their dependencies."""
    graph: dict[str, tuple[FileRead, list[str]]] = {}
    for found in tasks:
        record_id, depends = found.data.get("id"), found.data.get("depends_on")
        if isinstance(record_id, str) and isinstance(depends, list) and record_id not in graph:
            graph[record_id] = (found, [d for d in depends if isinstance(d, str)])
    done: set[str] = set()
    seen: set[str] = set()
    out: list[Finding] = []
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = [start]
        on_path = {start: 0}
        todo = [iter(graph[start][1])]
        while todo:
            following = next(todo[-1], None)
            if following is None:
                todo.pop()
                last = path.pop()
                del on_path[last]
                done.add(last)
                continue
            if following in on_path:
                finding = _cycle(graph, path[on_path[following] :])
                if finding.message not in seen:
                    seen.add(finding.message)
                    out.append(finding)
            elif following in graph and following not in done:
                on_path[following] = len(path)
                path.append(following)
                todo.append(iter(graph[following][1]))
    return out


def _cycle(graph: dict[str, tuple[FileRead, list[str]]], cycle: list[str]) -> Finding:
    """The finding of one cycle, on its task with the smallest id, the cycle read from there."""
    at = cycle.index(min(cycle))
    ring = cycle[at:] + cycle[:at]
    found, depends = graph[ring[0]]
    index = depends.index(ring[1] if len(ring) > 1 else ring[0])
    shown = " → ".join([*ring, ring[0]])
    message = f"depends_on makes a cycle: {shown} (each waits for the next, so none is ever ready)"
    return found.finding("dependency-cycle", ["depends_on", index], message, "remove one of these dependencies")


def cross(
    ctx: Context,
    initiative: Initiative,
    folders: dict[str, list[Vouched]],
    state: dict[str, Any] | None,
    reader: Reader,
    now: datetime,
    stale_after: float,
) -> tuple[list[Finding], list[ActiveSession]]:
    """What `references` and `sessions` find, from the store's rows of each record folder (live, then archived, by
    kind; store/folders.vouch has just vouched for them): each rule runs on the records that could break it alone (a
    repeated id or a file name that does not start with it, a decision's phase outside the phases, a record naming
    another, an active session), found by queries, which finds what running it on every record finds."""
    made: dict[tuple[str, str], FileRead] = {}
    store = ctx.store

    def reads(vouched: Vouched, kind: str, where: str, args: tuple[Any, ...] = ()) -> list[FileRead]:
        """The records of a folder with a mapping that the SQL test `where` selects, in file-name order: from their
        facts, or read whole when the store keeps none."""
        # The names first, from the index of the columns tested (store/cache.py), then the facts of those alone.
        names = [row[0] for row in store.select(vouched.prefix, "name", f"valid IS NOT NULL AND ({where})", args)]
        found = store.facts_of(vouched.prefix, sorted(names))
        out: list[FileRead] = []
        shown = ctx.display(vouched.folder) + "/"
        for name, text in found:
            key = (vouched.prefix, name)
            if key not in made:
                data = decode(text) if text is not None else None
                if isinstance(data, dict):
                    made[key] = reader.unread(vouched.folder, name, shown + name, kind, data)
                else:
                    made[key] = reader.file(vouched.folder / name, kind)
            if made[key].mapping is not None:
                out.append(made[key])
        return out

    ids = {kind: _Ids(ctx, found) for kind, found in folders.items()}
    suspects: dict[str, list[FileRead]] = {}
    for kind, found_all in folders.items():
        prefixes = [vouched.prefix.rstrip("/") for vouched in found_all]
        marks = ", ".join("?" * len(prefixes))
        repeated = [
            row[0]
            for row in store.query(
                f"SELECT rid FROM files WHERE folder IN ({marks}) AND rid IS NOT NULL AND valid IS NOT NULL "
                "GROUP BY rid HAVING count(*) > 1",
                prefixes,
            )
        ]
        suspects[kind] = []
        for vouched in found_all:
            picked = "rid IS NOT NULL AND NOT (name = rid || '.md' OR substr(name, 1, length(rid) + 1) = rid || '-')"
            if repeated:
                picked += f" OR rid IN ({', '.join('?' * len(repeated))})"
            suspects[kind] += reads(vouched, kind, picked, tuple(repeated))
    out, _ids = identities(ctx, suspects)
    every_id = _Ids(ctx, [vouched for found in folders.values() for vouched in found])
    numbers = phase_numbers(State(state)) if state is not None else None
    folder = ctx.display(initiative.folder("decision")) + "/"
    outside = "refers = 1"
    if numbers is not None:
        outside += f" OR (phase IS NOT NULL AND (phase < {int(numbers.start)} OR phase >= {int(numbers.stop)}))"
    for vouched in folders["decision"]:
        for read in reads(vouched, "decision", outside):
            out += decision_references(read, ids["decision"], numbers, folder)
    for vouched in folders["session"]:
        for read in reads(vouched, "session", "refers = 1"):
            out += session_references(read, ids["session"])
    for vouched in folders["blocker"]:
        for read in reads(vouched, "blocker", "refers = 1"):
            out += blocker_references(read, numbers, every_id)
    depending: list[FileRead] = []  # the tasks that name another: the only ones a cycle can go through
    for vouched in folders["task"]:
        depending += reads(vouched, "task", "refers = 1")
        for read in reads(vouched, "task", outside):
            out += task_references(read, ids["task"], numbers)
    out += task_cycles(depending)
    active = [read for vouched in folders["session"] for read in reads(vouched, "session", "status = 'active'")]
    more, seen = sessions(ctx, active, now, stale_after)
    return out + more, seen


class _Ids:
    """The ids of the records with a mapping in some vouched folders, looked up in the store one at a time (the few
    references a check follows), never all loaded."""

    def __init__(self, ctx: Context, found: list[Vouched]) -> None:
        self._store = ctx.store
        self._folders = [vouched.prefix.rstrip("/") for vouched in found]
        self._known: dict[str, bool] = {}

    def __contains__(self, record_id: object) -> bool:
        if not isinstance(record_id, str):
            return False
        if record_id not in self._known:
            marks = ", ".join("?" * len(self._folders))
            found = self._store.query(
                f"SELECT 1 FROM files WHERE folder IN ({marks}) AND rid = ? AND valid IS NOT NULL LIMIT 1",
                (*self._folders, record_id),
            )
            self._known[record_id] = bool(found)
        return self._known[record_id]


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
