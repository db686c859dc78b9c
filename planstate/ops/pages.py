"""The pages of list commands, kept between commands and brought up to date from the files changed since.

`decision list`, `blocker list` and `session list` show the newest page of a kind's records that match their
options. What a page is (the names of the records shown, in order, and how many older ones match) depends only on
the record files of the kind's folder (its `archive/` aside) and on the list's options, so each list (by label: kind
and status filter, any page size up to the default) keeps in the front-matter cache's `views` table, as a record
region keeps its head (store/heads.py): the stat identity of every record file it was made from, the names of those
it does not match, and the newest matching records (twice the default page: sort key and name), in two parts
(`_Kept`). A later call scans the folder (one `lstat` per file, the floor that keeps a hand edit visible), and only
the files new or changed since are summarized (through the cache) and merged in, so a list run right after a write
reads the new record, not all of them. Too many changed files, too few newest records left (those shown were removed
or stopped matching), a kept page that is missing or unreadable, a record that does not validate or a file that
cannot be read mean the list takes every summary, as it does without a kept page; it keeps the page anew unless it
met such a record or file. As with the cache's rows, an identity is kept only when it was seen `RACY_NS` after its
file last changed: a file written in the same timestamp tick as a scan is summarized again until it is older. A list
whose window depends on the clock (`since`), that takes archived records, that shows more than the default page, or
that runs inside a transaction keeps no page.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import time
from collections.abc import Callable
from itertools import compress
from operator import attrgetter, not_
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.store import cache
from planstate.store.cache import IDENTITY, Identity, settled
from planstate.store.recordfiles import without_collector

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.recordfiles import Summary

# Bump when what a kept page holds, or which records a list shows in which order, changes (as cache.VERSION for
# rows): a kept page is trusted by its files' identities alone, never by planstate's own files.
FORMAT = 1
MANY = 64  # more changed files than this: taking every summary costs less than summarizing them one by one
REBASE = 256  # more files taken in since the whole part was kept than this: keep the whole part anew
WHOLE = "|whole"  # the key of a page's whole part: the key of its small part and this
_MODE = attrgetter("st_mode")

Row = tuple[Any, str]  # a matching record's sort key (the caller's `order` of its date) and its file name
# A record's summary judged by the list: whether it matches and its sort key; None when the summary cannot say
# (a record that does not validate: the list reads it to warn about it).
Judge = Callable[["Summary"], "tuple[bool, Any] | None"]


class Page(NamedTuple):
    """The records a list shows (file names, oldest first) and how many older ones match."""

    names: list[str]
    more: int


@without_collector
def page(ctx: Context, folder: Path, kind: str, label: str, size: int, judge: Judge, *, room: int) -> Page | None:
    """The page of `size` records the list `label` shows of the records of `kind` in `folder`, from its kept page
    (holding the newest `room` matching records, at least twice `size`) and the files changed since (kept again
    for next time), else from every summary (kept anew); None when a file cannot be read or a record does not
    validate (the caller lists in full and reports them)."""
    kept = _Kept.load(ctx, f"list:{FORMAT}:{label}:{ctx.cache_key(folder)}", room)
    seen = time.time_ns()
    scanned = _scan(folder)  # before any summary is taken: a change after this shows next time
    if scanned is None:
        return None
    names, identities = scanned
    changed = kept.compare(ctx, names, identities)
    if changed is not None and len(changed) <= MANY:
        answer = _updated(ctx, folder, kind, kept, names, changed, seen, size, judge)
        if isinstance(answer, Page):
            return answer
        if answer is False:
            return None
    return _rebuilt(ctx, folder, kind, kept, names, identities, seen, size, judge)


def _scan(folder: Path) -> tuple[list[str], list[Identity]] | None:
    """The names of the record files of `folder` in listing order and the stat identity of each; None when one is
    not a regular file or vanished meanwhile (the caller lists in full and reports it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return [], []
    except (OSError, AttributeError):  # AttributeError: no O_DIRECTORY on this system
        return None
    try:
        # `recordfiles.is_record_name` inline, and a stat through the folder's descriptor: at 10,000 files the
        # cheapest way measured (scandir's entries cost about a fifth more).
        names = [name for name in os.listdir(fd) if name[-3:] == ".md" and name[:1] != "."]
        lstat = os.lstat
        infos = [lstat(name, dir_fd=fd) for name in names]
    except OSError:
        return None
    finally:
        os.close(fd)
    if not all(map(stat.S_ISREG, map(_MODE, infos))):
        return None
    return names, list(map(IDENTITY, infos))


def _digest(names: list[str], identities: list[Identity]) -> bytes:
    """A digest of names and their identities, in order. The identities are hashed by Python's tuple hash: the
    same in every process (integers hash to themselves), changed by any one identity changing, and a tenth of the
    cost of hashing their bytes; another Python that hashes otherwise only costs a comparison file by file."""
    joined = "\0".join(names).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(joined, digest_size=16).digest() + hash(tuple(identities)).to_bytes(8, "big", signed=True)


def _updated(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    names: list[str],
    changed: list[tuple[str, Identity]],
    seen: int,
    size: int,
    judge: Judge,
) -> Page | bool | None:
    """The page from the kept one and the files changed since (summarized one by one, kept when old enough); False
    when a file cannot be read or a record does not validate, None when too few of the newest records are known."""
    from planstate.store.heads import summary

    overlay: list[Row] = []
    for name, identity in changed:
        kept.drop(name)
        found = summary(ctx, kind, folder / name)
        judged = judge(found) if found is not None else None
        if judged is None:
            return False
        matches, key = judged
        if settled(identity, seen):
            kept.add(name, identity, matches, key)
        elif matches:
            overlay.append((key, name))
    answer = kept.answer(overlay, size)
    if answer is not None:
        kept.save(ctx, names, seen)
    return answer


def _rebuilt(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    names: list[str],
    identities: list[Identity],
    seen: int,
    size: int,
    judge: Judge,
) -> Page | None:
    """The page from every summary, kept anew for next time; None when a file cannot be read or a record does not
    validate."""
    from planstate.store.recordfiles import folder_summaries

    found, problems = folder_summaries(ctx, folder, kind)
    if problems:
        return None
    scan = dict(zip(names, identities, strict=True))
    kept.clear()
    rows: list[Row] = []
    for each in found:
        judged = judge(each)
        if judged is None:
            return None
        matches, key = judged
        name = each.name
        if matches:
            rows.append((key, name))
        identity = scan.get(name)
        if identity is not None and settled(identity, seen):
            kept.add(name, identity, matches, key, ordered=False)
    kept.order()
    kept.save(ctx, names, seen)
    rows.sort(reverse=True)
    shown = rows[:size]
    return Page([name for _key, name in reversed(shown)], len(rows) - len(shown))


class _Kept:
    """A list's page as kept in the cache, in two parts. The small one, read by every call: the newest matching
    records (newest first, always a prefix of all of them in that order), how many files the whole part holds and
    how many of them do not match, a digest of its names and identities in listing order with the time it was
    made (`since`), and the files taken in since (their identities, and the names among them that do not match).
    The whole one, read only when the digest does not vouch for it: the identity of every file it holds and the
    names of those that do not match. Once it is read (`whole`), `identities` and `left_out` are of every file."""

    def __init__(self, key: str, room: int, body: Any) -> None:
        self.key, self.room = key, room
        self.since = 0
        self.digest = b""
        self.based = self.based_left_out = 0
        self.identities: dict[str, Identity] = {}
        self.left_out: set[str] = set()
        self.first: list[Row] = []
        self.empty = True
        self.whole = False
        self.changed = False
        if isinstance(body, tuple) and len(body) == 8 and body[0] == FORMAT:
            try:
                _format, self.since, self.digest, self.based, self.based_left_out, identities, left_out, first = body
                if not isinstance(identities, dict) or not isinstance(self.digest, bytes):
                    raise TypeError(key)
                self.identities, self.left_out, self.first = identities, set(left_out), [tuple(r) for r in first]
                self.empty = False
            except (TypeError, ValueError):
                self.clear()
                self.changed, self.empty = False, True

    @classmethod
    def load(cls, ctx: Context, key: str, room: int) -> _Kept:
        """The page kept under `key` (an empty one when none is, or it cannot be read)."""
        return cls(key, room, _body(ctx, key))

    @property
    def matched(self) -> int:
        """How many of the files held match the list."""
        return self.based - self.based_left_out + len(self.identities) - len(self.left_out)

    def compare(self, ctx: Context, names: list[str], identities: list[Identity]) -> list[tuple[str, Identity]] | None:
        """The files of a scan (names and identities in listing order) new or changed since the page was kept,
        those gone forgotten; None when no page is kept (or its whole part is lost)."""
        if self.empty:
            return None
        if not self.whole:
            taken = self.identities
            cutoff = self.since - cache.RACY_NS
            # The files unchanged since the whole part was made: neither changed after it nor taken in since.
            old = [i[3] <= cutoff and i[4] <= cutoff and n not in taken for n, i in zip(names, identities, strict=True)]
            same = list(compress(names, old))
            if len(same) == self.based and _digest(same, list(compress(identities, old))) == self.digest:
                new = list(map(not_, old))
                rest = dict(zip(compress(names, new), compress(identities, new), strict=True))
                for name in [name for name in taken if name not in rest]:  # gone
                    self.drop(name)
                return [(name, identity) for name, identity in rest.items() if taken.get(name) != identity]
            if not self._read_whole(ctx):
                return None
        scan = dict(zip(names, identities, strict=True))
        known = self.identities
        for name in [name for name in known if name not in scan]:  # gone
            self.drop(name)
        return [(name, identity) for name, identity in scan.items() if known.get(name) != identity]

    def _read_whole(self, ctx: Context) -> bool:
        """Merge the whole part into `identities` and `left_out`; False (the page is then empty) when it is missing
        or not the one the digest names."""
        body = _body(ctx, self.key + WHOLE)
        try:
            if not (isinstance(body, tuple) and len(body) == 4 and body[0] == FORMAT and body[1] == self.digest):
                raise ValueError(self.key)
            identities, left_out = dict(body[2]), set(body[3])
        except (TypeError, ValueError):
            self.empty = True
            return False
        identities.update(self.identities)  # those taken in since: never in the whole part
        self.identities, self.left_out = identities, left_out | self.left_out
        self.based = self.based_left_out = 0
        self.whole = True
        return True

    def clear(self) -> None:
        """Forget every file held."""
        self.identities, self.left_out, self.first = {}, set(), []
        self.based = self.based_left_out = 0
        self.whole = self.changed = True

    def drop(self, name: str) -> None:
        """Forget a file that is gone or changed (one of those taken in since, or any once the whole part is read)."""
        if self.identities.pop(name, None) is None:
            return
        self.changed = True
        if name in self.left_out:
            self.left_out.discard(name)
            return
        self.first = [row for row in self.first if row[1] != name]

    def add(self, name: str, identity: Identity, matches: bool, key: Any, *, ordered: bool = True) -> None:
        """Take in a record file with its identity, whether it matches and its sort key."""
        self.changed = True
        if not matches:
            self.identities[name] = identity
            self.left_out.add(name)
            return
        whole = len(self.first) == self.matched  # the newest records are all of them: any new one belongs there
        self.identities[name] = identity
        row = (key, name)
        self.first.append(row)
        if not ordered:
            return
        self.first.sort(reverse=True)
        if not whole and self.first[-1] is row:
            self.first.pop()  # it sorts after every record kept: its place is among those not kept
        del self.first[self.room :]

    def order(self) -> None:
        """Order the records taken in unordered and keep the newest ones."""
        self.first.sort(reverse=True)
        del self.first[self.room :]

    def save(self, ctx: Context, names: list[str], seen: int) -> None:
        """Keep the page in the cache, if it changed: the small part, and the whole part when it was read (or made)
        or too many files were taken in since. `names`: the scan's, in listing order; `seen`: when it began."""
        if not self.changed:
            return
        if not self.whole and len(self.identities) > REBASE and not self._read_whole(ctx):
            return  # the whole part is gone: the next call makes the page anew
        small: tuple[Any, ...]
        if self.whole:
            known = self.identities
            held = [name for name in names if name in known]
            if len(held) != len(known):
                return  # cannot happen (every file held is one scanned): keep nothing rather than a wrong digest
            self.since, self.digest = seen, _digest(held, [known[name] for name in held])
            self.based, self.based_left_out = len(known), len(self.left_out)
            # Format 2: no reference bookkeeping, far cheaper. The whole part first: a small part naming it after a
            # crash between the two would otherwise name one that is not there.
            ctx.keep_view(self.key + WHOLE, marshal.dumps((FORMAT, self.digest, known, sorted(self.left_out)), 2))
            small = (FORMAT, seen, self.digest, self.based, self.based_left_out, {}, [], self.first)
        else:
            taken = (self.identities, sorted(self.left_out))
            small = (FORMAT, self.since, self.digest, self.based, self.based_left_out, *taken, self.first)
        ctx.keep_view(self.key, marshal.dumps(small, 2))

    def answer(self, overlay: list[Row], size: int) -> Page | None:
        """The page with the matching records summarized now but not kept (recent ones), or None when too few of
        the newest records are known."""
        whole = len(self.first) == self.matched
        rows = sorted([*self.first, *overlay], reverse=True)
        if not whole:
            if not self.first:
                return None
            last = self.first[-1]  # those sorting after it may follow records not kept among the newest
            rows = rows[: rows.index(last) + 1]
        total = self.matched + len(overlay)
        if len(rows) < min(size, total):
            return None
        shown = rows[:size]
        return Page([name for _key, name in reversed(shown)], total - len(shown))


def _body(ctx: Context, key: str) -> Any:
    """What the cache keeps under `key`, unmarshalled (None when nothing, or nothing readable, is kept)."""
    raw = ctx.cached_view(key)
    if raw is None:
        return None
    try:
        return marshal.loads(raw)
    except (ValueError, EOFError, TypeError):
        return None
