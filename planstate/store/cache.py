"""A machine-local cache of parsed front matter, one row per file, trusted by the file's stat identity.

Parsing one record costs 2 to 5 ms; a check over 17,000 records would spend a minute on it. The
cache is a SQLite database in `.planning/.local/cache/` (never committed), one row per file: its
path, its stat identity when it was read (device, inode, size, mtime_ns, ctime_ns), a digest of its
bytes, its front matter as JSON and, for a record, its summary (what regions and lists show), its
facts (the few fields the checks across records and the resume brief read of every record) and
the version of the per-file rules that found nothing in it, if they did not (`clean`). A file whose
stat identity is unchanged is answered without reading it; any change to its bytes changes its
ctime (which no tool can set back), so a hand edit of the same size with its mtime restored, a
checkout or a merge is read again. A file changed within the filesystem's timestamp granularity of
its last read could keep its identity, so an identity is trusted only when it was seen well after
the file last changed (`RACY_NS`, as git's index does); before that, the file is read and its
digest compared. One row per file means a read looks up only the files it needs and a write
rewrites only its own rows. Losing or corrupting the cache costs only time: any problem with it
means starting empty, and nothing is ever answered from it that the files do not say. A second table,
`views`, keeps the kept views of record folders between commands (store/kept.py: region heads, list pages,
status's blockers), under the same rules.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.digests import blake2b_hex
from planstate.core.watched import IDENTITY, Identity
from planstate.text.plaindata import same

if TYPE_CHECKING:
    import sqlite3

VERSION = 6  # bump whenever what a row holds changes (its summary and facts included)
# An identity seen less than this long after the file's last change is not trusted alone: a write within the same
# timestamp tick (coarse kernel clocks, filesystems with 1 or 2 second times) could leave it unchanged.
RACY_NS = 2_000_000_000


def settled(identity: tuple[int, ...], seen: int) -> bool:
    """Tell whether an identity taken at `seen` (time_ns) was taken long enough after its file last changed
    (`RACY_NS`) to vouch for the file's bytes alone."""
    return seen - max(identity[3], identity[4]) >= RACY_NS


# A file's front matter -> the summary and the facts kept with it (each JSON, or None).
Summarize = Callable[[Any], "tuple[str | None, str | None]"]
MISS = object()
_COLUMNS = "dev, ino, size, mtime, ctime, seen, digest, data, summary, facts, clean"
_LIGHT = "dev, ino, size, mtime, ctime, seen, digest, NULL, summary, facts, clean"  # all but the data


def identity_of(info: os.stat_result) -> Identity:
    """The stat identity of a file: what changes whenever its bytes do."""
    return IDENTITY(info)


def identities_in(folder: Path, names: list[str]) -> list[Identity | None]:
    """The stat identity of each regular file `names` in `folder` (None for one that is not, or is gone), taken
    without following a link at its name, through one descriptor of the folder."""
    import stat

    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (OSError, AttributeError):  # no O_DIRECTORY here: by path
        fd = None
    base = str(folder) + os.sep
    out: list[Identity | None] = []
    try:
        for name in names:
            try:
                info = os.lstat(name, dir_fd=fd) if fd is not None else os.lstat(base + name)
            except OSError:
                out.append(None)
                continue
            out.append(IDENTITY(info) if stat.S_ISREG(info.st_mode) else None)
    finally:
        if fd is not None:
            os.close(fd)
    return out


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


def decode(text: str) -> Any:
    """Data from the JSON this cache keeps (dates and times restored)."""
    return _DECODER.decode(text)


# One decoder for every call (json.loads with a hook makes one per call: a resume decodes hundreds of facts).
_DECODER = json.JSONDecoder(object_hook=_decode)


# The JSON this cache keeps, made by one encoder (json.dumps makes one per call: a cold check encodes 34,000 times).
_ENCODER = json.JSONEncoder(default=_encode, allow_nan=False, ensure_ascii=False)


def encode_known(data: Any) -> str:
    """Data known to survive the round trip (part of data `encode` took) as the JSON this cache keeps."""
    return _ENCODER.encode(data)


def exact_json(data: Any) -> str | None:
    """Data as the JSON this cache keeps, when it survives the round trip exactly (no int keys, sets or NaN; dates
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


class _Row:
    """One cached file: its identity and digest when read, when that was, and its front matter (JSON, decoded once;
    None until fetched, for rows read without it)."""

    __slots__ = ("clean", "digest", "facts", "identity", "seen", "summary", "text", "value")

    def __init__(
        self,
        identity: Identity | None,
        seen: int,
        hashed: str,
        text: str | None,
        summary: str | None,
        facts: str | None = None,
        clean: str | None = None,
    ) -> None:
        self.identity = identity
        self.seen = seen
        self.digest = hashed
        self.text = text
        self.summary = summary  # a record's summary as JSON (recordfiles.summary), for regions and lists
        self.facts = facts  # a record's facts as JSON (recordfiles.facts), for the checks across records
        self.clean = clean  # the version of the per-file rules that found nothing in these bytes, if any did
        self.value: Any = MISS

    def trusted(self, identity: Identity | None) -> bool:
        """Tell whether a file with `identity` holds the bytes this row was read from, without reading it."""
        if identity is None or self.identity != identity:
            return False
        return settled(identity, self.seen)

    def data(self) -> Any:
        if self.value is MISS:
            assert self.text is not None
            self.value = decode(self.text)
        return self.value


def _values(key: str, row: _Row) -> tuple[Any, ...]:
    """A row as the database stores it (its key, then the columns of `_COLUMNS`)."""
    return (key, *(row.identity or (None,) * 5), row.seen, row.digest, row.text, row.summary, row.facts, row.clean)


def _row_of(found: tuple[Any, ...]) -> _Row:
    """A row as the database returns it (the columns of `_COLUMNS`)."""
    identity = tuple(found[:5]) if found[0] is not None else None
    return _Row(identity, found[5], found[6], found[7], found[8], found[9], found[10])


def versioned(folder: Path, name: str, version: int, suffix: str) -> Path:
    """Where a cache file in format `version` is kept: `<name>-v<version><suffix>` in `folder` (another format is
    another file, so a planstate of another version never reads it)."""
    return folder / f"{name}-v{version}{suffix}"


def drop_older(folder: Path, name: str, version: int, suffix: str) -> None:
    """Delete what older formats of a cache file left (`<name>-v1` up to `-v<version - 1>`): nothing reads them, and
    a workspace's cache would otherwise grow with each upgrade."""
    for old in range(1, version):
        with contextlib.suppress(OSError):
            versioned(folder, name, old, suffix).unlink()


class FrontMatterCache:
    """Parsed front matter of workspace files, reused while a file's stat identity (or its digest) is unchanged."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = versioned(folder, name, VERSION, ".sqlite")
        self.name = name
        self._db: sqlite3.Connection | None = None
        self._opened = False
        self._rows: dict[str, _Row | None] = {}  # looked up (None: not cached)
        self._dirty: dict[str, _Row] = {}
        self._inherited: sqlite3.Connection | None = None  # a forked process's copy of its parent's (see `detach`)

    # ------------------------------------------------------------------ reading

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
            if create and not self.path.parent.is_dir():
                self.path.parent.parent.mkdir(exist_ok=True)  # fails when the workspace folder is gone
                self.path.parent.mkdir(exist_ok=True)
            db = sqlite3.connect(self.path, timeout=1.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=OFF")  # a cache: a power cut costs a rebuild, never a wrong answer
            db.execute(
                "CREATE TABLE IF NOT EXISTS files (key TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER, "
                "mtime INTEGER, ctime INTEGER, seen INTEGER, digest TEXT, data TEXT, summary TEXT, facts TEXT, "
                "clean TEXT) WITHOUT ROWID"
            )
            # The kept views of record folders between commands (store/kept.py), by view and folder.
            db.execute("CREATE TABLE IF NOT EXISTS views (key TEXT PRIMARY KEY, body BLOB) WITHOUT ROWID")
        except (OSError, sqlite3.Error):
            self._discard()
            return None
        if made:
            drop_older(self.path.parent, self.name, VERSION, ".sqlite")
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

    def rows_under(self, prefix: str, first: str = "", last: str = "\U0010ffff") -> dict[str, _Row]:
        """The identity and summary of every cached file whose key starts with `prefix` (a folder's files,
        `decisions/`), and whose rest of the key is from `first` to `last`, in one query; their data is not
        fetched (these rows answer `trusted` and `summary` only)."""
        db = self._connect(create=False)
        out: dict[str, _Row] = {}
        if db is not None:
            import sqlite3

            try:
                found = db.execute(
                    f"SELECT key, {_LIGHT} FROM files WHERE key >= ? AND key <= ? AND key > ? AND key < ?",
                    (prefix + first, prefix + last, prefix, prefix + "\U0010ffff"),
                ).fetchall()
            except sqlite3.Error:
                self._discard()
                found = []
            out = {item[0]: _row_of(item[1:]) for item in found}
        low, high = prefix + first, prefix + last
        out.update((key, row) for key, row in self._dirty.items() if key.startswith(prefix) and low <= key <= high)
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
        """Read every row but its data in one query, for a reader about to look most of them up (a check): a file
        whose identity vouches for its facts needs no more; the data of the others is fetched one by one."""
        db = self._connect(create=False)
        if db is None:
            return
        import sqlite3

        try:
            found = db.execute(f"SELECT key, {_LIGHT} FROM files").fetchall()
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
        return self._value(key, row)

    def renewed(self, key: str, identity: Identity, data: bytes) -> str | None:
        """The summary of a file whose row has its stat identity but is too recent for that alone to vouch for it,
        when `data` (its bytes, read after `identity` was taken) has the row's digest: the row is then renewed with
        `identity`, as a read through `get` would, without decoding or summarizing anything. Else None."""
        row = self._row(key)
        if row is None or row.summary is None or row.digest != digest(data):
            return None
        if row.text is None and not self._fetch(key, row):
            return None
        assert row.text is not None
        # the same bytes: what was summarized and found in them still holds
        self._store(key, identity, row.digest, row.text, (row.summary, row.facts), row.clean)
        return row.summary

    def vouched(self, key: str, identity: Identity | None) -> _Row | None:
        """The row of a file whose stat identity is `identity` when that alone vouches for it (its summary, facts
        and `clean` then hold for the file's bytes), else None."""
        row = self._row(key)
        return row if row is not None and row.trusted(identity) else None

    def vouched_all(self, prefix: str, names: list[str], identities: list[Identity | None]) -> list[_Row | None]:
        """`vouched` for each file `prefix + name` with its identity, in one pass (a check asks it of 17,000)."""
        rows, dirty = self._rows, self._dirty
        out: list[_Row | None] = []
        for name, identity in zip(names, identities, strict=True):
            key = prefix + name
            row = dirty.get(key) or (rows[key] if key in rows else self._row(key))
            out.append(row if row is not None and row.trusted(identity) else None)
        return out

    def facts_of(self, keys: list[str], identities: list[Identity | None]) -> dict[str, str]:
        """The facts (JSON) of each file `keys[i]` whose stat identity `identities[i]` vouches for its row (as
        `vouched`), by key, in one query for the rows not looked up yet: a status over 200 open blockers reads
        their facts, not their files nor their whole front matter."""
        out: dict[str, str] = {}
        wanted: dict[str, Identity] = {}
        for key, identity in zip(keys, identities, strict=True):
            if identity is None:
                continue
            row = self._dirty.get(key) or self._rows.get(key)
            if row is not None or key in self._rows:
                if row is not None and row.facts is not None and row.trusted(identity):
                    out[key] = row.facts
            else:
                wanted[key] = identity
        db = self._connect(create=False) if wanted else None
        if db is None:
            return out
        import sqlite3

        names = list(wanted)
        try:
            found = []
            for start in range(0, len(names), 500):  # under SQLite's limit of parameters, whatever its build
                chunk = names[start : start + 500]
                found += db.execute(
                    f"SELECT key, dev, ino, size, mtime, ctime, seen, facts FROM files WHERE key IN "
                    f"({','.join('?' * len(chunk))}) AND facts IS NOT NULL AND dev IS NOT NULL",
                    chunk,
                ).fetchall()
        except sqlite3.Error:
            self._discard()
            return out
        for key, *identity, seen, facts in found:
            if tuple(identity) == wanted[key] and settled(wanted[key], seen):
                out[key] = facts
        return out

    def _value(self, key: str, row: _Row) -> Any:
        """A row's front matter, fetched first for a row read without it; MISS when it cannot be had."""
        if row.text is None and not self._fetch(key, row):
            return MISS
        try:
            return row.data()
        except ValueError:
            return MISS

    def _fetch(self, key: str, row: _Row) -> bool:
        """Fetch the data of a row read without it; tell whether it is there now."""
        db = self._connect(create=False)
        if db is None:
            return False
        import sqlite3

        try:
            found = db.execute("SELECT data FROM files WHERE key = ? AND digest = ?", (key, row.digest)).fetchone()
        except sqlite3.Error:
            self._discard()
            return False
        if found is None or not isinstance(found[0], str):
            return False
        row.text = found[0]
        return True

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
        summary and facts, `summarize(data)`)."""
        value = self.known(key, identity)
        if value is not MISS:
            return value
        hashed = digest(data)
        row = self._row(key)
        if row is not None and row.digest == hashed:
            value = self._value(key, row)
            if value is not MISS:
                if identity is not None and not row.trusted(identity):
                    assert row.text is not None
                    if row.summary is None and row.facts is None and summarize is not None:
                        row.summary, row.facts = summarize(value)
                    # the same bytes: trusted from now on, once not racy; what the rules found in them still holds
                    self._store(key, identity, hashed, row.text, (row.summary, row.facts), row.clean)
                return value
        value = parse(data)
        text = exact_json(value)
        if text is not None:
            self._store(key, identity, hashed, text, summarize(value) if summarize is not None else None)
        else:  # data JSON cannot carry exactly: never cached, and no older row of the file answers for it
            self._rows[key] = None
            self._dirty.pop(key, None)
        return value

    def put(self, content: bytes, key: str, data: Any, summarize: Summarize | None = None) -> None:
        """Remember the data of a file just written (its bytes are `content`), so the next reader needs no parse;
        its stat identity is taken on the next read, which compares the digest once."""
        text = exact_json(data)
        if text is not None:
            self._store(key, None, digest(content), text, summarize(data) if summarize is not None else None)

    def mark_clean(self, key: str, identity: Identity | None, version: str) -> None:
        """Note that the per-file rules of `version` found nothing in the bytes of the file read with `identity`
        (the row just read or stored for it): a later check that the identity vouches for need not run them."""
        row = self._row(key)
        if row is None or identity is None or row.identity != identity or row.clean == version:
            return
        if row.text is None and not self._fetch(key, row):
            return
        row.clean = version
        self._dirty[key] = row

    def _store(
        self,
        key: str,
        identity: Identity | None,
        hashed: str,
        text: str,
        summary: tuple[str | None, str | None] | None,
        clean: str | None = None,
    ) -> None:
        summary_text, facts = summary if summary is not None else (None, None)
        # The value is not kept: whoever asks again gets it decoded afresh (a cold check stores 17,000 of them).
        row = _Row(identity, time.time_ns(), hashed, text, summary_text, facts, clean)
        self._rows[key] = row
        self._dirty[key] = row

    # ------------------------------------------------------------------ views of folders

    def view(self, key: str) -> bytes | None:
        """What was kept under `key` by `keep_view` (store/kept.py), or None."""
        db = self._connect(create=False)
        if db is None:
            return None
        import sqlite3

        try:
            found = db.execute("SELECT body FROM views WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return found[0] if found is not None and isinstance(found[0], bytes) else None

    def keep_view(self, key: str, body: bytes) -> None:
        """Keep `body` under `key` (best effort: a busy or broken database only costs the next call time)."""
        db = self._connect(create=True)
        if db is None:
            return
        import sqlite3

        with contextlib.suppress(sqlite3.Error):
            db.execute("INSERT OR REPLACE INTO views VALUES (?, ?)", (key, body))

    # ------------------------------------------------------------------ sharing with a forked process

    def detach(self) -> None:
        """In a forked process: never touch the parent's connection (kept, unused, so it is never closed here)
        and forget what was to be saved; this process opens its own connection to save what it reads."""
        self._inherited = self._db
        self._db = None
        self._opened = False
        self._dirty = {}

    def reload(self, prefix: str, first: str = "", last: str = "\U0010ffff") -> None:
        """Look the rows of the files whose key starts with `prefix` (and whose rest is from `first` to `last`) up
        again (another process saved them); their data is fetched only when asked for."""
        self._rows.update(self.rows_under(prefix, first, last))

    # ------------------------------------------------------------------ writing

    def save(self) -> bool:
        """Write the rows read or written since the last save; best effort, never an error. Tell whether they
        are all in the database."""
        if not self._dirty:
            return True
        db = self._connect(create=True)
        if db is None:
            self._dirty.clear()
            return False
        import sqlite3

        rows = [_values(key, row) for key, row in self._dirty.items()]
        try:
            with db:
                db.execute("BEGIN")
                db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.Error:
            self._dirty.clear()
            return False  # busy for a second (another process saving) or broken: only time is lost
        for row in self._dirty.values():
            row.text, row.value = None, MISS  # saved: fetched again if asked for (17,000 of them cost 30 MiB)
        self._dirty.clear()
        return True

    def close(self) -> None:
        """Close the database (the next use opens it again)."""
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        self._db = None
        self._opened = False
