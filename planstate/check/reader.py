"""Reading the workspace's files for checks: each at most once per check, again only when its stat identity changed.

A check reads each file once (`Reader`), parses its front matter through the store,
and shares the bytes and data between the rules (`FileRead`). A record whose stat identity vouches
for its row in the store, in which the per-file rules of this version found nothing, is not read at all: its
read holds only the facts the checks across records need (recordfiles.FACTS), and its bytes and
whole front matter are fetched only if asked for. The watcher keeps one Reader for its whole life:
files whose stat identity did not change (and that no event named) are not read again.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.errors import PlanstateError
from planstate.core.files import MAX_FILE_BYTES, read_all, read_bytes
from planstate.model.kinds import RECORD_KINDS
from planstate.model.types import Problem
from planstate.model.validation import problems_for
from planstate.store import recordfiles
from planstate.store.cache import decode
from planstate.store.scan import IDENTITY, Identity, Listing
from planstate.text.conflicts import Conflict, conflict_blocks
from planstate.text.document import Document
from planstate.text.fastyaml import MISS, front_matter_data
from planstate.text.paths import shown_path

if TYPE_CHECKING:
    from planstate.check.findings import Finding
    from planstate.store.context import Context


class FileRead:
    """One planning file as one check read it: its bytes (or why they could not be read), its front matter, and
    what the per-file rules found in it (computed once per content)."""

    __slots__ = (
        "_doc",
        "_path",
        "_reader",
        "conflicts",
        "data",
        "entries",
        "error",
        "findings",
        "folder",
        "identity",
        "item",
        "kind",
        "name",
        "partial",
        "problems",
        "raw",
        "read_failed",
        "shown",
        "summary",
        "valid",
    )

    def __init__(self, path: Path | None, shown: str, kind: str, folder: Path | None = None, name: str = "") -> None:
        self._path = path  # made from `folder` and `name` only when asked for: 17,000 paths cost 50 ms
        self.folder = folder if folder is not None else path.parent if path is not None else Path()
        self.name = name or (path.name if path is not None else "")
        self.shown = shown
        self.kind = kind
        self.identity: tuple[int, ...] | None = None  # (device, inode, size, mtime, ctime) of the bytes read
        self.raw: bytes | None = None
        self.error: PlanstateError | None = None  # why it cannot be read or parsed
        self.read_failed = False  # the error happened reading the bytes, not parsing them
        self.conflicts: list[Conflict] = []
        self.data: Any = None
        self.problems: list[Problem] = []  # schema problems
        self.valid = False  # front matter is a mapping without schema problems
        self.findings: list[Finding] | None = None  # the per-file findings, once computed
        self.entries: list[dict[str, Any]] = []  # history.jsonl: its entries
        self.item: dict[str, Any] | None = None  # a valid record as the regions show it
        self.partial = False  # `data` holds only the record's facts: its file was not read (see `Reader`)
        self.summary: list[Any] | None = None  # a record's summary as the store keeps it (recordfiles.facets)
        self._doc: Document | None = None
        self._reader: Reader | None = None  # who reads a partial read's file when more than its facts is needed

    @property
    def path(self) -> Path:
        """The file."""
        if self._path is None:
            self._path = self.folder / self.name
        return self._path

    @property
    def mapping(self) -> dict[str, Any] | None:
        """The front matter when it is a mapping."""
        return self.data if isinstance(self.data, dict) else None

    def full(self) -> Any:
        """The whole front matter (a partial read holds only its facts: the rest comes from the store)."""
        if not self.partial:
            return self.data
        assert self._reader is not None
        return self._reader.ctx.cached_data(self.path)

    def doc(self) -> Document:
        """The parsed document (for locating fields), parsed on first use (a partial read reads its file then)."""
        if self._doc is None:
            if self.raw is None and self._reader is not None:
                ctx = self._reader.ctx
                self.raw = read_bytes(self.path, ctx.root, ctx.root.parent)
            assert self.raw is not None
            self._doc = Document.from_bytes(self.raw, self.shown)
        return self._doc

    def finding(
        self,
        code: str,
        segments: list[Any],
        message: str,
        hint: str,
        *,
        initiative: Path | None = None,
        stable: str | None = None,
    ) -> Finding:
        """A finding about one of this file's fields (`segments`, its path), located at that field's line."""
        from planstate.check.findings import Finding

        line, column = self.doc().locate(segments)
        name = shown_path(segments, self.data)
        return Finding(code, self.shown, line, column, message, hint, name, initiative, stable=stable)


# The version of the per-file rules (filerules.py) a row of the store was found clean by: bump it whenever they, or the
# format they check against, change what they find (rows marked clean by another version are judged again).
CLEAN = "1"
Judge = Callable[[FileRead], None]  # runs the per-file rules on a read, noting a clean one in the store
PRIME_AT = 200  # records no row of the store vouches for from which a folder is read in two processes
SAVE_EVERY = 2000  # records read in two processes between saves of their rows in the store
BATCH = 100  # records a process takes at a time when two read a folder (the last one it takes, the other may wait for)
MAX_BATCHES = 2048  # two bytes each in a pipe that must hold them all


class Reader:
    """Reads workspace files for checks: each at most once per check, with safe-path checks done per folder.

    Between checks (the watcher keeps one Reader), a file whose stat identity is unchanged and that no
    event named is not read again.
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._memo: dict[str, FileRead] = {}  # by the file's path as text (records: `_folder_memo`)
        self._folder_memo: dict[str, dict[str, FileRead]] = {}  # a record folder's reads by name, by its path
        self._listings: dict[str, tuple[tuple[int, ...], list[str]]] = {}  # a folder's record names, by its path
        self._seen: set[str] = set()
        self._folders: dict[Path, bool] = {}
        self._root_real: Path | None = None
        # Each folder's entries and their stat identities, taken just before by whoever runs the check (the findings
        # memo's key): its records are not listed again. Used once: the next check lists afresh.
        self.listed: dict[str, Listing] = {}
        self.reads = 0  # files actually read (for benchmarks)

    def forget(self, paths: Iterable[Path]) -> None:
        """Read these files (and list their folders) again next time, whatever their stat says: change events
        named them."""
        for path in paths:
            self._memo.pop(str(path), None)
            self._folder_memo.pop(str(path), None)
            self._folder_memo.get(str(path.parent), {}).pop(path.name, None)
            self._listings.pop(str(path), None)
            self._listings.pop(str(path.parent), None)

    def names(self, folder: Path) -> list[str]:
        """The names of the record files of a folder; listed again only when the folder's stat identity changed (a
        file was added, removed or renamed) or an event named it."""
        key = str(folder)
        try:
            info = os.stat(key)
        except OSError:
            self._listings.pop(key, None)
            return []
        identity = _identity(info)
        known = self._listings.get(key)
        if known is not None and known[0] == identity:
            return known[1]
        names = recordfiles.names(folder)
        self._listings[key] = (identity, names)
        return names

    def unread(self, folder: Path, name: str, shown: str, kind: str, data: dict[str, Any]) -> FileRead:
        """A read of a file that is not read now: it holds `data` (what the caller knows its front matter holds) and
        reads the file only when a finding about it must be located (see `FileRead.doc`)."""
        found = FileRead(None, shown, kind, folder, name)
        found.data, found.valid, found.partial, found._reader = data, True, True, self
        return found

    def begin(self) -> None:
        """Start a check: folders are looked at afresh (they may have been moved or replaced by links)."""
        self._seen = set()
        self._folders = {}
        self._root_real = None

    def end(self) -> None:
        """End a check: forget the files it did not see (deleted, or no longer part of the workspace)."""
        for path in [p for p in self._memo if p not in self._seen]:
            del self._memo[path]
        for folder in [p for p in self._folder_memo if p not in self._seen]:
            del self._folder_memo[folder]

    def file(self, path: Path, kind: str) -> FileRead:
        """The file at `path` read as `kind` (state, decision, blocker, session, history)."""
        key = str(path)
        self._seen.add(key)
        memo = self._memo.get(key)
        if memo is not None and memo.kind == kind and _unchanged(key, memo.identity):
            return memo
        found = self._read(path, kind)
        self._memo[key] = found
        return found

    def records(self, folder: Path, kind: str, judge: Judge | None = None) -> list[FileRead]:
        """The record files of a folder read as `kind`, in name order. The store vouches for the folder's rows first
        (store/folders.vouch); a record whose row says the per-file rules of this version found nothing in its
        bytes is not read: its read is partial, holding its facts and summary (decoded all at once). When many
        rows must be made anew and `judge` (which runs the per-file rules on a read and notes a clean one in the
        store) is given, those records are first read and judged in two processes (`_prime`)."""
        from planstate.store import folders

        key = str(folder)
        listed = self.listed.pop(key, None)
        self._seen.add(key)
        inside = self._inside(folder)
        prime = (lambda names: self._prime(folder, kind, names, judge)) if judge is not None and inside else None
        vouched = folders.vouch(self.ctx, folder, kind, listed, prime) if inside else None
        if vouched is None:  # no store to answer from, or a folder outside the workspace: read each file
            return self._remembered(key, [self._read(folder / name, kind) for name in self.names(folder)])
        names, identities = vouched.listing.records()
        if not names:
            self._folder_memo.pop(key, None)
            return []
        if judge is not None:  # rows made since the rules last ran (by a list, a region): judged in two processes
            unjudged = [row[0] for row in self.ctx.store.select(vouched.prefix, "name", "clean IS NOT ?", (CLEAN,))]
            if len(unjudged) >= PRIME_AT:
                self._prime(folder, kind, sorted(unjudged), judge)
        rows = {
            name: (clean, facts, summary)
            for name, clean, facts, summary in self.ctx.store.select(vouched.prefix, "name, clean, facts, summary")
        }
        memo = self._folder_memo.get(key, {})
        out: list[FileRead | None] = []
        light: list[tuple[int, str, Identity, str, str]] = []
        for name, identity in zip(names, identities, strict=True):
            known = memo.get(name)
            if known is not None and known.kind == kind and identity is not None and known.identity == identity:
                out.append(known)
                continue
            row = rows.get(name)
            if identity is not None and row is not None and row[0] == CLEAN and row[1] is not None and row[2]:
                light.append((len(out), name, identity, row[1], row[2]))
                out.append(None)
            else:  # it has findings, does not parse, is no regular file, or its row cannot be kept
                out.append(self._read(folder / name, kind))
        shown = self.ctx.display(folder) + os.sep
        for (index, name, identity, _facts, _summary), pair in zip(light, _decoded(light), strict=True):
            if pair is None:  # a row of another shape: read the file
                found = self._read(folder / name, kind)
            else:
                found = FileRead(None, shown + name, kind, folder, name)
                found.identity, found.data, found.summary, found.valid, found.findings = identity, *pair, True, []
                found.partial, found._reader = True, self
            out[index] = found
        return self._remembered(key, [found for found in out if found is not None])

    def _remembered(self, key: str, found: list[FileRead]) -> list[FileRead]:
        """The reads of a folder, remembered for the next check of a long-lived reader (the watcher's)."""
        self._folder_memo[key] = {read.name: read for read in found}
        return found

    def _prime(self, folder: Path, kind: str, names: list[str], judge: Judge) -> bool:
        """Read and judge the records `names` of a folder in two processes, this one and a forked one, each taking
        the next batch while there is one (a process the machine runs slower takes fewer) and saving the rows of
        what it took, so that they are ready (a cold check of 17,000 records parses on both cores and keeps none of
        them in memory). Tell whether it did (`PRIME_AT` records or more, and a fork could be made): the caller
        then takes the rows from the store again, and reads any that is not there."""
        import threading

        if len(names) < PRIME_AT or not hasattr(os, "fork") or threading.active_count() > 1:
            return False  # a fork copies one thread: a lock another one holds (a server's) would never be released
        size = max(BATCH, -(-len(names) // MAX_BATCHES))
        batches = [names[start : start + size] for start in range(0, len(names), size)]
        # Every batch's number, two bytes each, is in a pipe before either process reads it (at most 4 KiB: the
        # pipe holds them all); a read of two bytes takes one batch, whichever process makes it.
        numbers = b"".join(number.to_bytes(2, "big") for number in range(len(batches)))
        try:
            queue, feed = os.pipe()
        except OSError:
            return False
        try:
            written = os.write(feed, numbers)
        except OSError:
            written = 0
        os.close(feed)
        try:
            pid = os.fork() if written == len(numbers) else -1
        except OSError:
            pid = -1
        if pid < 0:
            os.close(queue)
            return False
        if pid == 0:  # the other process: saves through its own connection to the store; never returns
            status = 1
            try:
                self.ctx.store.detach()
                self._judge_batches(folder, kind, batches, queue, judge)
                status = 0 if self.ctx.save_cache() else 1
            finally:
                os._exit(status)
        try:
            self._judge_batches(folder, kind, batches, queue, judge)
        finally:
            os.close(queue)
            os.waitpid(pid, 0)
        self.ctx.save_cache()
        prefix = self.ctx.cache_key(folder) + "/"
        self.ctx.store.reload(prefix + name for name in names)  # the other process's rows are in the database
        return True

    def _judge_batches(self, folder: Path, kind: str, batches: list[list[str]], queue: int, judge: Judge) -> None:
        """Take batches of records by their numbers from `queue` until none is left, reading and judging them
        (`_judge_all`)."""
        done = 0
        while len(number := os.read(queue, 2)) == 2:
            done = self._judge_all(folder, kind, batches[int.from_bytes(number, "big")], judge, done)

    def _judge_all(self, folder: Path, kind: str, names: list[str], judge: Judge, done: int = 0) -> int:
        """Read and judge records of a folder, keeping only their rows, saved every `SAVE_EVERY` (`done`: how many
        were read before; saved rows drop their JSON text: memory stays flat however many there are). Returns how
        many are read now."""
        for count, name in enumerate(names, done + 1):
            judge(self._read(folder / name, kind))
            if count % SAVE_EVERY == 0:
                self.ctx.save_cache()
        return done + len(names)

    def _read(self, path: Path, kind: str) -> FileRead:
        found = FileRead(path, self.ctx.display(path), kind)
        self.reads += 1
        if self._inside(path.parent):
            _read_plainly(found)
        if found.raw is None:  # a link, a folder, a huge or vanished file: the careful reader says what is wrong
            try:
                found.raw = read_bytes(path, self.ctx.root, self.ctx.root.parent)
            except PlanstateError as exc:
                found.error, found.read_failed = exc, True
                return found
        found.conflicts = conflict_blocks(found.raw)
        if kind == "history":
            _history_lines(found)
        else:
            self._parse(found)
        return found

    def _parse(self, found: FileRead) -> None:
        """Parse a file's front matter and validate it."""
        assert found.raw is not None
        try:
            found.data, found._doc = self._front_matter(found.path, found.raw, found.shown, found.identity)
        except PlanstateError as exc:
            found.error = exc
            return
        known = self.ctx.record_summary(found.path) if found.kind != "state" else None
        found.summary = known
        if known is not None and known[4] is None and not known[5]:
            found.findings = [] if not found.conflicts else None  # valid, no unknown key: no finding of its own
            found.valid = True  # the summary kept with this very data says so, and costs nothing to read
            return
        found.problems = problems_for(found.kind, found.data)
        found.valid = isinstance(found.data, dict) and not found.problems

    def _front_matter(
        self, path: Path, raw: bytes, shown: str, identity: tuple[int, ...] | None
    ) -> tuple[Any, Document | None]:
        """The front matter of a file's bytes, through the workspace's store, and the document when
        it had to be parsed."""
        ctx = self.ctx

        def parse(data: bytes) -> Any:
            fast = front_matter_data(data)  # the round-trip parser's data, when the fast path vouches for it
            if fast is not MISS:
                return fast
            doc = Document.from_bytes(data, shown)
            if not doc.has_front_matter:
                raise PlanstateError("has no front matter (it must start with a '---' line)", file=shown, line=1)
            parsed.append(doc)
            return doc.data

        parsed: list[Document] = []
        data = ctx.cached_parse(path, raw, parse, identity)
        # A record's document is not kept: 17,000 node trees kept by a cold check took 344 MiB, and most records
        # have no finding to locate (FileRead.doc parses again for one that has).
        keep = parsed[0] if parsed and path.parent.name not in RECORD_KINDS else None
        return data, keep

    def _inside(self, folder: Path) -> bool:
        """Tell whether a folder is inside the workspace once links are followed (looked at once per check)."""
        known = self._folders.get(folder)
        if known is None:
            try:
                if self._root_real is None:
                    self._root_real = self.ctx.root.resolve()
                real = folder.resolve()
                known = real == self._root_real or self._root_real in real.parents
            except (OSError, RuntimeError):
                known = False
            self._folders[folder] = known
        return known


def _identity(info: os.stat_result) -> Identity:
    return IDENTITY(info)  # the scan's: a row stored from this read is looked up by the same identity


def _decoded(light: list[tuple[int, str, Identity, str, str]]) -> list[tuple[dict[str, Any], list[Any]] | None]:
    """The facts and summary of each vouched row (JSON), decoded in one call; None for one of another shape."""
    if not light:
        return []
    try:
        pairs = decode("[" + ",".join(f"[{item[3]},{item[4]}]" for item in light) + "]")
    except ValueError:
        pairs = [None] * len(light)
    return [_pair(pair) for pair in pairs]


def _pair(pair: Any) -> tuple[dict[str, Any], list[Any]] | None:
    """A vouched row's facts and summary, when they have their shape."""
    if not isinstance(pair, list) or len(pair) != 2:
        return None
    facts, summary = pair
    return (facts, summary) if isinstance(facts, dict) and isinstance(summary, list) and len(summary) == 6 else None


def _unchanged(path: str, identity: tuple[int, ...] | None) -> bool:
    """Tell whether the regular file at `path` still has the stat identity it had when it was read."""
    if identity is None:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and _identity(info) == identity


def _read_plainly(found: FileRead) -> None:
    """Read a regular file of sane size without following a link at its name, and note its stat identity; leaves
    `found.raw` None when that is not possible."""
    try:
        fd = os.open(found.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
            raw = read_all(fd, MAX_FILE_BYTES)
            if raw is not None:
                found.raw, found.identity = raw, _identity(info)
    except OSError:
        pass
    finally:
        os.close(fd)


def _history_lines(found: FileRead) -> None:
    """Parse history.jsonl's lines: its entries, and as its "data" the problems of the lines that are no entry."""
    from planstate.store import history

    assert found.raw is not None
    found.entries, problems = history.parse(found.raw, found.shown)
    found.problems = []
    found.findings = None
    found.data = problems
