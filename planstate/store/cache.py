"""A machine-local cache of parsed front matter, one row per file, trusted by the file's stat identity.

Parsing one record costs 2 to 5 ms; a check over 17,000 records would spend a minute on it. The
cache is a SQLite database in `.planning/.local/cache/` (never committed), one row per file: its
path, its stat identity when it was read (device, inode, size, mtime_ns, ctime_ns), a digest of its
bytes and its front matter as JSON. A file whose stat identity is unchanged is answered without
reading it; any change to its bytes changes its ctime (which no tool can set back), so a hand edit
of the same size with its mtime restored, a checkout or a merge is read again. A file changed
within the filesystem's timestamp granularity of its last read could keep its identity, so an
identity is trusted only when it was seen well after the file last changed (`RACY_NS`, as git's
index does); before that, the file is read and its digest compared. One row per file means a read
looks up only the files it needs and a write rewrites only its own rows. Losing or corrupting the
cache costs only time: any problem with it means starting empty, and nothing is ever answered
from it that the files do not say.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.digests import blake2b_hex
from planstate.text.plaindata import same

if TYPE_CHECKING:
    import sqlite3

VERSION = 5  # bump whenever what a row holds changes (its summary included)
# An identity seen less than this long after the file's last change is not trusted alone: a write within the same
# timestamp tick (coarse kernel clocks, filesystems with 1 or 2 second times) could leave it unchanged.
RACY_NS = 2_000_000_000

Identity = tuple[int, int, int, int, int]  # (device, inode, size, mtime_ns, ctime_ns)
Summarize = Callable[[Any], "str | None"]  # a file's front matter -> the summary kept with it
MISS = object()
_COLUMNS = "dev, ino, size, mtime, ctime, seen, digest, data, summary"


def identity_of(info: os.stat_result) -> Identity:
    """The stat identity of a file: what changes whenever its bytes do."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$dt": value.isoformat()}
    if isinstance(value, date):
        return {"$d": value.isoformat()}
    raise TypeError(f"not cacheable: {type(value).__name__}")


def _decode(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if "$dt" in obj:
            return datetime.fromisoformat(obj["$dt"])
        if "$d" in obj:
            return date.fromisoformat(obj["$d"])
    return obj


def digest(data: bytes) -> str:
    """The digest of a file's bytes, compared when its stat identity cannot be trusted alone."""
    return blake2b_hex(data, 16)


def _dumps(data: Any) -> str | None:
    """Front matter as JSON, when it survives the JSON round trip exactly (no int keys, sets or NaN); else None."""
    try:
        text = json.dumps(data, default=_encode, allow_nan=False, ensure_ascii=False)
        back = json.loads(text, object_hook=_decode)
    except (TypeError, ValueError):
        return None
    return text if same(back, data) else None


class _Row:
    """One cached file: its identity and digest when read, when that was, and its front matter (JSON, decoded once)."""

    __slots__ = ("digest", "identity", "seen", "summary", "text", "value")

    def __init__(self, identity: Identity | None, seen: int, hashed: str, text: str, summary: str | None) -> None:
        self.identity = identity
        self.seen = seen
        self.digest = hashed
        self.text = text
        self.summary = summary  # a record's summary as JSON (recordfiles.summary), for regions and lists
        self.value: Any = MISS

    def trusted(self, identity: Identity | None) -> bool:
        """Tell whether a file with `identity` holds the bytes this row was read from, without reading it."""
        if identity is None or self.identity != identity:
            return False
        return self.seen - max(identity[3], identity[4]) >= RACY_NS

    def data(self) -> Any:
        if self.value is MISS:
            self.value = json.loads(self.text, object_hook=_decode)
        return self.value


def _row_of(found: tuple[Any, ...]) -> _Row:
    """A row as the database returns it (the columns of `_COLUMNS`)."""
    identity = tuple(found[:5]) if found[0] is not None else None
    return _Row(identity, found[5], found[6], found[7], found[8])


class FrontMatterCache:
    """Parsed front matter of workspace files, reused while a file's stat identity (or its digest) is unchanged."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / f"{name}-v{VERSION}.sqlite"
        self._db: sqlite3.Connection | None = None
        self._opened = False
        self._rows: dict[str, _Row | None] = {}  # looked up (None: not cached)
        self._dirty: dict[str, _Row] = {}

    # ------------------------------------------------------------------ reading

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        """The database, opened once; made when `create` and missing; None when it cannot be used."""
        if self._db is not None or (self._opened and not create):
            return self._db
        self._opened = True
        if not create and not self.path.is_file():
            return None
        import sqlite3

        try:
            if create and not self.path.parent.is_dir():
                self.path.parent.parent.mkdir(exist_ok=True)  # fails when the workspace folder is gone
                self.path.parent.mkdir(exist_ok=True)
            db = sqlite3.connect(self.path, timeout=1.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=OFF")  # a cache: a power cut costs a rebuild, never a wrong answer
            db.execute(
                "CREATE TABLE IF NOT EXISTS files (key TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER, "
                "mtime INTEGER, ctime INTEGER, seen INTEGER, digest TEXT, data TEXT, summary TEXT) WITHOUT ROWID"
            )
        except (OSError, sqlite3.Error):
            self._discard()
            return None
        self._db = db
        return db

    def _discard(self) -> None:
        """Forget a database that cannot be used, and delete it so the next process starts empty."""
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        self._db = None
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _row(self, key: str) -> _Row | None:
        if key in self._dirty:
            return self._dirty[key]
        if key in self._rows:
            return self._rows[key]
        row = None
        db = self._connect(create=False)
        if db is not None:
            import sqlite3

            try:
                found = db.execute(f"SELECT {_COLUMNS} FROM files WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error:
                self._discard()
                found = None
            if found is not None:
                row = _row_of(found)
        self._rows[key] = row
        return row

    def rows_under(self, prefix: str) -> dict[str, _Row]:
        """The identity and summary of every cached file whose key starts with `prefix` (a folder's files,
        `decisions/`), in one query; their data is not fetched (these rows answer `trusted` and `summary` only)."""
        db = self._connect(create=False)
        out: dict[str, _Row] = {}
        if db is not None:
            import sqlite3

            try:
                found = db.execute(
                    "SELECT key, dev, ino, size, mtime, ctime, seen, digest, '', summary FROM files "
                    "WHERE key > ? AND key < ?",
                    (prefix, prefix + "\U0010ffff"),
                ).fetchall()
            except sqlite3.Error:
                self._discard()
                found = []
            out = {item[0]: _row_of(item[1:]) for item in found}
        out.update((key, row) for key, row in self._dirty.items() if key.startswith(prefix))
        return out

    def summaries_under(self, prefix: str) -> dict[str, tuple[Any, ...]]:
        """The summary of every cached file whose key starts with `prefix` and has one, by the rest of its key:
        `(dev, ino, size, mtime, ctime, seen, summary)`, in one query and without a row object each (a region
        over 10,000 decisions asks for all of them on every write). A row vouches for its file as `_Row.trusted`
        says: same identity, seen `RACY_NS` after the file last changed (recordfiles.folder_summaries compares)."""
        db = self._connect(create=False)
        out: dict[str, tuple[Any, ...]] = {}
        if db is not None:
            import sqlite3

            try:
                found = db.execute(
                    "SELECT substr(key, ?), dev, ino, size, mtime, ctime, seen, summary FROM files "
                    "WHERE key > ? AND key < ? AND summary IS NOT NULL AND dev IS NOT NULL",
                    (len(prefix) + 1, prefix, prefix + "\U0010ffff"),
                ).fetchall()
            except sqlite3.Error:
                self._discard()
                found = []
            out = {item[0]: item[1:] for item in found}
        for key, row in self._dirty.items():
            if key.startswith(prefix):
                rest = key[len(prefix) :]
                if row.identity is not None and row.summary is not None:
                    out[rest] = (*row.identity, row.seen, row.summary)
                else:
                    out.pop(rest, None)
        return out

    def prefetch(self) -> None:
        """Read every row in one query, for a reader about to look most of them up (a check)."""
        db = self._connect(create=False)
        if db is None:
            return
        import sqlite3

        try:
            found = db.execute(f"SELECT key, {_COLUMNS} FROM files").fetchall()
        except sqlite3.Error:
            self._discard()
            return
        for item in found:
            self._rows.setdefault(item[0], _row_of(item[1:]))

    def summary(self, key: str) -> str | None:
        """The summary stored with a file's row (None when there is none)."""
        row = self._row(key)
        return row.summary if row is not None else None

    def known(self, key: str, identity: Identity | None) -> Any:
        """The cached front matter of a file whose stat identity is `identity`, when that alone vouches for it;
        else `MISS` (the caller reads the file)."""
        row = self._row(key)
        if row is None or not row.trusted(identity):
            return MISS
        try:
            return row.data()
        except ValueError:
            return MISS

    def get(
        self,
        data: bytes,
        key: str,
        parse: Callable[[bytes], Any],
        identity: Identity | None = None,
        summarize: Summarize | None = None,
    ) -> Any:
        """The front matter of a file whose bytes are `data` (and whose stat identity was `identity` before they
        were read): cached when they are unchanged, else `parse(data)`, which is then remembered (with its
        summary, `summarize(data)`)."""
        value = self.known(key, identity)
        if value is not MISS:
            return value
        hashed = digest(data)
        row = self._row(key)
        if row is not None and row.digest == hashed:
            try:
                value = row.data()
            except ValueError:
                value = MISS
            if value is not MISS:
                if identity is not None and not row.trusted(identity):
                    summary = row.summary if row.summary is not None or summarize is None else summarize(value)
                    self._store(key, identity, hashed, row.text, value, summary)  # trusted from now on, once not racy
                return value
        value = parse(data)
        text = _dumps(value)
        if text is not None:
            self._store(key, identity, hashed, text, value, summarize(value) if summarize is not None else None)
        else:  # data JSON cannot carry exactly: never cached, and no older row of the file answers for it
            self._rows[key] = None
            self._dirty.pop(key, None)
        return value

    def put(self, content: bytes, key: str, data: Any, summarize: Summarize | None = None) -> None:
        """Remember the data of a file just written (its bytes are `content`), so the next reader needs no parse;
        its stat identity is taken on the next read, which compares the digest once."""
        text = _dumps(data)
        if text is not None:
            self._store(key, None, digest(content), text, data, summarize(data) if summarize is not None else None)

    def _store(
        self, key: str, identity: Identity | None, hashed: str, text: str, value: Any, summary: str | None
    ) -> None:
        row = _Row(identity, time.time_ns(), hashed, text, summary)
        row.value = value
        self._rows[key] = row
        self._dirty[key] = row

    # ------------------------------------------------------------------ writing

    def save(self) -> None:
        """Write the rows read or written since the last save; best effort, never an error."""
        if not self._dirty:
            return
        db = self._connect(create=True)
        if db is None:
            self._dirty.clear()
            return
        import sqlite3

        rows = [
            (key, *(row.identity or (None,) * 5), row.seen, row.digest, row.text, row.summary)
            for key, row in self._dirty.items()
        ]
        try:
            with db:
                db.execute("BEGIN")
                db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.Error:
            pass  # busy for a second (another process saving) or broken: only time is lost
        self._dirty.clear()

    def close(self) -> None:
        """Close the database (the next use opens it again)."""
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        self._db = None
        self._opened = False
