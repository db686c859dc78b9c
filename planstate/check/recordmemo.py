"""What a check keeps of each record file between runs, by its stat identity: after a write, only what changed is read.

When the findings memo (memo.py) misses because some file changed, a check need not judge every
record again: for each record folder it keeps, in `.planning/.local/cache/rows-<folder>-v3.marshal`,
each record's name and stat identity with what the rules need of it, by column (`Folder`): its id,
whether its front matter is a mapping and valid, a decision's phase, its facts when it names another
record or is an active session or an open blocker, what the per-file rules found in it, whether its
file name starts with its id, its status and order, and a session's start and end (the resume
brief's records come from those). A record whose identity is the one kept is not read; the others
are read and judged now, and their rows kept in a part beside the rows kept whole (`DELTA`), which
is all a check after a write rewrites, until many records were touched since (`DELTA_MAX`). The
rules across records (duplicate ids, file names, references, active sessions) then run on the few
records that could break one (recordrules.cross), which finds exactly what running them on every
record finds. As for the front-matter cache's rows, an identity taken less than the filesystem's
timestamp tick after its file last changed does not vouch for the bytes read (cache.settled): such a
row is kept with when it was read and read again next time. The rows are kept under the identity of
planstate's own files, so another version judges every record again; with none kept, or many records
changed, the check runs in full (through the cache's rows, all fetched at once) and keeps them.
Losing or corrupting them costs only time.
"""

from __future__ import annotations

import bisect
import contextlib
import marshal
import os
from collections.abc import Iterable
from itertools import compress
from operator import ne
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.check.memo import finding_data
from planstate.check.recordrules import name_matches
from planstate.core.clock import instant
from planstate.model.kinds import OPEN_BLOCKERS, to_json
from planstate.store import recordfiles
from planstate.store.cache import drop_older, exact_json, settled

if TYPE_CHECKING:
    from planstate.check.checks import Checker
    from planstate.check.reader import FileRead, Reader
    from planstate.core.watched import Entries, Identity, Token
    from planstate.store.context import Context

VERSION = 4  # bump whenever what a row holds changes
MAX_CHANGED = 64  # records changed in a folder above which a run in full is faster than judging them one by one
DELTA_MAX = 256  # records changed since the rows were kept whole above which they are kept whole again
DELTA = ".delta.marshal"  # the suffix of the part that holds the rows changed since (`path` with it)
NO_MAPPING, INVALID, VALID = 0, 1, 2  # a row's front matter: no mapping, a mapping with schema problems, valid


class Unkept(Exception):
    """What a check needs of a record cannot be had from kept rows: the check runs in full."""


class Row(NamedTuple):
    """What the rules need of one record file: its id (None unless text), how its front matter is (`VALID`...), a
    decision's phase number (None unless an integer), its facts as the cache's JSON when it names another record or
    is an active session or an open blocker (else None), the data of what the per-file rules found in it, and
    whether its file name does not start with its id; and its status and order, as its summary has them, and a
    session's start and end (clock.instant: None for other records)."""

    id: str | None
    shape: int
    phase: int | None
    facts: str | None
    findings: list[list[Any]]
    misnamed: bool
    status: str | None  # its status, when text
    order: str  # what the regions order it by (its summary's order: recordfiles.ORDER)
    started: int | None
    ended: int | None


class Folder(NamedTuple):
    """A record folder as a check sees it: its record files' names in name order and, by column, their rows (the
    rare parts by name)."""

    folder: Path
    kind: str
    shown: str  # the folder as findings show it, with a trailing separator
    names: list[str]
    ids: list[str | None]
    shapes: list[int]
    phases: list[int | None]
    facts: dict[str, str]
    findings: dict[str, list[list[Any]]]
    misnamed: list[str]
    statuses: list[str | None]
    orders: list[str]
    starts: list[int | None]
    ends: list[int | None]

    def columns(self) -> tuple[list[Any], ...]:
        """The columns that hold a value for each record, in name order (ids, shapes, phases, statuses, orders,
        starts, ends)."""
        return (self.ids, self.shapes, self.phases, self.statuses, self.orders, self.starts, self.ends)

    def row(self, index: int) -> Row:
        """The row of the record at `index`."""
        name = self.names[index]
        return Row(
            self.ids[index],
            self.shapes[index],
            self.phases[index],
            self.facts.get(name),
            self.findings.get(name, []),
            name in self.misnamed,
            self.statuses[index],
            self.orders[index],
            self.starts[index],
            self.ends[index],
        )


def row_of(read: FileRead) -> Row | None:
    """The row of a record read (and judged); None when its facts cannot be kept exactly."""
    data = read.mapping
    findings = [finding_data(f) for f in read.findings or ()]
    if data is None:
        return Row(None, NO_MAPPING, None, None, findings, False, None, "", None, None)
    record_id = data.get("id")
    record_id = record_id if isinstance(record_id, str) else None
    kind = read.kind
    phase = data.get("phase") if kind == "decision" else None
    facts = None
    if names_another(data) or _kept_whole(kind, data.get("status")):
        facts = exact_json(recordfiles.facts(data))
        if facts is None:
            return None
    session = kind == "session"
    return Row(
        record_id,
        VALID if read.valid else INVALID,
        phase if isinstance(phase, int) and not isinstance(phase, bool) else None,
        facts,
        findings,
        record_id is not None and not name_matches(read.name, record_id),
        *_status_order(read, data),
        instant(data.get("started")) if session else None,
        instant(data.get("ended")) if session else None,
    )


def _kept_whole(kind: str, status: Any) -> bool:
    """Whether a record's facts are kept whatever they name: an active session's (the rules on active sessions and the
    brief read them) and an open blocker's (the brief judges which phases it blocks from them)."""
    return (kind == "session" and status == "active") or (kind == "blocker" and status in OPEN_BLOCKERS)


def _status_order(read: FileRead, data: dict[str, Any]) -> tuple[str | None, str]:
    """A record's status (when text) and order as its summary has them (the one the cache keeps, when it was had)."""
    known = read.summary  # as the cache keeps it: id, order, status, fingerprint, problem, unknown keys
    if known is not None:
        return known[2], known[1]
    status = data.get("status")
    return status if isinstance(status, str) else None, str(to_json(data.get(recordfiles.ORDER[read.kind])))


def names_another(data: dict[str, Any]) -> bool:
    """Whether a record's front matter has a fact that could name another record (or phase, for a blocker)."""
    get = data.get
    if get("supersedes") is not None or get("superseded_by") is not None or get("resumed_from") is not None:
        return True
    affects = get("affects")
    return isinstance(affects, list) and bool(affects)


def path(ctx: Context, folder: Path) -> Path:
    """Where the rows of a record folder are kept whole (the rows changed since are beside it: `delta_path`)."""
    from planstate.core.layout import LOCAL
    from planstate.store.cache import versioned

    return versioned(ctx.root / LOCAL / "cache", _name(ctx, folder), VERSION, ".marshal")


def delta_path(target: Path) -> Path:
    """Where the rows changed since the rows at `target` were kept whole are kept."""
    return target.with_name(target.name.removesuffix(".marshal") + DELTA)


def _name(ctx: Context, folder: Path) -> str:
    """The name of the rows of a record folder, whatever their format."""
    from planstate.core.digests import blake2b_hex

    return f"rows-{blake2b_hex(ctx.cache_key(folder).encode('utf-8'), 8)}"


def folder(
    ctx: Context,
    reader: Reader,
    where: Path,
    kind: str,
    listed: Entries | None,
    code: str,
    seen: int,
    judge: Any,
    listing: str | None = None,
    journal: Token | None = None,
) -> Folder:
    """The rows of a record folder whose entries and identities are `listed` (None: it does not exist), taken at
    `seen` (ns) and, when a watcher serves the workspace, after the journal's `journal`: the kept row of each record
    whose identity is the one kept and vouches for it, the others read and judged (`judge`) now; the rows kept again
    when any changed. `listing` is the key of those entries (memo.inputs' `keys`): when it is the one kept with the
    rows, and each vouched for its row, they are taken as they are. When the rows were kept after a token of the same
    journal, only the records it names as changed since (and those the listing looked at again) are compared.
    `code` is the key of planstate's own files. Raises Unkept when none were kept or more than MAX_CHANGED records
    changed or went (a run in full is faster then)."""

    shown = ctx.display(where) + os.sep
    if listed is None:
        if os.path.lexists(where):  # not listed with the others: never take it for empty
            raise Unkept(f"{where} was not listed")
        return _columns(where, kind, shown, [], [])
    target = path(ctx, where)
    kept = _load(where, target, code, kind, shown)
    if kept is None:
        if not any(map(recordfiles.is_record_name, listed.names)):
            return _columns(where, kind, shown, [], [])
        raise Unkept(f"no rows kept of {where}")  # a cold check, another version: a run in full is faster, and keeps
    kept_listed, old, old_identities, unsettled, base, since = kept
    if unsettled:
        unsettled = _unsettled(unsettled, old, old_identities)
    if not unsettled and kept_listed is not None and kept_listed == listing:
        return old  # the same entries with the same identities, in the same order, each vouching for its row
    asked = _asked(ctx, where, listed, since) if journal is not None else None
    if asked is not None:
        now = {name: identity for name, (_mode, identity) in listed.lookup(asked).items()}
        removed = {name for name in asked if name not in now and _index(old, name) is not None}
        arrived = {
            name: identity
            for name, identity in now.items()
            if recordfiles.is_record_name(name) and old_identities.of(name) != identity
        }
    else:
        removed, arrived = _differ(old, old_identities.aligned(old.names), listed)
    changed = sorted(arrived.keys() | (unsettled.keys() - removed))
    if len(removed) == len(old.names) and not arrived:
        return _columns(where, kind, shown, [], [])
    if len(changed) + len(removed) > MAX_CHANGED:  # each is an edit of every column (an archive moves thousands)
        raise Unkept(f"{len(changed) + len(removed)} records of {where} changed or went")
    identities: dict[str, Identity] = {name: old_identities.of(name) for name in changed if name not in arrived}
    identities.update(arrived)
    fresh: dict[str, Row] = {}
    unkept: list[str] = []
    recent: dict[str, int] = {}
    for name in changed:
        read = reader._read(where / name, kind)
        judge(read)
        row = row_of(read)
        if row is None:
            raise Unkept(f"{where / name}: its facts do not survive the cache's JSON")
        fresh[name] = row
        if read.identity != identities[name]:  # it changed since it was listed: its row is used now, not kept
            unkept.append(name)
        elif not settled(identities[name], seen):
            recent[name] = seen
    found = _edited(old, removed, fresh)
    touched = Base(base.token, base.touched | removed | fresh.keys())
    kept_listing = None if unkept or recent else listing
    save(target, code, kept_listing, found, old_identities.over_with(identities), unkept, recent, touched, journal)
    return found


def _asked(ctx: Context, where: Path, listed: Entries, since: Token | None) -> list[str] | None:
    """The entries of a record folder whose identity may differ from the one kept with their rows, kept after the
    journal's `since`: those the journal names as changed since, and those its listing looked at again (a change
    after the journal's answer); None when the journal cannot tell, or the folder was listed in full."""
    from planstate.core import watched

    if since is None or listed.again is None:
        return None
    names = watched.changed(ctx.root, str(where), since)
    return None if names is None else [*names, *listed.again]


def _differ(old: Folder, identities: list[Identity], listed: Entries) -> tuple[set[str], dict[str, Identity]]:
    """The records of `old` (with their `identities`) gone from the folder's entries `listed`, and those whose
    identity differs from the one kept or that are new, with their identities now."""
    entries, entry_identities = listed.names, listed.identities  # read only now: an unchanged folder's are not
    # What changed, by whole-list operations in C (a map, a compress, a set difference of names): no step per record
    # in Python, and no hash of an identity (17,000 of them).
    by_name = dict(zip(entries, entry_identities, strict=True))
    differ = list(compress(old.names, map(ne, map(by_name.get, old.names), identities)))  # changed or gone
    removed = {name for name in differ if name not in by_name}
    added = [name for name in set(entries).difference(old.names) if recordfiles.is_record_name(name)]
    return removed, {name: by_name[name] for name in [*differ, *added] if name not in removed}


def current(checker: Checker, where: Path, kind: str) -> Folder | None:
    """The rows of a record folder as they are now (see `folder`): those the checker's last run took, else from the
    listing its memo's key took; None when they cannot be had that way (none kept, many changed, no key)."""
    from planstate.check.memo import worth_keeping
    from planstate.store.memo import code_key

    taken = checker.rows.get(where)
    if taken is not None or checker.memo_key is None or not worth_keeping(checker.listings):
        return taken
    code = code_key()
    if code is None:
        return None
    listed, listing = checker.listings.get(str(where)), checker.listing_keys.get(str(where))
    seen, journal = checker.memo_key.seen, checker.memo_key.token
    try:
        found = folder(checker.ctx, checker.reader, where, kind, listed, code, seen, checker.judge, listing, journal)
    except Unkept:
        return None
    checker.rows[where] = found
    return found


def _unsettled(kept: dict[str, int], found: Folder, identities: Identities) -> dict[str, int]:
    """The kept rows read too soon after their file last changed for its identity to vouch for them: each is read
    again (unless its read is known to have come late enough after all)."""
    return {
        name: at
        for name, at in kept.items()
        if _index(found, name) is not None and not settled(identities.of(name), at)
    }


class Identities:
    """The stat identity kept with each row, by its record's name: those kept with the rows kept whole stay
    marshalled until every one is asked for (a write changes a few records of 10,000, and the journal names them),
    with those of the rows changed since over them."""

    __slots__ = ("_blob", "_names", "_whole", "over")

    def __init__(
        self,
        names: list[str],
        whole: list[Identity] | None = None,
        blob: bytes | None = None,
        over: dict[str, Identity] | None = None,
    ) -> None:
        self._names, self._whole, self._blob = names, whole, blob  # `names`: of the rows kept whole, in name order
        self.over = over or {}

    def _all(self) -> list[Identity]:
        """The identities kept with the rows kept whole, in name order. Raises Unkept when they cannot be read."""
        if self._whole is None:
            try:
                whole = marshal.loads(self._blob or b"")
            except (EOFError, ValueError, TypeError):
                whole = None
            if not isinstance(whole, list) or len(whole) != len(self._names):
                raise Unkept("the identities kept with the rows cannot be read")
            self._whole, self._blob = whole, None
        return self._whole

    def of(self, name: str) -> Identity:
        """The identity kept with the row of `name` (one of the rows)."""
        identity = self.over.get(name)
        if identity is None:
            index = bisect.bisect_left(self._names, name)
            if index < len(self._names) and self._names[index] == name:
                identity = self._all()[index]
        return identity  # type: ignore[return-value]  # None only for a name that has no row, never asked

    def aligned(self, names: list[str]) -> list[Identity]:
        """The identities of the rows of `names` (each has one), in that order."""
        whole = self._all()
        if not self.over and names == self._names:
            return whole
        by_name = dict(zip(self._names, whole, strict=True))
        by_name.update(self.over)
        return list(map(by_name.__getitem__, names))

    def over_with(self, now: dict[str, Identity]) -> Identities:
        """These identities with those `now` over them."""
        return Identities(self._names, self._whole, self._blob, {**self.over, **now})


def _edited(old: Folder, removed: set[str], fresh: dict[str, Row]) -> Folder:
    """The rows `old` but those `removed`, with the rows `fresh` (read now) in place of the old ones or added, in
    name order. Each column is copied once and edited where it changed (a write changes a few records of
    thousands)."""
    names = list(old.names)
    columns = [list(column) for column in old.columns()]
    for name in sorted(removed, reverse=True):
        index = bisect.bisect_left(names, name)
        del names[index]
        for column in columns:
            del column[index]
    for name in sorted(fresh):
        index = bisect.bisect_left(names, name)
        if index == len(names) or names[index] != name:
            names.insert(index, name)
            for column in columns:
                column.insert(index, None)
        row = fresh[name]
        values = (row.id, row.shape, row.phase, row.status, row.order, row.started, row.ended)
        for column, value in zip(columns, values, strict=True):
            column[index] = value
    facts = {name: text for name, text in old.facts.items() if name not in removed and name not in fresh}
    findings = {name: items for name, items in old.findings.items() if name not in removed and name not in fresh}
    misnamed = {name for name in old.misnamed if name not in removed and name not in fresh}
    for name, row in fresh.items():
        if row.facts is not None:
            facts[name] = row.facts
        if row.findings:
            findings[name] = row.findings
        if row.misnamed:
            misnamed.add(name)
    ids, shapes, phases, statuses, orders, starts, ends = columns
    return Folder(
        old.folder,
        old.kind,
        old.shown,
        names,
        ids,
        shapes,
        phases,
        facts,
        findings,
        sorted(misnamed),
        statuses,
        orders,
        starts,
        ends,
    )


def _columns(where: Path, kind: str, shown: str, names: list[str], rows: list[Row]) -> Folder:
    """A folder's rows by column."""
    return Folder(
        where,
        kind,
        shown,
        names,
        [row.id for row in rows],
        [row.shape for row in rows],
        [row.phase for row in rows],
        {name: row.facts for name, row in zip(names, rows, strict=True) if row.facts is not None},
        {name: row.findings for name, row in zip(names, rows, strict=True) if row.findings},
        [name for name, row in zip(names, rows, strict=True) if row.misnamed],
        [row.status for row in rows],
        [row.order for row in rows],
        [row.started for row in rows],
        [row.ended for row in rows],
    )


class Base(NamedTuple):
    """The rows kept whole that kept rows were read from: the token they were kept with, and the names of the records
    whose rows changed (or went) since, which the part beside them holds."""

    token: str
    touched: set[str]


class _Kept(NamedTuple):
    """Rows as kept: whole (`token`: theirs; `identities` still marshalled), or the part changed since (`token`: that
    of the rows kept whole it was made from; `removed`: the records gone since). `journal`: the journal's token the
    entries they were judged against were taken after, when a watcher served the workspace."""

    token: str
    journal: Token | None
    listed: str | None
    unsettled: dict[str, int]
    found: Folder
    identities: bytes | list[Identity]
    removed: list[str]


def _load(
    where: Path, target: Path, code: str, kind: str, shown: str
) -> tuple[str | None, Folder, Identities, dict[str, int], Base, Token | None] | None:
    """What is kept at `target` under `code`, `kind` and `shown`, with the rows changed since it was kept whole (the
    part beside it, when that was made from these rows: another is left alone): the key of the folder's listing (when
    every row of it was kept and settled), its rows, their identities, when each row whose identity did not yet
    vouch for it was read, what it was read from, and the journal's token its entries were taken after; None when
    nothing is."""
    head = (VERSION, code, kind, shown)
    whole = _unpacked(where, kind, shown, _read(target, head), None)
    if whole is None or not isinstance(whole.identities, bytes):
        return None
    found, base = whole.found, Base(whole.token, set())
    identities = Identities(found.names, None, whole.identities)
    changed = _unpacked(where, kind, shown, _read(delta_path(target), (*head, whole.token)), whole.token)
    if changed is None or not isinstance(changed.identities, list):
        return whole.listed, found, identities, whole.unsettled, base, whole.journal
    fresh = changed.found
    rows = {name: fresh.row(i) for i, name in enumerate(fresh.names)}
    identities = identities.over_with(dict(zip(fresh.names, changed.identities, strict=True)))
    gone = {name for name in changed.removed if _index(found, name) is not None and name not in rows}
    found = _edited(found, gone, rows)
    touched = Base(whole.token, {*changed.removed, *rows})
    return changed.listed, found, identities, changed.unsettled, touched, changed.journal


def _read(target: Path, head: tuple[Any, ...]) -> list[Any] | None:
    """The rest of what is kept at `target` after `head` (its version, the key of planstate's own files, and what it
    is of), when it starts so; None when nothing readable is."""
    try:
        with open(target, "rb") as handle:
            kept = marshal.loads(handle.read())  # marshal.load reads a file in small pieces: 10x slower
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(kept, tuple) or kept[: len(head)] != head:
        return None
    return list(kept[len(head) :])


def _unpacked(where: Path, kind: str, shown: str, kept: list[Any] | None, token: str | None) -> _Kept | None:
    """Rows as `_read` gave them: kept whole (`token` None: theirs comes first), or the part changed since the rows
    kept whole with `token` (the names of the records gone since come first); None when they are not such."""
    if kept is None:
        return None
    try:
        removed: list[str] = []
        if token is None:
            token, journal, listed, unsettled, names, identities, *columns = kept
        else:
            journal, listed, unsettled, removed, names, identities, *columns = kept
        found = Folder(where, kind, shown, names, *columns)
        if not isinstance(token, str) or any(len(c) != len(names) for c in found.columns()):
            raise ValueError
        if isinstance(identities, list) and len(identities) != len(names):
            raise ValueError
        "".join(names), "".join(removed)  # compared with names: text only (a TypeError otherwise, found in C)
        listed = listed if isinstance(listed, str) else None
        return _Kept(token, _token(journal), listed, dict(unsettled), found, identities, removed)
    except (TypeError, ValueError):
        return None


def _token(kept: Any) -> Token | None:
    """A journal's token as kept (its epoch and number); None when it is not one."""
    if isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], str) and type(kept[1]) is int:
        return kept[0], kept[1]
    return None


def _index(found: Folder, name: str) -> int | None:
    """Where `found` holds the row of `name` (its names are in name order); None when it holds none."""
    index = bisect.bisect_left(found.names, name)
    return index if index < len(found.names) and found.names[index] == name else None


def save(
    target: Path,
    code: str,
    listing: str | None,
    found: Folder,
    identities: Identities,
    unkept: list[str],
    unsettled: dict[str, int],
    base: Base | None = None,
    journal: Token | None = None,
) -> None:
    """Keep the rows of a folder but those `unkept`, with the key of its entries, `listing` (None unless every row is
    kept and settled), when each row `unsettled` was read and the journal's token its entries were taken after
    (`journal`: None unless every record among them has a row or is `unkept`); best effort, and never bringing back a
    workspace folder deleted meanwhile. With the rows kept whole they were read from (`base`, and the records touched
    since), only the rows of those records are kept (in the part beside them), while they are few: a write changes
    one record of 10,000, whose rows are 1.5 MB to marshal and write."""
    left_out = set(unkept)
    if left_out:
        found = _select(found, [i for i, n in enumerate(found.names) if n not in left_out])
    cache = target.parent
    if not cache.parent.parent.is_dir():  # .planning/ is gone
        return
    head = (VERSION, code, found.kind, found.shown)
    if base is not None and len(touched := base.touched | left_out) <= DELTA_MAX:
        at = {name: index for name in touched if (index := _index(found, name)) is not None}
        part = _select(found, sorted(at.values()))
        removed = sorted(touched.difference(at))
        changed = (journal, listing, unsettled, removed, part.names, list(map(identities.of, part.names)))
        _write(delta_path(target), (*head, base.token, *changed, *_columns_kept(part)))
        return
    token = os.urandom(8).hex()  # names these rows for the part that will hold those changed since
    blob = marshal.dumps(identities.aligned(found.names))  # read only when every identity is asked for
    _write(target, (*head, token, journal, listing, unsettled, found.names, blob, *_columns_kept(found)))
    with contextlib.suppress(OSError):
        delta_path(target).unlink()


def _columns_kept(found: Folder) -> tuple[Any, ...]:
    """The columns of some rows as they are kept (after their names): each status and order text once, which the
    others refer to (a tenth of the time to read 10,000 rows)."""
    shared: dict[Any, Any] = {}
    statuses = [shared.setdefault(status, status) for status in found.statuses]
    orders = [shared.setdefault(order, order) for order in found.orders]
    return (*found[4:10], statuses, orders, found.starts, found.ends)


def _select(found: Folder, chosen: list[int]) -> Folder:
    """The rows of `found` at the indexes `chosen` (in name order)."""
    names = [found.names[i] for i in chosen]
    kept = set(names)
    return Folder(
        found.folder,
        found.kind,
        found.shown,
        names,
        [found.ids[i] for i in chosen],
        [found.shapes[i] for i in chosen],
        [found.phases[i] for i in chosen],
        {name: text for name, text in found.facts.items() if name in kept},
        {name: items for name, items in found.findings.items() if name in kept},
        [name for name in found.misnamed if name in kept],
        [found.statuses[i] for i in chosen],
        [found.orders[i] for i in chosen],
        [found.starts[i] for i in chosen],
        [found.ends[i] for i in chosen],
    )


def _write(target: Path, data: tuple[Any, ...]) -> None:
    """Write kept rows to `target` whole (`files.write_cache`); best effort. Marshal's own format (not version 2):
    a text kept twice is written once and referred to."""
    from planstate.core.files import write_cache

    with contextlib.suppress(ValueError):  # a value marshal cannot keep: nothing is kept
        write_cache(target, marshal.dumps(data))


def keep_reads(
    ctx: Context,
    where: Path,
    kind: str,
    reads: list[FileRead],
    listed: Entries | None,
    code: str,
    seen: int,
    listing: str | None = None,
    journal: Token | None = None,
) -> None:
    """Keep the rows of a folder a check read in full (`reads`, in name order, of the entries `listed` at `seen`,
    whose key is `listing`, taken after the journal's `journal`)."""
    shown = ctx.display(where) + os.sep
    by_name: dict[str, Identity] = dict(zip(listed.names, listed.identities, strict=True)) if listed is not None else {}
    names: list[str] = []
    identities: list[Identity] = []
    rows: list[Row] = []
    unsettled: dict[str, int] = {}
    for read in reads:
        row = row_of(read) if read.findings is not None else None
        if row is None:  # not judged, or its facts cannot be kept: the journal cannot say when to look at it again
            journal = None
        identity = by_name.get(read.name)
        if identity is None or row is None or read.identity != identity:
            continue  # not judged, or changed since it was listed (the journal names it later)
        names.append(read.name)
        identities.append(identity)
        rows.append(row)
        if not settled(identity, seen):
            unsettled[read.name] = seen
    complete = listed is not None and len(names) == len(reads) and not unsettled
    found = _columns(where, kind, shown, names, rows)
    target = path(ctx, where)
    kept_listing = listing if complete else None
    save(target, code, kept_listing, found, Identities(names, identities), [], unsettled, None, journal)
    drop_older(target.parent, _name(ctx, where), VERSION, ".marshal")  # a run in full, as after an upgrade
    drop_older(target.parent, _name(ctx, where), VERSION, DELTA)


def reads_of(reader: Reader, found: Folder, names: Iterable[str]) -> list[FileRead]:
    """Reads of some records of a folder that hold only their facts (each reads its file if a finding about it must
    be located), in the order of `names`."""
    from planstate.store.cache import decode

    out: list[FileRead] = []
    for name in names:
        text = found.facts.get(name)
        data: dict[str, Any] = decode(text) if text is not None else {}
        if text is None:
            index = bisect.bisect_left(found.names, name)  # names are in name order: no map of all of them
            if found.ids[index] is not None:
                data["id"] = found.ids[index]
            if found.phases[index] is not None:
                data["phase"] = found.phases[index]
        out.append(reader.unread(found.folder, name, found.shown + name, found.kind, data))
    return out
