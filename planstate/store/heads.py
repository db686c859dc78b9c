"""The first records of a folder in a region's order and how many there are, kept between commands.

A record region with a built-in template shows only its first few records and counts the rest, so a write
that renders it (`decision add` over 10,000 decisions) needs no summary of every record: only which records
are the first ones, and the counts. The front-matter cache keeps that per region (`FrontMatterCache.view`):
the stat identity of every record file it was made from, the names of those the region leaves out, and the
first records in order (twice the region's limit). A later call scans the folder (one `lstat` per file, the
floor that keeps a hand edit visible), compares the identities in one step, and only the files that are new
or changed since are summarized and merged in; a file removed from the first records that leaves too few of
them, a record that cannot be shown, or many changed files mean the caller takes every summary instead
(`recordfiles.summaries`), and the next call keeps the head again. As with the cache's rows, an identity is
kept only when it was seen `RACY_NS` after its file last changed, so a file written in the same timestamp tick
as a scan is summarized again (through its row) until it is older.
"""

from __future__ import annotations

import marshal
import os
import stat
import time
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.store.cache import IDENTITY, settled
from planstate.store.recordfiles import Summary, mapping, summarize, without_collector

if TYPE_CHECKING:
    from planstate.store.context import Context

FORMAT = 1  # bump when what a kept head holds changes
MANY = 64  # more changed files than this: summarizing all of them at once costs less than one by one
_TYPE, _REGULAR = stat.S_IFMT(0o177777), stat.S_IFREG
_KEY = attrgetter("order", "id")
_NAME = attrgetter("name")


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
    scanned = _scan(folder, kept.identities)  # before any summary is taken: a change after this shows next time
    if scanned is None:
        return None
    scan, changed = scanned
    where = folder.absolute()
    pending = {path.name: data for path, data in ctx.pending.items() if path.parent == where}
    leaving = {path.name for path in ctx.leaving if path.parent == where}
    if leaving:
        for name in leaving:
            scan.pop(name, None)
        changed = [name for name in changed if name not in leaving]
    if not kept.empty and len(changed) <= MANY:
        answer = _updated(ctx, folder, kind, kept, scan, changed, pending, seen)
        if answer is not None:
            return answer
    return _rebuilt(ctx, folder, kind, kept, scan, pending, seen)


def _updated(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    scan: dict[str, tuple[int, ...]],
    changed: list[str],
    pending: dict[str, Any],
    seen: int,
) -> Head | None:
    """The head from the kept one and the files changed since (summarized one by one, kept when old enough);
    None when a record cannot be shown or too few of the first records are known."""
    if len(kept.identities) > len(scan) - sum(1 for name in changed if name not in kept.identities):
        for name in kept.identities.keys() - scan.keys():  # some are gone
            kept.drop(name)
    overlay: list[Summary] = []
    for name in changed:
        kept.drop(name)
        if name in pending:
            continue
        found = _summary(ctx, kind, folder / name)
        if found is None:
            return None
        identity = scan[name]
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
        kept.save(ctx)
    return answer


def _scan(folder: Path, known: dict[str, tuple[int, ...]]) -> tuple[dict[str, tuple[int, ...]], list[str]] | None:
    """The stat identity of every record file of `folder` by name, and the names whose identity is not the `known`
    one; None when one is not a regular file (the caller reports it)."""
    out: dict[str, tuple[int, ...]] = {}
    changed: list[str] = []
    get, note, identity_of = known.get, changed.append, IDENTITY
    try:
        with os.scandir(folder) as entries:
            for item in entries:  # once per record file: compared here, not as sets (twice the work)
                name = item.name
                if name[-3:] != ".md" or name[0] == ".":
                    continue
                info = item.stat(follow_symlinks=False)
                if info.st_mode & _TYPE != _REGULAR:
                    return None
                identity = out[name] = identity_of(info)
                if get(name) != identity:
                    note(name)
    except FileNotFoundError:
        return {}, []
    except OSError:
        return None
    return out, changed


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
    scan: dict[str, tuple[int, ...]],
    pending: dict[str, Any],
    seen: int,
) -> Head | None:
    """The head from every summary, kept anew for next time; None when a record cannot be shown (the caller
    reports it)."""
    from planstate.store.recordfiles import folder_summaries

    found, problems = folder_summaries(ctx, folder, kind)
    if problems or any(s.problem is not None for s in found):
        return None
    kept.clear()
    for summary in found:
        identity = scan.get(summary.name)
        if identity is not None and summary.name not in pending and settled(identity, seen):
            kept.add(summary.name, identity, summary, ordered=False)
    kept.order()
    kept.save(ctx)
    shown = _merged([s for s in found if kept.skip is None or s.status != kept.skip], [], kept.newest_first)
    return Head(shown[: kept.room], len(shown), len(found))


class _Kept:
    """A region's head as kept in the cache: identities of the files it holds, the names it leaves out, and the
    first selected records, always a prefix of all of them in order."""

    def __init__(self, key: str, folder: Path, newest_first: bool, room: int, skip: str | None, body: Any) -> None:
        self.key, self.folder, self.newest_first, self.room, self.skip = key, folder, newest_first, room, skip
        self.identities: dict[str, tuple[int, ...]] = {}
        self.left_out: set[str] = set()
        self.first: list[Summary] = []
        self.empty = True
        self.changed = False
        if isinstance(body, tuple) and len(body) == 4 and body[0] == FORMAT:
            try:
                self.identities = body[1] if isinstance(body[1], dict) else {}
                self.left_out = set(body[2])
                self.first = [Summary(folder, *values) for values in body[3]]
                self.empty = False
            except (TypeError, ValueError):
                self.identities, self.left_out, self.first = {}, set(), []

    @classmethod
    def load(cls, ctx: Context, region: str, folder: Path, newest_first: bool, room: int, skip: str | None) -> _Kept:
        """The head kept for `region` over `folder` (an empty one when none is, or it cannot be read)."""
        key = f"{region}:{ctx.cache_key(folder)}"
        raw = ctx.cached_view(key)
        body: Any = None
        if raw is not None:
            try:
                body = marshal.loads(raw)
            except (ValueError, EOFError, TypeError):
                body = None
        return cls(key, folder, newest_first, room, skip, body)

    @property
    def selected(self) -> int:
        return len(self.identities) - len(self.left_out)

    def clear(self) -> None:
        self.identities, self.left_out, self.first = {}, set(), []
        self.changed = True

    def drop(self, name: str) -> None:
        """Forget a file that is gone or changed."""
        if self.identities.pop(name, None) is None:
            return
        self.changed = True
        self.left_out.discard(name)
        self.first = [s for s in self.first if s.name != name]

    def add(self, name: str, identity: tuple[int, ...], summary: Summary, *, ordered: bool = True) -> None:
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

    def save(self, ctx: Context) -> None:
        """Keep the head in the cache, if it changed."""
        if not self.changed:
            return
        values = [tuple(s[1:]) for s in self.first]
        body = (FORMAT, self.identities, sorted(self.left_out), values)
        ctx.keep_view(self.key, marshal.dumps(body, 2))  # format 2: no reference bookkeeping, far cheaper

    def answer(self, overlay: list[Summary], pending: dict[str, Any]) -> Head | None:
        """The head with the files summarized now but not kept (recent ones, a transaction's records), or None
        when too few of the first records are known."""
        whole = len(self.first) == self.selected
        first = [s for s in self.first if s.name not in pending]
        selected, valid = self.selected, len(self.identities)
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
