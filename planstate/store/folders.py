"""A record folder through the store: one scan vouches for its rows, then what commands show are queries over them.

`vouch` scans the folder (store/scan.py: one `lstat` per entry, the floor that keeps a hand edit visible) and
brings the store's rows of its record files up to what the files hold now, by the store's trust rule
(store/cache.py): when the scan's digest is the one the store vouched for last, only the few files too recent then
are looked at again; else each file whose identity does not vouch for its row is read (its bytes' digest first,
then a parse), and the rows of files gone are deleted. Then a region's first records, its counts, a list's page,
the open blockers, the brief's newest decisions and sessions are queries (`summaries`, `head`, `columns`,
`select`). A write that changes a folder it vouched for keeps the folder's row up to date itself (`wrote`), so the
next command finds the digest it expects.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.collector import without_collector
from planstate.core.errors import PlanstateError
from planstate.store.cache import FolderRow, settled
from planstate.store.scan import Identity, Listing, scan

if TYPE_CHECKING:
    from planstate.store.cache import Store
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.recordfiles import Summary


class Vouched(NamedTuple):
    """A record folder whose rows the store now holds as its files are: its scan, and the entries named like record
    files that are no regular file (a link, a FIFO: no row vouches for one; readers refuse it)."""

    folder: Path
    prefix: str  # its files' keys start with this (`decisions/`)
    listing: Listing
    strange: list[str]


@without_collector  # an identity per record file: 10,000 of them, and no cycles
def vouch(
    ctx: Context,
    folder: Path,
    kind: str,
    listing: Listing | None = None,
    prime: Callable[[list[str]], bool] | None = None,
) -> Vouched | None:
    """Bring the store's rows of the record files of `folder` (of `kind`) up to what the files hold now, from a scan
    taken now (or `listing`, one taken just before by the caller); None when the folder cannot be listed or the store
    cannot be used (the caller reads the files). `prime`, given the names of the files whose rows must be made anew,
    may make them itself (a check reads many in two processes) and tells whether it did."""
    store = ctx.store
    if listing is None and folder.absolute() in ctx.vouched:
        return ctx.vouched[folder.absolute()]  # scanned once in a `vouching` scope (a check, a write)
    seen = time.time_ns()  # before the scan: a change after it is seen next time
    if listing is None:
        listing = scan(folder)
    if listing is None:
        return None
    prefix = ctx.cache_key(folder) + "/"
    current = listing.digest()
    kept = store.folder_row(prefix)
    names, identities = listing.records()
    strange = _strange(names, identities)
    if kept is not None and kept.digest == current and not strange:
        if kept.recent:
            recent = [name for name in kept.recent if not _looked_again(ctx, store, folder, kind, name, listing, seen)]
            if recent != kept.recent:
                store.keep_folder(prefix, FolderRow(current, recent))
        return _vouched(ctx, Vouched(folder, prefix, listing, strange)) if store.save() else None
    rows = store.identities(prefix)
    odd = set(strange)
    todo = [
        (name, identity)
        for name, identity in zip(names, identities, strict=True)
        if identity is not None and name not in odd and not ((row := rows.get(name)) and row.trusted(identity))
    ]
    if todo and prime is not None and prime([name for name, _identity in todo]):
        rows = store.identities(prefix)  # what the primed reads saved
        todo = [(name, identity) for name, identity in todo if not ((row := rows.get(name)) and row.trusted(identity))]
    for name, identity in todo:
        _refresh(ctx, store, folder / name, kind, identity)
    recent = [
        name
        for name, identity in zip(names, identities, strict=True)
        if identity is not None and not settled(identity, seen)
    ]
    listed = set(names)
    store.forget(prefix + name for name in rows if name not in listed)  # gone
    store.keep_folder(prefix, FolderRow(current, recent) if not strange else None)
    # The queries that follow read the database: what was not written there cannot be answered from it.
    return _vouched(ctx, Vouched(folder, prefix, listing, strange)) if store.save() else None


def _vouched(ctx: Context, vouched: Vouched) -> Vouched:
    """A folder just vouched for, noted in an open `vouching` scope (a transaction's commit keeps the rows of those it
    writes into)."""
    if ctx.keeps_vouched:
        ctx.vouched[vouched.folder.absolute()] = vouched
    return vouched


def _strange(names: list[str], identities: list[Identity | None]) -> list[str]:
    """The record names no row can vouch for: no regular file, or a name SQLite cannot hold (undecodable bytes)."""
    if None not in identities and _keyable("\0".join(names)):
        return []
    return [name for name, identity in zip(names, identities, strict=True) if identity is None or not _keyable(name)]


def _keyable(name: str) -> bool:
    """Whether a file name can be a key of the store (text SQLite can hold: no undecodable bytes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _looked_again(ctx: Context, store: Store, folder: Path, kind: str, name: str, listing: Listing, seen: int) -> bool:
    """Look again at a file too recent, when its folder's row was kept, for its identity to vouch for it: its row is
    renewed (same bytes) or made anew (other bytes). Tell whether its identity now vouches for it alone."""
    from bisect import bisect_left

    at = bisect_left(listing.names, name)  # sorted: one search, no map of 10,000 names
    if at == len(listing.names) or listing.names[at] != name:
        return True  # gone: the digest would have changed; nothing to look at
    identity = listing.identities[at]
    _refresh(ctx, store, folder / name, kind, identity)
    return settled(identity, seen)


def _refresh(ctx: Context, store: Store, path: Path, kind: str, identity: Identity) -> None:
    """Make the row of a record file whose identity does not vouch for it: renewed when its bytes have the row's
    digest, else read anew (through the store, summarized); a file that cannot be read or parsed gets a row that
    says so."""
    from planstate.core.files import read_bytes

    key = ctx.cache_key(path)
    try:
        raw = read_bytes(path, ctx.root, ctx.root.parent)
    except PlanstateError:
        store.broken(key, identity, None)
        return
    if store.renewed(key, identity, raw) is not None:
        return
    try:
        ctx.cached_parse(path, raw, ctx.parser(path), identity)
    except PlanstateError:
        store.broken(key, identity, raw)


def wrote(ctx: Context, vouched: Vouched, written: Iterable[str], gone: Iterable[str]) -> None:
    """After a write under the lock into a folder it vouched for: the folder's row as a scan would make it now (the
    files `written` at their new identities, too recent to vouch for alone; those `gone`, left out), so the next
    command trusts the rows it already has. A file changed by hand meanwhile only changes the next scan's digest."""
    from bisect import bisect_left

    from planstate.store.scan import IDENTITY

    listing = vouched.listing
    names, modes, identities = list(listing.names), list(listing.modes), list(listing.identities)
    kept = ctx.store.folder_row(vouched.prefix)
    recent = set(kept.recent if kept is not None else ())
    for name in gone:  # the names are sorted: each found, put or taken out where it sorts
        at = bisect_left(names, name)
        if at < len(names) and names[at] == name:
            del names[at], modes[at], identities[at]
        recent.discard(name)
    for name in written:
        try:
            info = os.lstat(vouched.folder / name)
        except OSError:
            ctx.store.keep_folder(vouched.prefix, None)  # gone already: the next scan compares every row
            return
        at = bisect_left(names, name)
        if at < len(names) and names[at] == name:
            modes[at], identities[at] = info.st_mode, IDENTITY(info)
        else:
            names.insert(at, name)
            modes.insert(at, info.st_mode)
            identities.insert(at, IDENTITY(info))
        recent.add(name)
    ctx.store.keep_folder(vouched.prefix, FolderRow(Listing(names, modes, identities).digest(), sorted(recent)))


# ---------------------------------------------------------------------------- queries


def summaries(
    ctx: Context, folder: Path, kind: str, *, on_disk: bool = False
) -> tuple[list[Summary], list[PlanstateError]]:
    """The summaries of the records of `kind` in one folder, in file-name order (a committing transaction's records
    as they will be, unless `on_disk`), and the problems of the files that cannot be read or are no mapping."""
    from planstate.store.recordfiles import Summary, mapping, summarize

    where = folder.absolute()
    pending = {} if on_disk else {path.name: data for path, data in ctx.pending.items() if path.parent == where}
    leaving = set() if on_disk else {path.name for path in ctx.leaving if path.parent == where}
    vouched = vouch(ctx, folder, kind)
    out: list[Summary] = []
    problems: list[PlanstateError] = []
    if vouched is not None:
        found = ctx.store.select(vouched.prefix, "name, summary", "", (), "ORDER BY name")
        unsure = set(vouched.strange)
        texts = []
        for name, text in found:
            if name in leaving or name in pending:
                continue
            if text is None or text == "null":
                unsure.add(name)
            else:
                texts.append((name, text))
        decoded = _decoded(texts)
        make = Summary._make
        for (name, _text), values in zip(texts, decoded, strict=True):
            if values is None:
                unsure.add(name)
            else:
                out.append(make((folder, name, *values)))
        names = sorted(unsure - leaving - set(pending))
    else:
        from planstate.store.recordfiles import names as record_names

        names = [name for name in record_names(folder) if name not in leaving and name not in pending]
    for name in names:
        data = mapping(ctx, folder / name, problems)
        found_one = summarize(kind, folder / name, data) if data is not None else None
        if found_one is not None:
            out.append(found_one)
    for name, data in pending.items():
        found_one = summarize(kind, folder / name, data)
        if found_one is not None:
            out.append(found_one)
    out.sort(key=_NAME)
    return out, problems


def _NAME(summary: Summary) -> str:
    return summary.name


def _decoded(texts: list[tuple[str, str]]) -> list[list[Any] | None]:
    """Kept summaries (JSON lists of six values) decoded in one call of the decoder (10,000 calls cost several times
    more); one that is not such a list is None (its file is read instead)."""
    if not texts:
        return []
    try:
        values = json.loads("[" + ",".join(text for _name, text in texts) + "]")
    except ValueError:
        values = []
        for _name, text in texts:
            try:
                values.append(json.loads(text))
            except ValueError:
                values.append(None)
    if not isinstance(values, list) or len(values) != len(texts):
        return [None] * len(texts)
    return [value if isinstance(value, list) and len(value) == 6 else None for value in values]


class Head(NamedTuple):
    """The first records a region shows, in its order (at least its limit of them, or all), how many records it
    selects, and how many valid records there are."""

    first: list[Summary]
    selected: int
    valid: int


def head(
    ctx: Context,
    folder: Path,
    kind: str,
    *,
    hides: Collection[str] = (),
    only: Collection[str] | None = None,
    newest_first: bool,
    limit: int | None,
) -> Head | None:
    """The records of `kind` in `folder` a region shows (valid ones whose status is not one it `hides`, or is one of
    `only`), ordered by its field then id (newest first when asked), equal ones by file name: the first `limit` of
    them (None: all), with a committing transaction's records as they will be. None when a record cannot be shown
    (it does not validate or cannot be read: the caller takes every summary and reports it)."""
    from planstate.store.recordfiles import Summary, summarize

    vouched = vouch(ctx, folder, kind)
    if vouched is None or vouched.strange:
        return None
    store = ctx.store
    where = folder.absolute()
    pending = {path.name: data for path, data in ctx.pending.items() if path.parent == where}
    leaving = {path.name for path in ctx.leaving if path.parent == where}
    aside = [*pending, *leaving]
    tally = counts(ctx, vouched)
    total, invalid = tally.total, tally.total - tally.valid
    selected = sum(n for status, n in tally.valid_by_status.items() if _kept(status, hides, only))
    if aside:  # their files as they are now are not counted: they are about to change or go
        marks = ", ".join("?" * len(aside))
        before = store.select(
            vouched.prefix, f"name, valid IS NOT 1, {_shown(hides, only)}", f"name IN ({marks})", aside
        )
        for _name, bad, was_shown in before:
            total, invalid, selected = total - 1, invalid - bad, selected - was_shown
    if invalid:
        return None
    shown: list[Summary] = []
    for name, data in pending.items():
        found = summarize(kind, folder / name, data)
        if found is None or found.problem is not None:
            return None
        if (only is None or found.status in only) and found.status not in hides:
            shown.append(found)
    direction = "DESC" if newest_first else "ASC"
    clause = f"LIMIT {int(limit) + len(aside)}" if limit is not None else ""
    rows = store.select(
        vouched.prefix,
        "name, summary",
        f"valid = 1 AND {_shown(hides, only)}",
        (),
        f"ORDER BY ord {direction}, rid {direction}, name ASC {clause}",
    )
    kept = [(name, text) for name, text in rows if name not in pending and name not in leaving]
    make = Summary._make
    for (name, _text), values in zip(kept, _decoded(kept), strict=True):
        if values is None:
            return None
        shown.append(make((folder, name, *values)))
    if pending:
        shown.sort(key=_NAME)
        shown.sort(key=lambda s: (s.order, s.id), reverse=newest_first)
    first = shown if limit is None else shown[:limit]
    return Head(first, selected + len(shown) - len(kept), total - invalid + len(pending))


class Counts(NamedTuple):
    """How many record files a vouched folder holds, and how many of them are valid, by status (None: none)."""

    total: int
    valid_by_status: dict[str | None, int]

    @property
    def valid(self) -> int:
        """How many records are valid."""
        return sum(self.valid_by_status.values())


def counts(ctx: Context, vouched: Vouched) -> Counts:
    """The counts of a vouched folder, in one query over a narrow index (store/cache.py), whatever its size; entries
    no row vouches for (`strange`) count as files that are not valid."""
    total = len(vouched.strange)
    by_status: dict[str | None, int] = {}
    for valid, status, number in ctx.store.select(
        vouched.prefix, "valid, status, count(*)", "", (), "GROUP BY valid, status"
    ):
        total += number
        if valid == 1:
            by_status[status] = by_status.get(status, 0) + number
    return Counts(total, by_status)


def _kept(status: str | None, hides: Collection[str], only: Collection[str] | None) -> bool:
    """Whether a region shows a valid record of this status (the Python twin of `_shown`'s test)."""
    return (status is None or status not in hides) and (only is None or status in only)


def _shown(hides: Collection[str], only: Collection[str] | None) -> str:
    """The SQL test of a row a region shows by its status."""
    tests = ["valid = 1"]
    if hides:
        tests.append(hidden_test(hides))
    if only is not None:
        tests.append(f"status IN ({_words(only)})" if only else "0")
    return " AND ".join(tests)


def hidden_test(statuses: Collection[str]) -> str:
    """The SQL test of a row whose status is none of `statuses` (a row with no status passes)."""
    return f"(status IS NULL OR status NOT IN ({_words(statuses)}))" if statuses else "1"


def _words(statuses: Collection[str]) -> str:
    """Statuses as SQL text literals (planstate's own words, quoted as SQL quotes)."""
    return ", ".join("'" + status.replace("'", "''") + "'" for status in statuses)


class Columns(NamedTuple):
    """What a list decides from: each valid record's file name, region order text and status, and the names of the
    record files that are not valid or cannot be read (the caller reads those)."""

    rows: list[tuple[str, str, str | None]]
    unsure: list[str]


def columns(ctx: Context, folder: Path, kind: str) -> Columns | None:
    """The file name, order text and status of every valid record of `kind` in `folder`, from the store (none is
    read), and the records it cannot say them of; None when the folder cannot be vouched for."""
    vouched = vouch(ctx, folder, kind)
    if vouched is None:
        return None
    rows: list[tuple[str, str, str | None]] = []
    unsure = list(vouched.strange)
    for name, order, status, valid in ctx.store.select(
        vouched.prefix, "name, ord, status, valid", "", (), "ORDER BY name"
    ):
        if valid == 1 and order is not None:
            rows.append((name, order, status))
        else:
            unsure.append(name)
    return Columns(rows, sorted(unsure))


class Newest(NamedTuple):
    """What a list ordered by its records' order text decides from: how many valid records have each status (None:
    none), the newest of those with the statuses asked for (order text and file name, newest first), and the names of
    the record files the store cannot say that of (not valid, no order, no regular file: the caller reads them)."""

    counts: dict[str | None, int]
    first: list[tuple[str, str]]
    unsure: list[str]


def newest(
    ctx: Context, folder: Path, kind: str, chosen: Callable[[str | None], bool], limit: int | None
) -> Newest | None:
    """The newest `limit` (None: all) valid records of `kind` in `folder` whose status `chosen` keeps, by order text
    then file name, from the store: a list of the newest 50 of 10,000 decisions takes 50 rows and one count per
    status. None when the folder cannot be vouched for."""
    vouched = vouch(ctx, folder, kind)
    if vouched is None:
        return None
    store, prefix = ctx.store, vouched.prefix
    found = dict(counts(ctx, vouched).valid_by_status)
    unsure: list[str] = []
    for name, valid, status in store.select(prefix, "name, valid, status", "valid IS NOT 1 OR ord = 'None'"):
        unsure.append(name)
        if valid == 1:
            found[status] -= 1  # valid, but no date: among those the caller reads
    by_status = {status: number for status, number in found.items() if number}
    wanted = [status for status in by_status if chosen(status)]
    if not wanted:
        return Newest(by_status, [], sorted([*unsure, *vouched.strange]))
    named = [status for status in wanted if status is not None]
    tests = [f"status IN ({_words(named)})"] if named else []
    tests += ["status IS NULL"] if None in wanted else []
    clause = f"LIMIT {int(limit)}" if limit is not None else ""
    rows = store.select(
        prefix,
        "ord, name",
        f"valid = 1 AND ord != 'None' AND ({' OR '.join(tests)})",
        (),
        f"ORDER BY ord DESC, name DESC {clause}",
    )
    return Newest(by_status, [(order, name) for order, name in rows], sorted([*unsure, *vouched.strange]))


def facts(
    ctx: Context, vouched: Vouched, where: str, args: Iterable[Any] = (), tail: str = ""
) -> list[tuple[str, dict[str, Any]]]:
    """The file name and facts of the valid records of a vouched folder that the SQL test `where` selects."""
    from planstate.store.cache import decode

    store = ctx.store
    # The names first, from the index of the columns tested and ordered by (store/cache.py), then the facts of
    # those alone: the rows' data is read for the few selected, not for the whole folder.
    names = [row[0] for row in store.select(vouched.prefix, "name", f"valid = 1 AND ({where})", args, tail)]
    found = store.facts_of(vouched.prefix, names)
    if any(text is None for _name, text in found):  # facts that could not be kept: take those that could
        found = store.select(
            vouched.prefix, "name, facts", f"valid = 1 AND facts IS NOT NULL AND ({where})", args, tail
        )
    kept = [(name, text) for name, text in found if text is not None]
    if not kept:
        return []
    try:
        values = decode("[" + ",".join(text for _name, text in kept) + "]")
    except ValueError:
        return []
    return [(name, value) for (name, _text), value in zip(kept, values, strict=True) if isinstance(value, dict)]


# ---------------------------------------------------------------------------- the blockers that block


def blocking(ctx: Context, initiative: Initiative) -> list[Summary]:
    """The blockers that block (status new or active) and validate, in the order of the blockers' region: only those
    judge phases, as in the resume brief (it counts the others as unreadable and is untrusted), so a hand-broken
    blocker never makes status say `blocked` while resume says `active`. From the store, else (a blocker that cannot
    be shown) from every summary."""
    from planstate.model.kinds import BLOCKING
    from planstate.store import recordfiles

    found = head(ctx, initiative.folder("blocker"), "blocker", only=BLOCKING, newest_first=False, limit=None)
    if found is not None:
        return found.first
    summaries_found, _ = recordfiles.summaries(ctx, initiative, "blocker")
    return [s for s in summaries_found if s.status in BLOCKING and s.problem is None]


def blocking_data(ctx: Context, initiative: Initiative) -> list[tuple[str, dict[str, Any], Summary]]:
    """(id, data, summary) of each blocker that blocks (`blocking`), its data the facts the store keeps of it (which
    phases and records it affects), else its whole front matter: what status and `phase complete`'s warnings judge
    phases by."""
    found = blocking(ctx, initiative)
    return data_of(ctx, found, facts_of(ctx, initiative.folder("blocker"), [s.name for s in found]))


def facts_of(ctx: Context, folder: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """The facts the store keeps of each record file `names` of `folder`, by name, for those whose stat identity
    vouches for its row now (the others are left out: the caller reads those it needs whole)."""
    from planstate.store.cache import decode
    from planstate.store.scan import IDENTITY

    store = ctx.store
    prefix = ctx.cache_key(folder) + "/"
    base = str(folder) + os.sep
    texts: list[tuple[str, str]] = []
    for name in names:
        try:
            identity = IDENTITY(os.lstat(base + name))
        except OSError:
            continue
        row = store.vouched(prefix + name, identity)
        if row is not None and row.facts is not None:
            texts.append((name, row.facts))
    try:
        values = decode("[" + ",".join(text for _name, text in texts) + "]")
    except ValueError:
        return {}
    return {name: value for (name, _text), value in zip(texts, values, strict=True) if isinstance(value, dict)}


def data_of(
    ctx: Context, found: list[Summary], facts: dict[str, dict[str, Any]]
) -> list[tuple[str, dict[str, Any], Summary]]:
    """(id, data, summary) of the blockers summarized: their `facts` when given, else their whole front matter (a
    file gone or broken since it was summarized is left out, as one that could not be read is)."""
    from planstate.store import recordfiles

    out: list[tuple[str, dict[str, Any], Summary]] = []
    for summary in found:
        data = facts[summary.name] if summary.name in facts else recordfiles.mapping(ctx, summary.path, [])
        if data is not None:
            out.append((recordfiles.Record("blocker", summary.path, data).id, data, summary))
    return out
