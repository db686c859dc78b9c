"""The store: one SQLite file of what planstate read from the planning files, and the one rule for trusting it.

Parsing one record costs 2 to 5 ms; a check over 17,000 records would spend a minute on it. The store is
`.planning/.local/cache/store-v<VERSION>.sqlite` (machine-local, never committed). It holds one row per file read
(its path, its stat identity and a digest of its bytes when read, when that was, its front matter as JSON and,
for a record, its summary, its facts and what the per-file rules found), one row per record folder whose every
file a scan vouched for (the digest of that scan, and the files too recent to vouch for alone), and one row per
whole-workspace memo (`check`, `validate`: what they found, under the key of the whole tree's scan).

The trust rule, in one place (`settled`, `Store.trusted`): a row holds for a file while the file's stat identity
(store/scan.py) equals the row's and the row was taken at least `RACY_NS` after the file last changed (a write
within the filesystem's timestamp tick could keep the identity: the "racy git" problem); otherwise the file is
read, and the row holds while its bytes have the row's digest. A folder's row holds for every file of the folder
while the digest of a scan of it equals the row's: each of those files has the identity its row was vouched at,
but for the few the row names as too recent, whose bytes are compared again each time. A whole-workspace memo is
a folder row for the whole tree. Anything else is read from the files. Any problem with the database (missing,
damaged, foreign, locked, read-only, or `.local` that is not a folder) means reading the files: it costs time,
never a wrong answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.digests import blake2b_hex
from planstate.store.scan import Identity, changed_at
from planstate.text.plaindata import same

if TYPE_CHECKING:
    import sqlite3

VERSION = 1  # bump whenever what a row holds, or what a column means, changes: another version is another file
NAME = "store"
# An identity seen less than this long after the file's last change is not trusted alone: a write within the same
# timestamp tick (coarse kernel clocks, filesystems with 1 or 2 second times) could leave it unchanged.
RACY_NS = 2_000_000_000
BUSY = 10.0  # seconds a save waits for another process's write to the database before it gives up (costing only time)
MISS = object()
# What a damaged database raises besides SQLite's own errors: text it cannot decode (or a file name with undecodable
# bytes it cannot encode), numbers out of range.
_DAMAGED = (ValueError, OverflowError)
# What an older planstate kept under .local/cache/ (one file or folder per kind of cache): deleted when the store is
# made, as nothing reads them any more.
LEGACY = ("front-matter-v", "memo-", "rows-", "listings")


def settled(identity: Identity, seen: int) -> bool:
    """Tell whether an identity taken at `seen` (time_ns) was taken long enough after its file last changed
    (`RACY_NS`) to vouch for the file's bytes alone."""
    return seen - changed_at(identity) >= RACY_NS


def digest(data: bytes) -> str:
    """The digest of a file's bytes, compared when its stat identity cannot be trusted alone."""
    return blake2b_hex(data, 16)


class Facets(NamedTuple):
    """What a record's row holds besides its data (recordfiles.facets makes them): its summary and facts as JSON,
    and the columns the queries select and order by."""

    summary: str | None  # recordfiles.Summary's values after its folder and name, as JSON ("null": no mapping)
    facts: str | None  # recordfiles.FACTS as JSON
    rid: str | None  # its id, when its front matter's `id` is text
    order: str | None  # what its kind's regions order it by (Summary.order)
    status: str | None
    valid: int | None  # 1 valid, 0 not valid, None no mapping
    phase: int | None  # a decision's phase number
    refers: int  # 1 when its facts name another record or a phase a rule checks
    started: int | None  # a session's start and end, in microseconds (clock.instant): ordered as the times
    ended: int | None


Summarize = Callable[[Any], Facets]  # a record file's front matter -> its facets
NO_FACETS = Facets(None, None, None, None, None, None, None, 0, None, None)
_FACETS = "summary, facts, rid, ord, status, valid, phase, refers, started, ended"
_COLUMNS = f"dev, ino, size, mtime, ctime, seen, digest, data, clean, {_FACETS}"
_TABLES = (
    "CREATE TABLE IF NOT EXISTS files (key TEXT PRIMARY KEY, folder TEXT, name TEXT, dev INTEGER, ino INTEGER, "
    "size INTEGER, mtime INTEGER, ctime INTEGER, seen INTEGER, digest TEXT, data TEXT, clean TEXT, summary TEXT, "
    "facts TEXT, rid TEXT, ord TEXT, status TEXT, valid INTEGER, phase INTEGER, refers INTEGER, started INTEGER, "
    "ended INTEGER) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS files_in_order ON files (folder, ord, rid)",
    "CREATE INDEX IF NOT EXISTS files_by_status ON files (folder, valid, status)",  # a folder's counts, read narrow
    # Every column a query over a whole folder tests or counts, so such a query reads this index, not the rows'
    # data (a folder of 10,000 records is a few hundred kilobytes of it, against 10 MB of rows).
    "CREATE INDEX IF NOT EXISTS files_columns ON files (folder, name, clean, valid, rid, status, ord, phase, refers, "
    "started, ended, dev, ino, size, mtime, ctime, seen)",
    "CREATE TABLE IF NOT EXISTS folders (key TEXT PRIMARY KEY, digest TEXT, recent TEXT) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS memos (key TEXT PRIMARY KEY, inputs TEXT, recent TEXT, body TEXT) WITHOUT ROWID",
)


# ---------------------------------------------------------------------------- JSON that survives the round trip


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


# One decoder and one encoder for every call (json.loads with a hook makes one per call: a resume decodes hundreds).
_DECODER = json.JSONDecoder(object_hook=_decode)
_ENCODER = json.JSONEncoder(default=_encode, allow_nan=False, ensure_ascii=False)


def decode(text: str) -> Any:
    """Data from the JSON the store keeps (dates and times restored)."""
    return _DECODER.decode(text)


def encode_known(data: Any) -> str:
    """Data known to survive the round trip (part of data `exact_json` took) as the JSON the store keeps."""
    return _ENCODER.encode(data)


def exact_json(data: Any) -> str | None:
    """Data as the JSON the store keeps, when it survives the round trip exactly (no int keys, sets or NaN; dates
    and times as they were); else None."""
    try:
        text = _ENCODER.encode(data)
        if _exact(data):  # a cold check stores 17,000 rows: decoding each again to compare cost a third of the store
            return text
        back = decode(text)
    except (TypeError, ValueError):
        return None
    return text if same(back, data) else None


_SIMPLE = frozenset({str, int, bool, float, type(None), date})  # JSON (with `_encode`) gives each back as it was


def _exact(value: Any) -> bool:
    """Tell, without decoding it, that `value`'s JSON decodes to `value` (`same`): plain types only, str keys, no
    mapping `_decode` would take for a date. False says only that the round trip must be tried."""
    kind = type(value)
    if kind in _SIMPLE:
        return True  # a float that JSON cannot carry (NaN, infinity) is refused by json.dumps first
    if kind is dict:
        if len(value) == 1 and ("$dt" in value or "$d" in value):
            return False
        for key, item in value.items():
            if type(key) is not str or (type(item) not in _SIMPLE and not _exact(item)):
                return False
        return True
    if kind is list:
        return all(type(item) in _SIMPLE or _exact(item) for item in value)
    # an aware time keeps its offset only in a fixed-offset zone (`timezone`); fromisoformat gives one back
    return kind is datetime and (value.tzinfo is None or type(value.tzinfo) is timezone)


# ---------------------------------------------------------------------------- rows


class Row:
    """One file as the store keeps it: its identity and digest when read, when that was (`seen`), its front matter
    (JSON, decoded once; None when not fetched, or when it cannot be kept), the version of the per-file rules that
    found nothing in it, and its facets."""

    __slots__ = ("clean", "digest", "facets", "identity", "seen", "text", "value")

    def __init__(
        self,
        identity: Identity | None,
        seen: int,
        hashed: str,
        text: str | None,
        facets: Facets,
        clean: str | None = None,
    ) -> None:
        self.identity = identity
        self.seen = seen
        self.digest = hashed
        self.text = text
        self.facets = facets
        self.clean = clean
        self.value: Any = MISS

    @property
    def summary(self) -> str | None:
        """A record's summary as JSON (recordfiles.summary_values), or None."""
        return self.facets.summary

    @property
    def facts(self) -> str | None:
        """A record's facts as JSON (recordfiles.FACTS), or None."""
        return self.facets.facts

    def trusted(self, identity: Identity | None) -> bool:
        """The trust rule for one file: whether a file with `identity` holds the bytes this row was read from,
        without reading it (the same identity, seen `RACY_NS` after the file last changed)."""
        return identity is not None and self.identity == identity and settled(identity, self.seen)

    def data(self) -> Any:
        """The row's front matter, decoded on first use."""
        if self.value is MISS:
            assert self.text is not None
            self.value = decode(self.text)
        return self.value


def _row_of(found: tuple[Any, ...]) -> Row:
    """A row as the database returns it (the columns of `_COLUMNS`)."""
    identity = tuple(found[:5]) if found[0] is not None else None
    return Row(identity, found[5], found[6], found[7], Facets._make(found[9:]), found[8])


class FolderRow(NamedTuple):
    """What the store vouched for of a record folder: the digest of its scan, and the files too recent then for
    their identity alone to vouch for their bytes (each compared with its row's digest when next scanned alike)."""

    digest: str
    recent: list[str]


class Memo(NamedTuple):
    """A whole-workspace memo: the key of the tree it was kept under, the files too recent then for their identity
    to vouch alone (each with the digest of its bytes), and what it holds (JSON)."""

    inputs: str
    recent: list[tuple[str, str | None]]
    body: str


class Store:
    """The store of one workspace: rows read from the database when first asked for, changed in memory, written
    by `save` in one transaction."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / f"{NAME}-v{VERSION}.sqlite"
        self._db: sqlite3.Connection | None = None
        self._opened = False
        self._rows: dict[str, Row | None] = {}  # looked up (None: not kept)
        self._dirty: dict[str, tuple[str, str, Row]] = {}  # key -> (folder, name, row) to write
        self._gone: set[str] = set()  # keys whose rows are to be deleted
        self._folders: dict[str, FolderRow | None] = {}  # to write (None: to delete)
        self._inherited: sqlite3.Connection | None = None  # a forked process's copy of its parent's (see `detach`)

    # ------------------------------------------------------------------ the database

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        """The database, opened once; made when `create` and missing; None when it cannot be used."""
        if self._db is not None or (self._opened and not create):
            return self._db
        self._opened = True
        if not create and not self.path.is_file():
            return None
        import sqlite3

        made = create and not self.path.is_file()
        try:
            if create and not self.folder.is_dir():
                self.folder.parent.mkdir(exist_ok=True)  # fails when the workspace folder is gone
                self.folder.mkdir(exist_ok=True)
            # A busy database waits for the other writer (a cold check saves 2,000 rows at a time from two processes)
            db = sqlite3.connect(self.path, timeout=BUSY, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=OFF")  # a cache: a power cut costs a rebuild, never a wrong answer
            if made:
                for statement in _TABLES:
                    db.execute(statement)
            else:
                db.execute("SELECT key, folder, name, clean, phase, started FROM files LIMIT 0")  # its shape is ours
        except (OSError, sqlite3.Error, *_DAMAGED):
            self._discard()
            return None
        if made:
            _drop_legacy(self.folder)
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

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[Any]:
        """The rows a query returns; none when the database is missing or cannot be read (then it is discarded)."""
        db = self._connect(create=False)
        if db is None:
            return []
        import sqlite3

        try:
            return db.execute(sql, tuple(args)).fetchall()
        except (sqlite3.Error, *_DAMAGED):
            self._discard()
            return []

    # ------------------------------------------------------------------ one file

    def _row(self, key: str) -> Row | None:
        if key in self._dirty:
            return self._dirty[key][2]
        if key in self._rows:
            return self._rows[key]
        found = self.query(f"SELECT {_COLUMNS} FROM files WHERE key = ?", (key,))
        row = self._rows[key] = _row_of(found[0]) if found else None
        return row

    def row(self, key: str) -> Row | None:
        """The row kept of the file named `key` (trusted or not: see `Row.trusted`), or None."""
        return self._row(key)

    def known(self, key: str, identity: Identity | None) -> Any:
        """The kept front matter of a file whose stat identity is `identity`, when that alone vouches for it; else
        `MISS` (the caller reads the file)."""
        row = self._row(key)
        if row is None or not row.trusted(identity):
            return MISS
        return self._value(key, row)

    def vouched(self, key: str, identity: Identity | None) -> Row | None:
        """The row of a file whose stat identity is `identity` when that alone vouches for it, else None."""
        row = self._row(key)
        return row if row is not None and row.trusted(identity) else None

    def get(
        self,
        data: bytes,
        key: str,
        parse: Callable[[bytes], Any],
        identity: Identity | None = None,
        summarize: Summarize | None = None,
    ) -> Any:
        """The front matter of a file whose bytes are `data` (and whose stat identity was `identity` before they were
        read): from its row while the identity or the bytes' digest vouch for it, else `parse(data)`, kept then (with
        its facets, `summarize`). A row whose bytes are unchanged is renewed with `identity`, keeping what the rules
        found in them."""
        value = self.known(key, identity)
        if value is not MISS:
            return value
        hashed = digest(data)
        row = self._row(key)
        if row is not None and row.digest == hashed:
            value = self._value(key, row)
            if value is not MISS:
                if identity is not None and not row.trusted(identity):
                    facets = row.facets if row.facets.summary is not None or summarize is None else summarize(value)
                    self._store(key, Row(identity, time.time_ns(), hashed, row.text, facets, row.clean))
                return value
        value = parse(data)
        facets = summarize(value) if summarize is not None else NO_FACETS
        self._store(key, Row(identity, time.time_ns(), hashed, exact_json(value), facets))
        return value

    def renewed(self, key: str, identity: Identity, data: bytes) -> Row | None:
        """The row of a file whose identity alone cannot vouch for it, when `data` (its bytes, read after `identity`
        was taken) has the row's digest: renewed with `identity`, as `get` would, without decoding anything."""
        row = self._row(key)
        if row is None or row.digest != digest(data):
            return None
        renewed = Row(identity, time.time_ns(), row.digest, row.text, row.facets, row.clean)
        if row.text is None and row.facets.summary is None:  # nothing kept of it yet but its digest
            return None
        self._store(key, renewed)
        return renewed

    def broken(self, key: str, identity: Identity | None, data: bytes | None) -> None:
        """Keep that the file named `key` cannot be used as it is (it does not parse, or cannot be read): a row with
        no data and no facets, so a folder's scan vouches for it and only a reader that reports it reads it."""
        hashed = digest(data) if data is not None else ""
        self._store(key, Row(identity, time.time_ns(), hashed, None, NO_FACETS))

    def put(self, content: bytes, key: str, data: Any, identity: Identity | None, summarize: Summarize | None) -> None:
        """Keep the data of a file this process just wrote (its bytes are `content`, its identity right after the
        write `identity`), so the next reader parses nothing."""
        facets = summarize(data) if summarize is not None else NO_FACETS
        self._store(key, Row(identity, time.time_ns(), digest(content), exact_json(data), facets))

    def mark_clean(self, key: str, identity: Identity | None, version: str) -> None:
        """Note that the per-file rules of `version` found nothing in the bytes of the file read with `identity`."""
        row = self._row(key)
        if row is None or identity is None or row.identity != identity or row.clean == version:
            return
        if row.text is None and not self._fetch(key, row):
            return
        row.clean = version
        self._store(key, row)

    def forget(self, keys: Iterable[str]) -> None:
        """Delete the rows of files that are gone."""
        for key in keys:
            self._rows[key] = None
            self._dirty.pop(key, None)
            self._gone.add(key)

    def _value(self, key: str, row: Row) -> Any:
        """A row's front matter, fetched first for a row read without it; MISS when it cannot be had."""
        if row.text is None and not self._fetch(key, row):
            return MISS
        try:
            return row.data()
        except ValueError:
            return MISS

    def _fetch(self, key: str, row: Row) -> bool:
        """Fetch the data of a row read without it; tell whether it is there now."""
        found = self.query("SELECT data FROM files WHERE key = ? AND digest = ?", (key, row.digest))
        if not found or not isinstance(found[0][0], str):
            return False
        row.text = found[0][0]
        return True

    def _store(self, key: str, row: Row) -> None:
        folder, _slash, name = key.rpartition("/")
        self._rows[key] = row
        self._gone.discard(key)
        self._dirty[key] = (folder, name, row)

    # ------------------------------------------------------------------ a record folder

    def folder_row(self, prefix: str) -> FolderRow | None:
        """What the store vouched for of the folder whose files' keys start with `prefix` (`decisions/`), or None."""
        if prefix in self._folders:
            return self._folders[prefix]
        found = self.query("SELECT digest, recent FROM folders WHERE key = ?", (prefix,))
        if not found:
            return None
        try:
            recent = json.loads(found[0][1])
        except (TypeError, ValueError):
            return None
        if not isinstance(recent, list) or not all(isinstance(name, str) for name in recent):
            return None
        return FolderRow(str(found[0][0]), recent)

    def keep_folder(self, prefix: str, row: FolderRow | None) -> None:
        """Keep (None: forget) what a scan vouched for of a folder, written with the rows by `save`."""
        self._folders[prefix] = row

    def identities(self, prefix: str) -> dict[str, Row]:
        """The identity of every file kept in the folder `prefix` and when it was taken, by name, as rows that can
        only tell whether they are trusted (`Row.trusted`), in one query."""
        found = self.query(
            "SELECT name, dev, ino, size, mtime, ctime, seen FROM files WHERE folder = ?", (prefix.rstrip("/"),)
        )
        out = {item[0]: Row(item[1:6] if item[1] is not None else None, item[6], "", None, NO_FACETS) for item in found}
        for folder, name, row in self._dirty.values():
            if folder == prefix.rstrip("/"):
                out[name] = row
        for key in self._gone:
            if key.startswith(prefix):
                out.pop(key[len(prefix) :], None)
        return out

    def select(self, prefix: str, columns: str, where: str = "", args: Iterable[Any] = (), tail: str = "") -> list[Any]:
        """Columns of the rows of the folder `prefix` (its files' keys start with it), as the database keeps them:
        the caller writes its rows first (`save`), and asks only of a folder a scan just vouched for."""
        clause = f" AND ({where})" if where else ""
        return self.query(f"SELECT {columns} FROM files WHERE folder = ?{clause} {tail}", (prefix.rstrip("/"), *args))

    def values_of(self, prefix: str, names: list[str], column: str, where: str = "") -> dict[str, Any]:
        """The `column` of each of the files `names` of the folder `prefix` that has a row (and meets `where`), by
        name, in a few queries whatever the number of names."""
        clause = f" AND ({where})" if where else ""
        found: dict[str, Any] = {}
        for start in range(0, len(names), 500):  # under SQLite's limit of parameters, whatever its build
            chunk = [prefix + name for name in names[start : start + 500]]
            marks = ", ".join("?" * len(chunk))
            found.update(self.query(f"SELECT name, {column} FROM files WHERE key IN ({marks}){clause}", chunk))
        return found

    def facts_of(self, prefix: str, names: list[str]) -> list[tuple[str, str | None]]:
        """The facts (JSON, or None) kept of the files `names` of the folder `prefix`, in the order given (a file
        with no row is left out)."""
        found = self.values_of(prefix, names, "facts")
        return [(name, found[name]) for name in names if name in found]

    # ------------------------------------------------------------------ the whole workspace

    def memo(self, label: str) -> Memo | None:
        """The memo kept under `label` (which command, with which options), or None."""
        found = self.query("SELECT inputs, recent, body FROM memos WHERE key = ?", (label,))
        if not found:
            return None
        inputs, recent, body = found[0]
        try:
            files = [(str(name), hashed) for name, hashed in json.loads(recent)]
        except (TypeError, ValueError):
            return None
        return Memo(str(inputs), files, str(body))

    def keep_memo(self, label: str, memo: Memo) -> None:
        """Keep a memo under `label` (best effort, at once)."""
        db = self._connect(create=True)
        if db is None:
            return
        import sqlite3

        with contextlib.suppress(sqlite3.Error, *_DAMAGED):
            db.execute(
                "INSERT OR REPLACE INTO memos VALUES (?, ?, ?, ?)",
                (label, memo.inputs, json.dumps(memo.recent), memo.body),
            )

    # ------------------------------------------------------------------ sharing with a forked process

    def detach(self) -> None:
        """In a forked process: never touch the parent's connection (kept, unused, so it is never closed here)
        and forget what was to be saved; this process opens its own connection to save what it reads."""
        self._inherited = self._db
        self._db = None
        self._opened = False
        self._dirty, self._gone, self._folders = {}, set(), {}

    def reload(self, keys: Iterable[str]) -> None:
        """Look the rows of these files up again when next asked for (another process saved them)."""
        for key in keys:
            self._rows.pop(key, None)

    # ------------------------------------------------------------------ writing

    def save(self) -> bool:
        """Write the rows and folders changed since the last save in one transaction; best effort, never an error.
        Tell whether they are all in the database."""
        if not self._dirty and not self._gone and not self._folders:
            return True
        db = self._connect(create=True)
        rows = [
            (key, folder, name, *(row.identity or (None,) * 5), row.seen, row.digest, row.text, row.clean, *row.facets)
            for key, (folder, name, row) in self._dirty.items()
        ]
        gone = [(key,) for key in self._gone]
        folders = [(key, row) for key, row in self._folders.items()]
        saved = list(self._dirty.items())
        self._dirty, self._gone, self._folders = {}, set(), {}
        if db is None:
            return False
        import sqlite3

        try:
            with db:
                db.execute("BEGIN")
                db.executemany(f"INSERT OR REPLACE INTO files VALUES ({', '.join('?' * 22)})", rows)
                db.executemany("DELETE FROM files WHERE key = ?", gone)
                for key, kept in folders:
                    if kept is None:
                        db.execute("DELETE FROM folders WHERE key = ?", (key,))
                    else:
                        db.execute(
                            "INSERT OR REPLACE INTO folders VALUES (?, ?, ?)",
                            (key, kept.digest, json.dumps(kept.recent)),
                        )
        except (sqlite3.Error, *_DAMAGED):
            return False  # busy for a second (another process saving) or broken: only time is lost
        for _key, (_folder, _name, row) in saved:
            row.text, row.value = None, MISS  # saved: fetched again if asked for (17,000 of them cost 30 MiB)
        return True

    def close(self) -> None:
        """Close the database (the next use opens it again)."""
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        self._db = None
        self._opened = False


def _drop_legacy(folder: Path) -> None:
    """Delete what older planstates kept in the store folder (`LEGACY`) and older formats of the store: nothing reads
    them, and a workspace's cache would otherwise grow with each upgrade."""
    import shutil

    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            old_store = entry.startswith(f"{NAME}-v") and entry != f"{NAME}-v{VERSION}.sqlite"
            if old_store or entry.startswith(LEGACY):
                target = folder / entry
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        target.unlink()
