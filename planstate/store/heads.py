"""The first records of a folder in a region's order and how many there are, kept between commands.

A record region with a built-in template shows only its first few records and counts the rest, so a write
that renders it (`decision add` over 10,000 decisions) needs no summary of every record: only which records
are the first ones, and the counts. A region keeps them as a view of its folder (store/kept.py: two parts, a
digest that vouches for the files older than the view, and only the files new or changed since summarized):
its rows are the summaries of the first records (twice the region's limit), in the region's order. A file
removed from the first records that leaves too few of them, a record that cannot be shown, or many changed
files mean the caller takes every summary instead (`recordfiles.summaries`), and the next call keeps the head
again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core import watched
from planstate.core.collector import without_collector
from planstate.core.watched import Identity
from planstate.model.kinds import BLOCKING
from planstate.store.kept import MANY, Kept, read, scan
from planstate.store.kept import scanned as kept_scanned
from planstate.store.recordfiles import Summary, mapping, summarize

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

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
    ctx: Context,
    folder: Path,
    kind: str,
    region: str,
    *,
    shows: Callable[[Any], bool] | None,
    newest_first: bool,
    limit: int,
) -> Head | None:
    """The head of the view `region` (a record region's name, or another reader's) over the records of `kind` in
    `folder`: those whose status `shows` keeps (None: all), ordered by their region field then id (newest first when
    asked), with a committing transaction's records as they will be. None when a record cannot be shown (the
    caller summarizes them all and reports it). `shows` must be the same for every call with the same `region`."""
    kept = _Kept.load(ctx, region, folder, newest_first, 2 * limit, shows)
    where = folder.absolute()
    pending = {path.name: data for path, data in ctx.pending.items() if path.parent == where}
    leaving = {path.name for path in ctx.leaving if path.parent == where}
    taken = ctx.scanned.get(str(where))  # a check's scan of every folder, taken at `ctx.scanned_at`
    token = None
    if taken is None or not taken.loaded:  # a folder the journal vouched for is not read: it tells what changed
        seen = time.time_ns()
        token = watched.sync(ctx.root)  # before any file is looked at: a change after it is in the journal
        if token is not None and not leaving:
            changed = kept.journaled(ctx, folder, token, pending)
            if changed is not None and len(changed) <= MANY:
                answer = _updated(ctx, folder, kind, kept, None, changed, pending, seen)
                if answer is not None:
                    return answer
            kept = _Kept.load(ctx, region, folder, newest_first, 2 * limit, shows)  # as kept: unchanged by that try
    if taken is not None:
        token = None  # the scan is older than the token: the view is not kept as true at it
        seen, (names, identities) = ctx.scanned_at, kept_scanned(taken.names, taken.identities)
    else:
        # Before any summary is taken: a change after this (or after the transaction listed the folder) shows next
        # time.
        found = scan(folder, ctx.listed.get(where))
        if found is None:
            return None
        names, identities = found.names, found.identities
        kept.take_linked(found.linked)
    if token is not None:
        kept.take_token(token)
    if leaving:
        staying = [name not in leaving for name in names]
        names, identities = list(compress(names, staying)), list(compress(identities, staying))
    changed = kept.compare(ctx, names, identities, pending)
    if changed is not None and len(changed) <= MANY:
        answer = _updated(ctx, folder, kind, kept, names, changed, pending, seen)
        if answer is not None:
            return answer
    return _rebuilt(ctx, folder, kind, kept, names, identities, pending, seen)


def _updated(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    names: list[str] | None,
    changed: list[tuple[str, Identity]],
    pending: dict[str, Any],
    seen: int,
) -> Head | None:
    """The head from the kept one and the files changed since (summarized one by one, kept when old enough);
    None when a record cannot be shown or too few of the first records are known."""

    def row_of(name: str) -> tuple[Summary | None] | None:
        found = summary(ctx, kind, folder / name)
        return (kept.shows(found),) if found is not None else None

    taken = kept.take_in([c for c in changed if c[0] not in pending], seen, row_of)
    if taken is None:
        return None
    shown, unkept = taken
    for name in pending:
        kept.drop(name)
    for name, data in pending.items():
        found = summarize(kind, folder / name, data)
        if found is None or found.problem is not None:
            return None
        if kept.shows(found) is not None:
            shown.append(found)
    answer = kept.answer(shown, unkept + len(pending), pending)
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
    pending: dict[str, Any],
    seen: int,
) -> Head | None:
    """The head from every summary, kept anew for next time; None when a record cannot be shown (the caller
    reports it)."""
    from planstate.store.recordfiles import folder_summaries

    found, problems = folder_summaries(ctx, folder, kind)
    if problems or any(s.problem is not None for s in found):
        return None
    kept.take_all(names, identities, [(s.name, kept.shows(s)) for s in found], seen, pending)
    kept.save(ctx, names, seen)
    shown = kept.ordered([s for s in found if kept.shows(s) is not None])
    return Head(shown[: kept.room], len(shown), len(found))


class _Kept(Kept[Summary]):
    """A region's head as kept in the cache (store/kept.py): its rows are the summaries of its first records, in
    the region's order; it leaves out the records whose status `shows` does not keep."""

    FORMAT = 2  # bump when what a kept head holds changes

    def __init__(
        self, key: str, folder: Path, newest_first: bool, room: int, shows: Callable[[Any], bool] | None, body: Any
    ) -> None:
        self.folder, self.newest_first, self.keeps = folder, newest_first, shows
        super().__init__(key, room, body)

    @classmethod
    def load(
        cls, ctx: Context, region: str, folder: Path, newest_first: bool, room: int, shows: Callable[[Any], bool] | None
    ) -> _Kept:
        """The head kept for `region` over `folder` (an empty one when none is, or it cannot be read)."""
        key = f"{region}:{ctx.cache_key(folder)}"
        return cls(key, folder, newest_first, room, shows, read(ctx, key))

    def name(self, row: Summary) -> str:
        return row.name

    def encode(self, row: Summary) -> tuple[Any, ...]:
        return tuple(row[1:])

    def decode(self, values: Any) -> Summary:
        return Summary(self.folder, *values)

    def ordered(self, rows: list[Summary]) -> list[Summary]:
        return _merged(rows, [], self.newest_first)

    def shows(self, summary: Summary) -> Summary | None:
        """The row of a record the region shows; None for one it leaves out."""
        return summary if self.keeps is None or self.keeps(summary.status) else None

    def answer(self, shown: list[Summary], unkept: int, pending: dict[str, Any]) -> Head | None:
        """The head with the records summarized now but not kept that the region shows (recent ones, a
        transaction's records; `unkept` files in all), or None when too few of the first records are known."""
        found = self.window(shown, pending, self.room // 2)
        if found is None:
            return None
        merged, total, valid = found
        return Head(merged[: self.room], total, valid + unkept)


def _merged(first: list[Summary], more: list[Summary], newest_first: bool) -> list[Summary]:
    """Records in a region's order: by its field then id (newest first when asked), equal ones by file name, as
    a region that sorts them all orders them."""
    out = sorted([*first, *more], key=_NAME)
    out.sort(key=_KEY, reverse=newest_first)
    return out


def summary(ctx: Context, kind: str, path: Path) -> Summary | None:
    """The summary of one record file, read through the cache; None when it cannot be read or shown (a list's kept
    page summarizes the files changed since with it too, ops/pages.py)."""
    data = mapping(ctx, path, [])
    if data is None:
        return None
    found = summarize(kind, path, data)
    return found if found is not None and found.problem is None else None


# ---------------------------------------------------------------------------- the blockers that block


def blocking(ctx: Context, initiative: Initiative) -> list[Summary]:
    """The blockers that block (status new or active) and validate: only those judge phases, as in the resume brief
    (it counts the others as unreadable and is untrusted), so a hand-broken blocker never makes status say `blocked`
    while resume says `active`. From a kept view of the blockers folder (after a write only the files changed since
    are summarized), else, when a blocker cannot be shown, from every summary."""
    from planstate.store import recordfiles

    folder = initiative.folder("blocker")
    found = head(ctx, folder, "blocker", "status:blocking", shows=_BLOCKS, newest_first=False, limit=_ALL)
    if found is not None:
        return found.first
    summaries, _ = recordfiles.summaries(ctx, initiative, "blocker")
    return [s for s in summaries if s.status in BLOCKING and s.problem is None]


def blocking_data(ctx: Context, initiative: Initiative) -> list[tuple[str, dict[str, Any], Summary]]:
    """(id, data, summary) of each blocker that blocks (`blocking`), its data the facts the cache keeps of it (which
    phases and records it affects), else its whole front matter: what status and `phase complete`'s warnings judge
    phases by."""
    found = blocking(ctx, initiative)
    return data_of(ctx, found, ctx.cached_facts(initiative.folder("blocker"), [s.name for s in found]))


def data_of(
    ctx: Context, summaries: list[Summary], facts: dict[str, dict[str, Any]]
) -> list[tuple[str, dict[str, Any], Summary]]:
    """(id, data, summary) of the blockers summarized: their `facts` when given, else their whole front matter (a
    file gone or broken since it was summarized is left out, as one that could not be read is)."""
    from planstate.store import recordfiles

    out: list[tuple[str, dict[str, Any], Summary]] = []
    for summary in summaries:
        data = facts[summary.name] if summary.name in facts else mapping(ctx, summary.path, [])
        if data is not None:
            out.append((recordfiles.Record("blocker", summary.path, data).id, data, summary))
    return out


_BLOCKS = BLOCKING.__contains__  # a blocker's status that blocks the phases it names
_ALL = 1 << 40  # a view of every blocker that blocks, not a page of them
