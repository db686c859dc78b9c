"""A machine-local memo of what a whole-workspace command found, answered while none of its inputs changed.

`check` and `validate` read every file of the workspace; when nothing changed since the last run, what
they found is the same. The memo keeps it in `.planning/.local/cache/` under a key (`Inputs`): the
digest of the name and stat identity (device, inode, size, mtime_ns, ctime_ns) of every entry under
`.planning/` but `.local/`, taken in one pass of one `lstat` each, with planstate's own files (its
rules and templates), the workspace's path and the caller's label (which command, with which options).
Any change to a file's bytes changes its ctime, which no tool can set back, so a hand edit keeping size
and mtime, a new or deleted file, a `git checkout` or a merge changes the key. A file changed within the
filesystem's timestamp tick of the scan could keep its identity, so, as for the front-matter cache's rows
(cache.RACY_NS), a memo is trusted only when it was keyed more than that after every file last changed;
until then the command runs in full and keys the memo again. A link or a special file anywhere in the
tree means no memo at all. What depends on the clock or on things outside `.planning/` is never memoized:
the caller keeps the few inputs it needs to compute that afresh. Losing or corrupting the memo costs only
time.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import stat
import time
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

from planstate.core.layout import LOCAL
from planstate.store.cache import RACY_NS, Identity

VERSION = 1  # bump whenever what a memo holds, or how its key is made, changes
MISS = object()
_IDENTITY = attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")  # cache.identity_of's
Listings = dict[str, tuple[list[str], list[Identity]]]  # a folder's entries and their identities, by its path
_MTIME = attrgetter("st_mtime_ns")
_CTIME = attrgetter("st_ctime_ns")
_MODE = attrgetter("st_mode")


class Inputs(NamedTuple):
    """The key of a workspace's inputs, when its files last changed, and when the key was taken."""

    key: str
    newest: int  # the latest mtime or ctime of every file keyed (ns)
    seen: int  # time.time_ns() before the scan


def inputs(root: Path, label: str, listings: Listings | None = None) -> Inputs | None:
    """The key of every input of a whole-workspace command run as `label` on the workspace `root` (`.planning/`);
    None when the tree holds a link or a special file, or cannot be listed (the command then runs in full). Each
    folder's entries and their stat identities go into `listings` (when given): a reader need not take them again."""
    from planstate.core.digests import blake2b_hex

    seen = time.time_ns()
    parts = [marshal.dumps((VERSION, str(root), label))]
    newest = _tree(root, parts, top=LOCAL, listings=listings)
    code = _code(parts)
    if newest is None or code is None:
        return None
    return Inputs(blake2b_hex(b"".join(parts), 16), max(newest, code), seen)


def _tree(
    root: Path,
    parts: list[bytes],
    *,
    top: str | None = None,
    anywhere: str | None = None,
    listings: Listings | None = None,
) -> int | None:
    """Add to `parts` the names and stat identities of every entry under `root` (but the entry `top` at its top,
    and entries named `anywhere` at any depth), folder by folder, through one descriptor each; return the latest
    mtime or ctime of them, or None for a link or special file."""
    newest = 0
    folders: list[tuple[str, str]] = [(str(root), "")]
    while folders:
        folder, relative = folders.pop()
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        try:
            names = os.listdir(fd)
            for left_out in (top if not relative else None, anywhere):
                if left_out is not None and left_out in names:
                    names.remove(left_out)
            lstat = os.lstat
            infos = [lstat(name, dir_fd=fd) for name in names]
        except OSError:
            return None
        finally:
            os.close(fd)
        # Listing order, not sorted: an order that differs only costs a full run, as any other difference does.
        identities = list(map(_IDENTITY, infos))
        parts.append(marshal.dumps((relative, names, list(map(_MODE, infos)), identities)))
        if listings is not None:
            listings[folder] = (names, identities)
        if infos:
            newest = max(newest, max(map(_MTIME, infos)), max(map(_CTIME, infos)))
        for mode in set(map(_MODE, infos)):
            if stat.S_ISDIR(mode):
                folders += [
                    (f"{folder}{os.sep}{name}", f"{relative}{name}/")
                    for name, info in zip(names, infos, strict=True)
                    if info.st_mode == mode
                ]
            elif not stat.S_ISREG(mode):
                return None
    return newest


def _code(parts: list[bytes]) -> int | None:
    """Add to `parts` the identities of planstate's own files (its rules and built-in templates: an install of
    another version changes them, and so does an edit of an editable install); return the latest change, or None
    when they cannot be listed."""
    package = Path(__file__).parent.parent  # planstate/, above this module's store/
    newest = 0
    for folder in (package, package.parent / "templates"):
        if folder.is_dir():
            found = _tree(folder, parts, anywhere="__pycache__")  # bytecode comes and goes beside the sources
            if found is None:
                return None
            newest = max(newest, found)
    return newest


def path(root: Path, name: str) -> Path:
    """Where the memo `name` of the workspace `root` is kept."""
    return root / LOCAL / "cache" / f"memo-{name}-v{VERSION}.json"


def recall(root: Path, name: str, now: Inputs) -> Any:
    """What the memo `name` holds when it was kept under the key `now.key` and keyed more than the filesystem's
    timestamp tick after every input last changed; else MISS."""
    try:
        with open(path(root, name), "rb") as handle:
            head = json.loads(handle.readline())
            if head.get("key") != now.key or head.get("seen", 0) - now.newest < RACY_NS:
                return MISS
            return json.loads(handle.read())
    except (OSError, ValueError, AttributeError):
        return MISS


def remember(root: Path, name: str, now: Inputs, value: Any) -> None:
    """Keep `value` (JSON data) as the memo `name` under the key `now`; best effort, never an error, and never
    bringing back a workspace folder deleted meanwhile."""
    if not root.is_dir():
        return
    target = path(root, name)
    head = json.dumps({"key": now.key, "seen": now.seen})
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError, TypeError, ValueError):
        body = json.dumps(value, ensure_ascii=False, allow_nan=False)
        target.parent.parent.mkdir(exist_ok=True)  # fails when the workspace folder is gone
        target.parent.mkdir(exist_ok=True)
        temp.write_text(f"{head}\n{body}", encoding="utf-8")
        os.replace(temp, target)  # a cache: no fsync, a torn file is a miss
    with contextlib.suppress(OSError):
        temp.unlink(missing_ok=True)
