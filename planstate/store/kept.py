"""A view of a record folder kept between commands: its first rows, its counts, and which of its files changed since.

A record region (store/heads.py) and a list page (ops/pages.py) each show only the first few records of a
folder in some order and count the rest, so a command over 10,000 records needs no summary of every record:
only which ones come first, and the counts. Each keeps that in the front-matter cache (`FrontMatterCache.view`),
in two parts. The whole part, read only when needed: the stat identity of every record file the view was made
from and the names of those it leaves out. The small part, read by every call: the first rows in order (twice
what is shown), the counts, a digest of the whole part's names and ctimes in listing order with the time it was
made, and the files taken in since (names, identities, which ones are left out).

A call scans the folder (`scan`: one `lstat` per file, the floor that keeps a hand edit visible). A file that
changed in any way since the whole part was made has a ctime after it (or is one taken in since); the other files
must be exactly the whole part, in the same order, which one digest tells. Then only the files that are new or
changed since are summarized and merged in (`Kept.compare`, `Kept.add`), and only the small part is written
again; when the digest differs (a file edited, removed or renamed behind our back, another listing order) the
whole part is read and compared file by file instead. A file removed from the first rows that leaves too few of
them, a record that cannot be shown, or many changed files (`MANY`) mean the caller takes every summary instead,
and keeps the view anew. As with the cache's rows, an identity is kept only when it was seen `RACY_NS` after its
file last changed (`cache.settled`), so a file written in the same timestamp tick as a scan is summarized again
(through its row) until it is older.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Collection, Iterable
from itertools import compress
from operator import not_
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from planstate.core import watched
from planstate.core.digests import names_and_numbers
from planstate.core.watched import IDENTITY, Identity
from planstate.store import cache

if TYPE_CHECKING:
    from planstate.store.context import Context

MANY = 64  # more changed files than this: summarizing all of them at once costs less than one by one
REBASE = 256  # more files taken in since the whole part was kept than this: keep the whole part anew
WHOLE = "|whole"  # the key of a view's whole part: the key of its small part and this
NAMES = "|names"  # the key of the names of the whole part's files, kept beside it (`Kept.journaled`)

Row = TypeVar("Row")  # what a view keeps of each of its first records


def scan(folder: Path, listed: list[str] | None = None) -> watched.Listing | None:
    """The record files of `folder` in listing order (those `listed`, when given) with the stat identity of each
    (`watched.listed`); None when one vanished meanwhile (the caller takes every summary). One that is not a regular
    file is not told here: every file kept was a regular one, and another in its place has a newer ctime, so it is
    summarized as new, which refuses it, and the caller reports it."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return watched.Listing([], [], [], [])
    except (OSError, AttributeError):  # AttributeError: no O_DIRECTORY on this system
        return None
    try:
        return watched.listed(fd, record_names(os.listdir(fd) if listed is None else list(listed)))
    except OSError:
        return None
    finally:
        os.close(fd)


def scanned(names: list[str], identities: list[Identity]) -> tuple[list[str], list[Identity]]:
    """What `scan` gives, from a folder's entries and their identities as another scan took them (store/memo.py's:
    a check lists every folder once): its record files' names and identities."""
    chosen = set(record_names(list(names)))
    keep = [name in chosen for name in names]
    return list(compress(names, keep)), list(compress(identities, keep))


def record_names(names: list[str]) -> list[str]:
    """The names of record files among a folder's `names` (`recordfiles.is_record_name`), found by searches in C
    over all of them: a folder of records holds few other names (`.gitkeep`), and a loop costs a millisecond."""
    joined = watched.joined(names)
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


def digest(names: list[str], ctimes: Iterable[int]) -> str:
    """A digest of files by name and ctime (ns), in order (`digests.names_and_numbers`). A file's ctime is set to the
    time of any change of it (of its bytes, size, mtime or name; a new file in its place has its own), so with the
    name it tells every change of a file kept, as its whole identity would, even after the clock was set back;
    another Python that hashes otherwise only costs a comparison file by file."""
    return names_and_numbers(names, ctimes)


class Kept(Generic[Row]):
    """A view as kept in the cache: its first rows, always a prefix of all of its rows in order; the files it holds,
    as a digest of the whole part (`based`, `based_left_out`: how many, and how many the view leaves out) and the
    identities of those taken in since; or, once the whole part is read (`whole`), the identities of all of them.
    `left_out`: the names among `identities` the view leaves out. A subclass says what a row is (`name`, `encode`,
    `decode`) and how rows are ordered (`ordered`)."""

    FORMAT = 0  # a subclass's: bump when what it keeps, or which rows it shows in which order, changes

    def __init__(self, key: str, room: int, body: Any) -> None:
        self.key, self.room = key, room
        self.since = 0  # when the whole part was made (ns)
        self.digest = ""
        self.based = self.based_left_out = 0
        self.identities: dict[str, Identity] = {}
        self.left_out: set[str] = set()
        self.first: list[Row] = []
        # The journal's token the view was true at (core/watched.py; None: not known), and the files to look at again
        # whatever the journal says: those summarized when too recent to be kept.
        self.token: watched.Token | None = None
        self.recent: list[str] = []
        # The files with a second hard link, also looked at again every time: an edit through another name is
        # seen by no watch of this folder.
        self.linked: set[str] = set()
        self.empty = True
        self.whole = False
        self.changed = False
        if isinstance(body, tuple) and len(body) == 11 and body[0] == self.FORMAT:
            try:
                held, (token, recent, linked) = body[:8], body[8:]
                _format, self.since, self.digest, self.based, self.based_left_out, identities, left_out, first = held
                self.identities = identities if isinstance(identities, dict) else {}
                self.left_out = set(left_out)
                self.first = [self.decode(values) for values in first]
                self.token = _token(token)
                self.recent = [name for name in recent if isinstance(name, str)]
                self.linked = {name for name in linked if isinstance(name, str)}
                self.empty = not isinstance(self.digest, str)
            except (TypeError, ValueError):
                self.clear()
                self.changed, self.empty = False, True

    def name(self, row: Row) -> str:
        """The file name of the record a row is of."""
        raise NotImplementedError

    def encode(self, row: Row) -> tuple[Any, ...]:
        """A row as marshal keeps it."""
        raise NotImplementedError

    def decode(self, values: Any) -> Row:
        """A row from what `encode` made (TypeError or ValueError when it is not such)."""
        raise NotImplementedError

    def ordered(self, rows: list[Row]) -> list[Row]:
        """Rows in the view's order."""
        raise NotImplementedError

    @property
    def valid(self) -> int:
        """How many files the view holds."""
        return self.based + len(self.identities)

    @property
    def selected(self) -> int:
        """How many of the files held the view does not leave out."""
        return self.valid - self.based_left_out - len(self.left_out)

    def compare(
        self, ctx: Context, names: list[str], identities: list[Identity], pending: Collection[str] = ()
    ) -> list[tuple[str, Identity]] | None:
        """The files of a scan (names and identities in listing order) that are new or changed since the view was
        kept, those gone forgotten; None when no view is kept (or its whole part is lost). `pending`: the names of
        files a committing transaction is about to write."""
        if self.empty:
            return None
        self.recent = []  # every file is compared: those too recent are found again
        if not self.whole:
            taken = self.identities
            cutoff = self.since - cache.RACY_NS
            # The files unchanged since the whole part was made: any change of a file (its bytes, its name, a new
            # file in its place) sets its ctime to the time it is made. Every file of the whole part was older than
            # the cutoff then; those taken in since, newer (else they were in it), so only a digest of the whole
            # part's size tells whether they are exactly the old ones.
            ctimes = list(map(watched.CTIME, identities))
            old = [ctime <= cutoff for ctime in ctimes]
            same = list(compress(names, old))
            if len(same) == self.based and self.digest == digest(same, compress(ctimes, old)):
                new = list(map(not_, old))
                rest = dict(zip(compress(names, new), compress(identities, new), strict=True))
                # A pending file of the whole part needs it: whether the view leaves the file out is kept there.
                if all(name in rest or name not in names for name in pending):
                    for name in [name for name in taken if name not in rest]:  # gone
                        self.drop(name)
                    return [(name, identity) for name, identity in rest.items() if taken.get(name) != identity]
            if not self._read_whole(ctx):
                return None
        now = dict(zip(names, identities, strict=True))
        known = self.identities
        self.changed = True  # kept again, with its digest, even when no file changed: its listing order did
        if now == known:
            return []
        for name in [name for name in known if name not in now]:  # gone
            self.drop(name)
        return [(name, identity) for name, identity in now.items() if known.get(name) != identity]

    def journaled(
        self, ctx: Context, folder: Path, token: watched.Token, pending: Collection[str] = ()
    ) -> list[tuple[str, Identity]] | None:
        """The record files of `folder` new or changed since the view was kept, as the watcher's journal tells
        (core/watched.py; `token`: the one `watched.sync` just gave), those gone forgotten; None when it cannot tell,
        or when taking them in needs the whole part (a file of the whole part changed, a `pending` file is one of
        it, or many files were taken in since): the caller scans and `compare`s. Only the files the journal names
        are looked at: no `lstat` of every file."""
        if self.empty or self.whole or self.token is None or self.token[0] != token[0]:
            return None
        names = watched.changed(ctx.root, str(folder.absolute()), self.token)
        if names is None:
            return None
        again = sorted(set(record_names(names)) | set(self.recent) | self.linked)
        if len(self.identities) + len(again) > REBASE:
            return None
        strangers = [name for name in (*again, *pending) if name not in self.identities]
        if strangers:
            whole = read(ctx, self.key + NAMES)
            if not (isinstance(whole, tuple) and len(whole) == 2 and whole[0] == self.digest):
                return None
            held = whole[1]
            if not isinstance(held, str) or any(f"\0{name}\0" in held for name in strangers):
                return None
        out: list[tuple[str, Identity]] = []
        gone: list[str] = []
        base = str(folder) + os.sep
        for name in again:
            try:
                info = os.lstat(base + name)
            except FileNotFoundError:
                gone.append(name)
                self.linked.discard(name)
                continue
            except OSError:
                return None
            if watched.second_link(info):
                self.linked.add(name)
            else:
                self.linked.discard(name)
            identity = IDENTITY(info)
            if self.identities.get(name) != identity:
                out.append((name, identity))
        for name in gone:
            self.drop(name)
        self.recent = []
        self.take_token(token)
        return out

    def take_linked(self, linked: list[str]) -> None:
        """Take the files with a second hard link as a full scan found them: kept again if they differ."""
        if set(linked) != self.linked:
            self.linked, self.changed = set(linked), True

    def take_token(self, token: watched.Token) -> None:
        """Say the view is true at `token` (one taken before the files were looked at): kept again if it was not."""
        if token != self.token:
            self.token, self.changed = token, True

    def _read_whole(self, ctx: Context) -> bool:
        """Merge the whole part into `identities` and `left_out`; False (the view is then empty) when it is missing
        or not the one the digest names."""
        body = read(ctx, self.key + WHOLE)
        try:
            if not (isinstance(body, tuple) and len(body) == 4 and body[0] == self.FORMAT and body[1] == self.digest):
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
        """Forget every file held."""
        self.identities, self.left_out, self.first = {}, set(), []
        self.recent = []
        self.based = self.based_left_out = 0
        self.whole = self.changed = True

    def drop(self, name: str) -> None:
        """Forget a file that is gone or changed."""
        if self.identities.pop(name, None) is None:
            return
        self.changed = True
        self.left_out.discard(name)
        self.first = [row for row in self.first if self.name(row) != name]

    def add(self, name: str, identity: Identity, row: Row | None, *, ordered: bool = True) -> None:
        """Take in a record file with its identity and its row (None: one the view leaves out). Unordered, the row
        joins the first ones as they are (`order` puts them in order)."""
        self.changed = True
        if row is None:
            self.identities[name] = identity
            self.left_out.add(name)
            return
        whole = len(self.first) == self.selected  # the first rows are all of them: any new one belongs there
        self.identities[name] = identity
        if not ordered:
            self.first.append(row)
            return
        self.first = self.ordered([*self.first, row])
        if not whole and self.first[-1] is row:
            self.first.pop()  # it sorts after every row kept: its place is among those not kept
        del self.first[self.room :]

    def take_in(
        self, changed: list[tuple[str, Identity]], seen: int, row_of: Callable[[str], tuple[Row | None] | None]
    ) -> tuple[list[Row], int] | None:
        """Take in the files new or changed since the view was kept (`compare`), each with its row by `row_of` (a
        1-tuple: the row, None for a file the view leaves out; None for a file that cannot be shown, which makes
        this None); one changed too recently to be kept (`cache.settled`, `seen`: when the scan began) is not kept.
        The rows of those not kept that the view shows, and how many files were not kept."""
        overlay: list[Row] = []
        unkept = 0
        for name, identity in changed:
            self.drop(name)
            found = row_of(name)
            if found is None:
                return None
            if cache.settled(identity, seen):
                self.add(name, identity, found[0])
                continue
            unkept += 1
            self.recent.append(name)
            if found[0] is not None:
                overlay.append(found[0])
        return overlay, unkept

    def take_all(
        self,
        names: list[str],
        identities: list[Identity],
        rows: Iterable[tuple[str, Row | None]],
        seen: int,
        leave: Collection[str] = (),
    ) -> None:
        """Hold anew the files of a scan (names and identities) whose rows are given (file name and row, None for one
        the view leaves out: every record of the folder), each but those changed too recently to be kept and those
        `leave` names (about to change); then order the first rows."""
        by_name = dict(zip(names, identities, strict=True))
        self.clear()
        for name, row in rows:
            identity = by_name.get(name)
            if identity is not None and name not in leave and cache.settled(identity, seen):
                self.add(name, identity, row, ordered=False)
            elif identity is not None:
                self.recent.append(name)
        self.order()

    def order(self) -> None:
        """Order the rows taken in unordered and keep the first ones."""
        self.first = self.ordered(self.first)[: self.room]

    def save(self, ctx: Context, names: list[str] | None, seen: int) -> None:
        """Keep the view in the cache, if it changed: the small part, and the whole part when it was read (or made)
        or too many files were taken in since. `names`: the scan's, in listing order (None: the journal's changes
        were taken in, and `journaled` saw to it that the whole part is not needed); `seen`: when it began."""
        if not self.changed:
            return
        if not self.whole and len(self.identities) > REBASE and (names is None or not self._read_whole(ctx)):
            return  # the whole part is gone: the next call makes the view anew
        first = [self.encode(row) for row in self.first]
        token = list(self.token) if self.token is not None else None
        small: tuple[Any, ...]
        if self.whole and names is not None:
            known = self.identities
            held = [name for name in names if name in known]
            if len(held) != len(known):
                return  # cannot happen (every file kept is one scanned): keep nothing rather than a wrong digest
            ids = [known[name] for name in held]
            self.since, self.digest = seen, digest(held, map(watched.CTIME, ids))
            self.based, self.based_left_out = len(known), len(self.left_out)
            # Format 2: no reference bookkeeping, far cheaper. The whole part first: a small part naming it after
            # a crash between the two would otherwise name one that is not there.
            whole = (self.FORMAT, self.digest, known, sorted(self.left_out))
            ctx.keep_view(self.key + WHOLE, marshal.dumps(whole, 2))
            # One string, searched in C: whether a file the journal names is one of the whole part (`journaled`).
            ctx.keep_view(self.key + NAMES, marshal.dumps((self.digest, watched.joined(held)), 2))
            small = (self.FORMAT, seen, self.digest, self.based, self.based_left_out, {}, [], first)
        else:
            taken = (self.identities, sorted(self.left_out))
            small = (self.FORMAT, self.since, self.digest, self.based, self.based_left_out, *taken, first)
        small += (token, self.recent, sorted(self.linked))
        ctx.keep_view(self.key, marshal.dumps(small, 2))

    def window(self, shown: list[Row], pending: Collection[str], want: int) -> tuple[list[Row], int, int] | None:
        """The first rows with `shown` (rows of files summarized now but not kept: recent ones, a transaction's
        records) merged in, as far as they are known to come first; how many rows the view selects; and how many
        files it holds but those `pending` (about to change). None when fewer than `want` rows are known."""
        whole = len(self.first) == self.selected
        first = [row for row in self.first if self.name(row) not in pending] if pending else self.first
        selected, valid = self.selected, self.valid
        for name in pending:
            if name in self.identities:  # its record as it is now, about to change
                valid -= 1
                selected -= name not in self.left_out
        merged = self.ordered([*first, *shown])
        if not whole:
            if not first:
                return None
            last = first[-1]  # those sorting after it may follow rows not kept among the first
            merged = merged[: next(i for i, row in enumerate(merged) if row is last) + 1]
        total = selected + len(shown)
        if len(merged) < min(want, total):
            return None
        return merged, total, valid


def _token(value: Any) -> watched.Token | None:
    """A journal's token as a view keeps it (a list: marshal's), or None."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], int):
        return value[0], value[1]
    return None


def read(ctx: Context, key: str) -> Any:
    """What the cache keeps under `key`, unmarshalled (None when nothing, or nothing readable, is kept)."""
    raw = ctx.cached_view(key)
    if raw is None:
        return None
    try:
        return marshal.loads(raw)
    except (ValueError, EOFError, TypeError):
        return None
