"""A machine-local cache of parsed front matter, keyed by each file's identity, so reading hundreds of records is fast.

Parsing one record costs about 2 ms; a brief over 500 records would spend a second on it. The
cache lives in `.planning/.local/cache/` (never committed) and maps a file's path to its stat
identity (mtime, ctime, size, inode) and its data. A file whose identity changed is parsed again.
Losing or corrupting the cache costs only time: any problem reading it means starting empty.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

from planstate.plain import same

VERSION = 1


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


def _identity(info: os.stat_result) -> list[int]:
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]


class FrontMatterCache:
    """Parsed front matter of workspace files, reused while a file's stat identity is unchanged."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / f"{name}-v{VERSION}.json"
        self._entries: dict[str, list[Any]] | None = None
        self._dirty = False

    def _load(self) -> dict[str, list[Any]]:
        if self._entries is None:
            try:
                raw = json.loads(self.path.read_bytes(), object_hook=_decode)
                self._entries = raw if isinstance(raw, dict) else {}
            except (OSError, ValueError, TypeError):
                self._entries = {}
        return self._entries

    def get(self, path: Path, key: str, parse: Callable[[Path], Any]) -> Any:
        """The data of `path`: from the cache when its identity matches, else `parse(path)` (then cached)."""
        entries = self._load()
        try:
            identity = _identity(path.stat())
        except OSError:
            return parse(path)  # let the parser report the problem
        hit = entries.get(key)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == identity:
            return hit[1]
        data = parse(path)
        if self._cacheable(data):
            entries[key] = [identity, data]
            self._dirty = True
        return data

    @staticmethod
    def _cacheable(data: Any) -> bool:
        """Only data that survives the JSON round trip exactly (no int keys, sets or NaN) is cached."""
        try:
            back = json.loads(json.dumps(data, default=_encode, allow_nan=False), object_hook=_decode)
        except (TypeError, ValueError):
            return False
        return same(back, data)

    def forget_missing(self, keys: set[str]) -> None:
        """Drop entries whose files are gone (keeps the cache from growing forever)."""
        entries = self._load()
        for gone in [k for k in entries if k not in keys]:
            del entries[gone]
            self._dirty = True

    def save(self) -> None:
        """Write the cache if it changed; best effort, never an error."""
        if not self._dirty or self._entries is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
            tmp.write_text(json.dumps(self._entries, default=_encode, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:
            pass
