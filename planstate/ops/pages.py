"""The pages of list commands, kept between commands and brought up to date from the files changed since.

`decision list`, `blocker list` and `session list` show the newest page of a kind's records that match their
options. What a page is (the names of the records shown, in order, and how many older ones match) depends only
on the record files of the kind's folder (its `archive/` aside) and on the list's options, so each list (by
label: kind, status filter, page size) keeps in the front-matter cache's `views` table, as a record region keeps
its head (store/heads.py): the stat identity of every record file it was made from, the names of those it does
not match, and the newest matching records (twice the page: sort key and name). A later call scans the folder
(one `lstat` per file, the floor that keeps a hand edit visible), and only the files new or changed since are
summarized (through the cache) and merged in, so a list run right after a write reads the new record, not all
of them. Too many changed files, too few newest records left (those shown were removed or stopped matching), a
kept page that is missing or unreadable, a record that does not validate or a file that cannot be read mean the
list takes every summary, as it does without a kept page; it keeps the page anew unless it met such a record or
file. As with the cache's rows, an identity is kept only when it was seen `RACY_NS` after its file last changed:
a file written in the same timestamp tick as a scan is summarized again until it is older. A list whose window
depends on the clock (`since`), that takes archived records, or that runs inside a transaction keeps no page.
"""

from __future__ import annotations

import marshal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.store.recordfiles import without_collector

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.recordfiles import Summary

FORMAT = 1  # bump when what a kept page holds changes
MANY = 64  # more changed files than this: taking every summary costs less than summarizing them one by one

Row = tuple[Any, str]  # a matching record's sort key (the caller's `order` of its date) and its file name
# A record's summary judged by the list: whether it matches and its sort key; None when the summary cannot say
# (a record that does not validate: the list reads it to warn about it).
Judge = Callable[["Summary"], "tuple[bool, Any] | None"]


class Page(NamedTuple):
    """The records a list shows (file names, oldest first) and how many older ones match."""

    names: list[str]
    more: int


@without_collector
def page(ctx: Context, folder: Path, kind: str, label: str, size: int, judge: Judge) -> Page | None:
    """The page of `size` records the list `label` shows of the records of `kind` in `folder`, from its kept page
    and the files changed since (kept again for next time), else from every summary (kept anew); None when a
    file cannot be read or a record does not validate (the caller lists in full and reports them)."""
    from planstate.store.heads import scan

    kept = _Kept.load(ctx, folder, label, 2 * size)
    seen = time.time_ns()
    scanned = scan(folder, kept.identities)  # before any summary is taken: a change after this shows next time
    if scanned is None:
        return None
    identities, changed = scanned
    if not kept.empty and len(changed) <= MANY:
        answer = _updated(ctx, folder, kind, kept, identities, changed, seen, size, judge)
        if isinstance(answer, Page):
            return answer
        if answer is False:
            return None
    return _rebuilt(ctx, folder, kind, kept, identities, seen, size, judge)


def _updated(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    identities: dict[str, tuple[int, ...]],
    changed: list[str],
    seen: int,
    size: int,
    judge: Judge,
) -> Page | bool | None:
    """The page from the kept one and the files changed since (summarized one by one, kept when old enough); False
    when a file cannot be read or a record does not validate, None when too few of the newest records are known."""
    from planstate.store.cache import settled
    from planstate.store.heads import summary

    if len(kept.identities) > len(identities) - sum(1 for name in changed if name not in kept.identities):
        for name in kept.identities.keys() - identities.keys():  # some are gone
            kept.drop(name)
    overlay: list[Row] = []
    for name in changed:
        kept.drop(name)
        found = summary(ctx, kind, folder / name)
        judged = judge(found) if found is not None else None
        if judged is None:
            return False
        matches, key = judged
        identity = identities[name]
        if settled(identity, seen):
            kept.add(name, identity, matches, key)
        elif matches:
            overlay.append((key, name))
    answer = kept.answer(overlay, size)
    if answer is not None:
        kept.save(ctx)
    return answer


def _rebuilt(
    ctx: Context,
    folder: Path,
    kind: str,
    kept: _Kept,
    identities: dict[str, tuple[int, ...]],
    seen: int,
    size: int,
    judge: Judge,
) -> Page | None:
    """The page from every summary, kept anew for next time; None when a file cannot be read or a record does not
    validate."""
    from planstate.store.cache import settled
    from planstate.store.recordfiles import folder_summaries

    found, problems = folder_summaries(ctx, folder, kind)
    if problems:
        return None
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
        identity = identities.get(name)
        if identity is not None and settled(identity, seen):
            kept.add(name, identity, matches, key, ordered=False)
    kept.order()
    kept.save(ctx)
    rows.sort(reverse=True)
    shown = rows[:size]
    return Page([name for _key, name in reversed(shown)], len(rows) - len(shown))


class _Kept:
    """A list's page as kept in the cache: identities of the files it holds, the names it does not match, and the
    newest matching records (newest first), always a prefix of all of them in that order."""

    def __init__(self, key: str, room: int, body: Any) -> None:
        self.key, self.room = key, room
        self.identities: dict[str, tuple[int, ...]] = {}
        self.left_out: set[str] = set()
        self.first: list[Row] = []
        self.empty = True
        self.changed = False
        if isinstance(body, tuple) and len(body) == 4 and body[0] == FORMAT:
            try:
                identities, left_out, first = body[1:]
                if not isinstance(identities, dict) or not all(isinstance(row, tuple) for row in first):
                    raise TypeError(key)
                self.identities, self.left_out, self.first = identities, set(left_out), list(first)
                self.empty = False
            except (TypeError, ValueError):
                self.identities, self.left_out, self.first = {}, set(), []

    @classmethod
    def load(cls, ctx: Context, folder: Path, label: str, room: int) -> _Kept:
        """The page kept for the list `label` of `folder` (an empty one when none is, or it cannot be read)."""
        key = f"list:{label}:{ctx.cache_key(folder)}"
        raw = ctx.cached_view(key)
        body: Any = None
        if raw is not None:
            try:
                body = marshal.loads(raw)
            except (ValueError, EOFError, TypeError):
                body = None
        return cls(key, room, body)

    @property
    def matched(self) -> int:
        """How many of the files held match the list."""
        return len(self.identities) - len(self.left_out)

    def clear(self) -> None:
        """Forget every file held."""
        self.identities, self.left_out, self.first = {}, set(), []
        self.changed = True

    def drop(self, name: str) -> None:
        """Forget a file that is gone or changed."""
        if self.identities.pop(name, None) is None:
            return
        self.changed = True
        if name in self.left_out:
            self.left_out.discard(name)
            return
        self.first = [row for row in self.first if row[1] != name]

    def add(self, name: str, identity: tuple[int, ...], matches: bool, key: Any, *, ordered: bool = True) -> None:
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

    def save(self, ctx: Context) -> None:
        """Keep the page in the cache, if it changed."""
        if not self.changed:
            return
        body = (FORMAT, self.identities, sorted(self.left_out), self.first)
        ctx.keep_view(self.key, marshal.dumps(body, 2))  # format 2: no reference bookkeeping, far cheaper

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
