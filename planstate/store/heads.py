"""The first records of a folder in a region's order and how many there are, kept between commands.

A record region with a built-in template shows only its first few records and counts the rest, so a write
that renders it (`decision add` over 10,000 decisions) needs no summary of every record: only which records
are the first ones, and the counts. The front-matter cache keeps that per region (`FrontMatterCache.view`), in
two parts. The whole part, read only when needed: the stat identity of every record file the head was made
from and the names of those the region leaves out. The small part, read by every call: the first records in
order (twice the region's limit), the counts, a digest of the whole part's names and ctimes in listing order
with the time it was made, and the files taken in since (names, identities, which ones are left out).

A call scans the folder (one `lstat` per file, the floor that keeps a hand edit visible). A file that changed
in any way since the whole part was made has a ctime after it (or is one taken in since); the other files must
be exactly the whole part, in the same order, which one digest tells. Then only the files that are new or
changed since are summarized and merged in, and only the small part is written again; when the digest differs
(a file edited, removed or renamed behind our back, another listing order) the whole part is read and compared
file by file instead. A file removed from the first records that leaves too few of them, a record that cannot
be shown, or many changed files mean the caller takes every summary instead (`recordfiles.summaries`), and the
next call keeps the head again. As with the cache's rows, an identity is kept only when it was seen `RACY_NS`
after its file last changed, so a file written in the same timestamp tick as a scan is summarized again
(through its row) until it is older.
"""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Iterable
from itertools import compress
from operator import attrgetter, itemgetter, not_
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.digests import blake2b_hex
from planstate.store import cache
from planstate.store.cache import IDENTITY, Identity, settled
from planstate.store.recordfiles import Summary, mapping, summarize, without_collector

if TYPE_CHECKING:
    from planstate.store.context import Context

FORMAT = 2  # bump when what a kept head holds changes
MANY = 64  # more changed files than this: summarizing all of them at once costs less than one by one
REBASE = 256  # more files taken in since the whole part was kept than this: keep the whole part anew
WHOLE = "|whole"  # the key of a head's whole part: the key of its small part and this
_KEY = attrgetter("order", "id")
_NAME = attrgetter("name")
_CTIME = attrgetter("st_ctime_ns")
_CTIME_OF = itemgetter(4)  # of an identity (cache.IDENTITY)


class Head(NamedTuple):
    """The first records a region shows, in its order (at least its limit of them, or all), how many records it
    selects, and how many valid records there are."""

    first: list[Summary]
    selected: int
    valid: int


@without_collector
def head(
    ctx: Context, folder: Path, kind: str, region: str, *, skip: str | None, newest_first: bool, limit: int
) -> Head | None:
    """The head of region `region` over the records of `kind` in `folder`: those whose status is not `skip`,
    ordered by their region field then id (newest first when asked), with a committing transaction's records as
    they will be. None when a record cannot be shown (the caller summarizes them all and reports it)."""
    kept = _Kept.load(ctx, region, folder, newest_first, 2 * limit, skip)
    seen = time.time_ns()
    where = folder.absolute()
    # Before any summary is taken: a change after this (or after the transaction listed the folder) shows next time.
    scanned = _scan(folder, ctx.listed.get(where))
    if scanned is None:
        return None
    names, infos = scanned
    pending = {path.name: data for path, data in ctx.pending.items() if path.parent == where}
    leaving = {path.name for path in ctx.leaving if path.parent == where}
    if leaving:
        staying = [name not in leaving for name in names]
        names, infos = list(compress(names, staying)), list(compress(infos, staying))
    changed = kept.compare(ctx, names, infos, pending)
    if changed is not None and len(changed) <= MANY:
        answer = _updated(ctx, folder, kind, kept, names, changed, pending, seen)
        if answer is not None:
            return answer
    return _rebuilt(ctx, folder, kind, kept, names, infos, pending, seen)


def _scan(folder: Path, listed: list[str] | None = None) -> tuple[list[str], list[os.stat_result]] | None:
    """The names of the record files of `folder` in listing order (those `listed`, when given) and the `lstat` of
    each; None when one vanished meanwhile (the caller takes every summary). One that is not a regular file is not
    told here: every file kept was a regular one, and another in its place has a newer ctime, so it is summarized
    as new, which refuses it, and the caller reports it."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return [], []
    except (OSError, AttributeError):  # AttributeError: no O_DIRECTORY on this system
        return None
    try:
        names = _records(os.listdir(fd) if listed is None else list(listed))
        lstat = os.lstat
        infos = [lstat(name, dir_fd=fd) for name in names]  # through the folder's descriptor: the cheapest stat
    except OSError:
        return None
    finally:
        os.close(fd)
    return names, infos


def _records(names: list[str]) -> list[str]:
    """The names of record files among a folder's `names` (`recordfiles.is_record_name`), found by searches in C
    over all of them: a folder of records holds few other names (`.gitkeep`), and a loop costs a millisecond."""
    joined = "\0" + "\0".join(names) + "\0"
    hidden: list[str] = []
    at = joined.find("\0.")
    while at >= 0:
        end = joined.index("\0", at + 1)
        hidden.append(joined[at + 1 : end])
        at = joined.find("\0.", end)
    if joined.count(".md\0") - sum(name[-3:] == ".md" for name in hidden) != len(names) - len(hidden):
        return [name for name in names if name[-3:] == ".md" and name[:1] != "."]  # other names: look at each
    for name in hidden:
        names.remove(name)
    return names


def _digest(names: list[str], ctimes: Iterable[int]) -> str:
    """A digest of files by name and ctime (ns), in order. A file's ctime is set to the time of any change of it (of
    its bytes, size, mtime or name; a new file in its place has its own), so with the name it tells every change of
    a file kept, as its whole identity would, even after the clock was set back. The ctimes are hashed by Python's
    tuple hash: it is the same in every process (integers hash to themselves), one number changed always changes
    it, and it costs a tenth of hashing their bytes; another Python that hashes otherwise only costs a comparison
    file by file."""
    joined = "\0".join(names).encode("utf-8", "surrogateescape")
    return f"{blake2b_hex(joined, 16)}-{hash(tuple(ctimes)):x}"


def _updated(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    names: list[str],
    changed: list[tuple[str, Identity]],
    pending: dict[str, Any],
    seen: int,
) -> Head | None:
    """The head from the kept one and the files changed since (summarized one by one, kept when old enough);
    None when a record cannot be shown or too few of the first records are known."""
    overlay: list[Summary] = []
    for name, identity in changed:
        kept.drop(name)
        if name in pending:
            continue
        found = _summary(ctx, kind, folder / name)
        if found is None:
            return None
        if settled(identity, seen):
            kept.add(name, identity, found)
        else:
            overlay.append(found)
    for name, data in pending.items():
        found = summarize(kind, folder / name, data)
        if found is None or found.problem is not None:
            return None
        overlay.append(found)
    answer = kept.answer(overlay, pending)
    if answer is not None:
        kept.save(ctx, names, seen)
    return answer


def _summary(ctx: Context, kind: str, path: Path) -> Summary | None:
    """The summary of one record file, read through the cache; None when it cannot be read or shown."""
    data = mapping(ctx, path, [])
    if data is None:
        return None
    found = summarize(kind, path, data)
    return found if found is not None and found.problem is None else None


def _rebuilt(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    names: list[str],
    infos: list[os.stat_result],
    pending: dict[str, Any],
    seen: int,
) -> Head | None:
    """The head from every summary, kept anew for next time; None when a record cannot be shown (the caller
    reports it)."""
    from planstate.store.recordfiles import folder_summaries

    found, problems = folder_summaries(ctx, folder, kind)
    if problems or any(s.problem is not None for s in found):
        return None
    scan = dict(zip(names, map(IDENTITY, infos), strict=True))
    kept.clear()
    for summary in found:
        identity = scan.get(summary.name)
        if identity is not None and summary.name not in pending and settled(identity, seen):
            kept.add(summary.name, identity, summary, ordered=False)
    kept.order()
    kept.save(ctx, names, seen)
    shown = _merged([s for s in found if kept.skip is None or s.status != kept.skip], [], kept.newest_first)
    return Head(shown[: kept.room], len(shown), len(found))


class _Kept:
    """A region's head as kept in the cache: the first selected records, always a prefix of all of them in order;
    the files it holds, as a digest of the whole part (`based`, `based_left_out`: how many, and how many the
    region leaves out) and the identities of those taken in since; or, once the whole part is read (`whole`),
    the identities of all of them. `left_out`: the names among `identities` the region leaves out."""

    def __init__(self, key: str, folder: Path, newest_first: bool, room: int, skip: str | None, body: Any) -> None:
        self.key, self.folder, self.newest_first, self.room, self.skip = key, folder, newest_first, room, skip
        self.since = 0  # when the whole part was made (ns)
        self.digest = ""
        self.based = self.based_left_out = 0
        self.identities: dict[str, Identity] = {}
        self.left_out: set[str] = set()
        self.first: list[Summary] = []
        self.empty = True
        self.whole = False
        self.changed = False
        if isinstance(body, tuple) and len(body) == 8 and body[0] == FORMAT:
            try:
                _format, self.since, self.digest, self.based, self.based_left_out, identities, left_out, first = body
                self.identities = identities if isinstance(identities, dict) else {}
                self.left_out = set(left_out)
                self.first = [Summary(folder, *values) for values in first]
                self.empty = not isinstance(self.digest, str)
            except (TypeError, ValueError):
                self.clear()
                self.changed, self.empty = False, True

    @classmethod
    def load(cls, ctx: Context, region: str, folder: Path, newest_first: bool, room: int, skip: str | None) -> _Kept:
        """The head kept for `region` over `folder` (an empty one when none is, or it cannot be read)."""
        key = f"{region}:{ctx.cache_key(folder)}"
        return cls(key, folder, newest_first, room, skip, _body(ctx, key))

    @property
    def valid(self) -> int:
        return self.based + len(self.identities)

    @property
    def selected(self) -> int:
        return self.valid - self.based_left_out - len(self.left_out)

    def compare(
        self, ctx: Context, names: list[str], infos: list[os.stat_result], pending: dict[str, Any]
    ) -> list[tuple[str, Identity]] | None:
        """The files of a scan (names and `lstat`s in listing order) that are new or changed since the head was
        kept, those gone forgotten; None when no head is kept (or its whole part is lost)."""
        if self.empty:
            return None
        if not self.whole:
            taken = self.identities
            cutoff = self.since - cache.RACY_NS
            # The files unchanged since the whole part was made: any change of a file (its bytes, its name, a new
            # file in its place) sets its ctime to the time it is made. Every file of the whole part was older than
            # the cutoff then; those taken in since, newer (else they were in it), so only a digest of the whole
            # part's size tells whether they are exactly the old ones.
            ctimes = list(map(_CTIME, infos))
            old = [ctime <= cutoff for ctime in ctimes]
            same = list(compress(names, old))
            if len(same) == self.based and self.digest == _digest(same, compress(ctimes, old)):
                new = list(map(not_, old))
                rest = dict(zip(compress(names, new), map(IDENTITY, compress(infos, new)), strict=True))
                # A pending file of the whole part needs it: whether the region leaves the file out is kept there.
                if all(name in rest or name not in names for name in pending):
                    for name in [name for name in taken if name not in rest]:  # gone
                        self.drop(name)
                    return [(name, identity) for name, identity in rest.items() if taken.get(name) != identity]
            if not self._read_whole(ctx):
                return None
        scan = dict(zip(names, map(IDENTITY, infos), strict=True))
        known = self.identities
        self.changed = True  # kept again, with its digest, even when no file changed: its listing order did
        if scan == known:
            return []
        for name in [name for name in known if name not in scan]:  # gone
            self.drop(name)
        return [(name, identity) for name, identity in scan.items() if known.get(name) != identity]

    def _read_whole(self, ctx: Context) -> bool:
        """Merge the whole part into `identities` and `left_out`; False (the head is then empty) when it is missing
        or not the one the digest names."""
        body = _body(ctx, self.key + WHOLE)
        try:
            if not (isinstance(body, tuple) and len(body) == 4 and body[0] == FORMAT and body[1] == self.digest):
                raise ValueError
            identities, left_out = dict(body[2]), set(body[3])
        except (TypeError, ValueError):
            self.empty = True
            return False
        for name, identity in self.identities.items():  # those taken in since: never in the whole part
            identities[name] = identity
            left_out.discard(name)
        self.identities, self.left_out = identities, left_out | self.left_out
        self.based = self.based_left_out = 0
        self.whole = True
        return True

    def clear(self) -> None:
        self.identities, self.left_out, self.first = {}, set(), []
        self.based = self.based_left_out = 0
        self.whole = self.changed = True

    def drop(self, name: str) -> None:
        """Forget a file that is gone or changed."""
        if self.identities.pop(name, None) is None:
            return
        self.changed = True
        self.left_out.discard(name)
        self.first = [s for s in self.first if s.name != name]

    def add(self, name: str, identity: Identity, summary: Summary, *, ordered: bool = True) -> None:
        """Take in a valid record file with its identity and summary."""
        self.changed = True
        if summary.status == self.skip and self.skip is not None:
            self.identities[name] = identity
            self.left_out.add(name)
            return
        whole = len(self.first) == self.selected  # the first records are all of them: any new one belongs there
        self.identities[name] = identity
        if not ordered:
            self.first.append(summary)
            return
        self.first = _merged(self.first, [summary], self.newest_first)
        if not whole and self.first[-1] is summary:
            self.first.pop()  # it sorts after every record kept: its place is among those not kept
        del self.first[self.room :]

    def order(self) -> None:
        """Order the records taken in unordered and keep the first ones."""
        self.first = _merged(self.first, [], self.newest_first)[: self.room]

    def save(self, ctx: Context, names: list[str], seen: int) -> None:
        """Keep the head in the cache, if it changed: the small part, and the whole part when it was read (or made)
        or too many files were taken in since. `names`: the scan's, in listing order; `seen`: when it began."""
        if not self.changed:
            return
        if not self.whole and len(self.identities) > REBASE and not self._read_whole(ctx):
            return  # the whole part is gone: the next call makes the head anew
        first = [tuple(s[1:]) for s in self.first]
        small: tuple[Any, ...]
        if self.whole:
            known = self.identities
            held = [name for name in names if name in known]
            if len(held) != len(known):
                return  # cannot happen (every file kept is one scanned): keep nothing rather than a wrong digest
            ids = [known[name] for name in held]
            self.since, self.digest = seen, _digest(held, map(_CTIME_OF, ids))
            self.based, self.based_left_out = len(known), len(self.left_out)
            # Format 2: no reference bookkeeping, far cheaper. The whole part first: a small part naming it after
            # a crash between the two would otherwise name one that is not there.
            ctx.keep_view(self.key + WHOLE, marshal.dumps((FORMAT, self.digest, known, sorted(self.left_out)), 2))
            small = (FORMAT, seen, self.digest, self.based, self.based_left_out, {}, [], first)
        else:
            taken = (self.identities, sorted(self.left_out))
            small = (FORMAT, self.since, self.digest, self.based, self.based_left_out, *taken, first)
        ctx.keep_view(self.key, marshal.dumps(small, 2))

    def answer(self, overlay: list[Summary], pending: dict[str, Any]) -> Head | None:
        """The head with the files summarized now but not kept (recent ones, a transaction's records), or None
        when too few of the first records are known."""
        whole = len(self.first) == self.selected
        first = [s for s in self.first if s.name not in pending]
        selected, valid = self.selected, self.valid
        for name in pending:
            if name in self.identities:  # its record as it is now, about to change
                valid -= 1
                selected -= name not in self.left_out
        shown = [s for s in overlay if self.skip is None or s.status != self.skip]
        merged = _merged(first, shown, self.newest_first)
        if not whole:
            if not first:
                return None
            last = first[-1]  # those sorting after it may follow records not kept among the first
            merged = merged[: next(i for i, s in enumerate(merged) if s is last) + 1]
        total = selected + len(shown)
        if len(merged) < min(self.room // 2, total):
            return None
        return Head(merged[: self.room], total, valid + len(overlay))


def _body(ctx: Context, key: str) -> Any:
    """What the cache keeps under `key`, unmarshalled (None when nothing, or nothing readable, is kept)."""
    raw = ctx.cached_view(key)
    if raw is None:
        return None
    try:
        return marshal.loads(raw)
    except (ValueError, EOFError, TypeError):
        return None


def _merged(first: list[Summary], more: list[Summary], newest_first: bool) -> list[Summary]:
    """Records in a region's order: by its field then id (newest first when asked), equal ones by file name, as
    a region that sorts them all orders them."""
    out = sorted([*first, *more], key=_NAME)
    out.sort(key=_KEY, reverse=newest_first)
    return out


def summary(ctx: Context, kind: str, path: Path) -> Summary | None:
    """The summary of one record file, read through the cache; None when it cannot be read or shown (ops/pages.py
    summarizes the files changed since a list's page was kept with it)."""
    return _summary(ctx, kind, path)
