"""The pages of list commands, kept between commands and brought up to date from the files changed since.

`decision list`, `blocker list` and `session list` show the newest page of a kind's records that match their
options. What a page is (the names of the records shown, in order, and how many older ones match) depends only on
the record files of the kind's folder (its `archive/` aside) and on the list's options, so each list (by label: kind
and status filter, any page size up to the default) keeps a view of its folder as a record region keeps its head
(store/kept.py): its rows are the newest matching records (twice the default page: sort key and name), and only the
files new or changed since it was kept are summarized (through the cache) and merged in, so a list run right after
a write reads the new record, not all of them. Too many changed files, too few newest records left (those shown were
removed or stopped matching), a kept page that is missing or unreadable, a record that does not validate or a file
that cannot be read mean the list takes every summary, as it does without a kept page; it keeps the page anew unless
it met such a record or file. A list whose window depends on the clock (`since`), that takes archived records, that
shows more than the default page, or that runs inside a transaction keeps no page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core import watched
from planstate.core.collector import without_collector
from planstate.core.watched import Identity
from planstate.store.kept import MANY, Kept, read, scan

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.recordfiles import Summary

# Bump when what a kept page holds, or which records a list shows in which order, changes (as cache.VERSION for
# rows): a kept page is trusted by its files' identities alone, never by planstate's own files.
FORMAT = 2

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
    key = f"list:{FORMAT}:{label}:{ctx.cache_key(folder)}"
    kept = _Kept.load(ctx, key, room)
    seen = time.time_ns()
    token = watched.sync(ctx.root)  # before any file is looked at: a change after it is in the journal
    if token is not None:
        done, answer = _tried(ctx, folder, kind, kept, None, kept.journaled(ctx, folder, token), seen, size, judge)
        if done:
            return answer
        kept = _Kept.load(ctx, key, room)  # as kept: unchanged by that try
        kept.take_token(token)
    scanned = scan(folder)  # before any summary is taken: a change after this shows next time
    if scanned is None:
        return None
    names, identities = scanned.names, scanned.identities
    kept.take_linked(scanned.linked)
    done, answer = _tried(ctx, folder, kind, kept, names, kept.compare(ctx, names, identities), seen, size, judge)
    if done:
        return answer
    return _rebuilt(ctx, folder, kind, kept, names, identities, seen, size, judge)


def _tried(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    names: list[str] | None,
    changed: list[tuple[str, Identity]] | None,
    seen: int,
    size: int,
    judge: Judge,
) -> tuple[bool, Page | None]:
    """Whether the page was had from the kept one and the files `changed` since (None: not known), and that page
    (None when a file cannot be read or a record does not validate: the caller lists in full)."""
    if changed is None or len(changed) > MANY:
        return False, None
    answer = _updated(ctx, folder, kind, kept, names, changed, seen, size, judge)
    if isinstance(answer, Page):
        return True, answer
    return answer is False, None


def _updated(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    names: list[str] | None,
    changed: list[tuple[str, Identity]],
    seen: int,
    size: int,
    judge: Judge,
) -> Page | bool | None:
    """The page from the kept one and the files changed since (summarized one by one, kept when old enough); False
    when a file cannot be read or a record does not validate, None when too few of the newest records are known."""
    from planstate.store.heads import summary

    def row_of(name: str) -> tuple[Row | None] | None:
        found = summary(ctx, kind, folder / name)
        judged = judge(found) if found is not None else None
        if judged is None:
            return None
        matches, key = judged
        return ((key, name) if matches else None,)

    taken = kept.take_in(changed, seen, row_of)
    if taken is None:
        return False
    overlay, _unkept = taken
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
    judged_rows: list[tuple[str, Row | None]] = []
    for each in found:
        judged = judge(each)
        if judged is None:
            return None
        matches, key = judged
        judged_rows.append((each.name, (key, each.name) if matches else None))
    kept.take_all(names, identities, judged_rows, seen)
    kept.save(ctx, names, seen)
    rows = kept.ordered([row for _name, row in judged_rows if row is not None])
    shown = rows[:size]
    return Page([name for _key, name in reversed(shown)], len(rows) - len(shown))


class _Kept(Kept[Row]):
    """A list's page as kept in the cache (store/kept.py): its rows are the newest matching records (sort key and
    file name), newest first; it leaves out the records that do not match."""

    FORMAT = FORMAT

    @classmethod
    def load(cls, ctx: Context, key: str, room: int) -> _Kept:
        """The page kept under `key` (an empty one when none is, or it cannot be read)."""
        return cls(key, room, read(ctx, key))

    def name(self, row: Row) -> str:
        return row[1]

    def encode(self, row: Row) -> tuple[Any, ...]:
        return row

    def decode(self, values: Any) -> Row:
        key, name = values
        return key, str(name)

    def ordered(self, rows: list[Row]) -> list[Row]:
        return sorted(rows, reverse=True)

    def answer(self, overlay: list[Row], size: int) -> Page | None:
        """The page with the matching records summarized now but not kept (recent ones), or None when too few of
        the newest records are known."""
        found = self.window(overlay, (), size)
        if found is None:
            return None
        rows, total, _valid = found
        shown = rows[:size]
        return Page([name for _key, name in reversed(shown)], total - len(shown))
