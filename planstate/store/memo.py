"""A machine-local memo of what a whole-workspace command found, answered while none of its inputs changed.

`check` and `validate` read every file of the workspace; when nothing changed since the last run, what
they found is the same. The memo keeps it in `.planning/.local/cache/` under a key (`Inputs`): the
name, mode and stat identity (device, inode, size, mtime_ns, ctime_ns) of every entry under
`.planning/` but `.local/`, taken in one pass of one `lstat` each (or, while a watcher runs, from each folder's
kept listing and the journal's changes since: core/watched.py) and keyed folder by folder (the names digested, the
numbers hashed: `digests.names_and_numbers`), with planstate's own files
(its rules and templates), the workspace's path and the caller's label (which command, with which
options). Any change to a file's bytes changes its ctime, which no tool can set back, so a hand edit
keeping size and mtime, a new or deleted file, a `git checkout` or a merge changes the key. A file
changed within the filesystem's timestamp tick of the scan could keep its identity, so, as for the
front-matter cache's rows (cache.RACY_NS), an identity seen less than that after the file last changed
is not trusted alone: the scan reads such a file (one just written) and keeps the digest of its bytes
with the key, and the memo answers only while each of them still has those bytes. A link or a special
file anywhere in the tree means no memo at all. What depends on the clock or on things outside
`.planning/` is never memoized: the caller keeps the few inputs it needs to compute that afresh. Losing
or corrupting the memo costs only time.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import stat
import time
from pathlib import Path
from typing import Any, NamedTuple

from planstate.core import watched
from planstate.core.collector import without_collector
from planstate.core.digests import names_and_numbers
from planstate.core.layout import LOCAL
from planstate.store.cache import RACY_NS

VERSION = 3  # bump whenever what a memo holds, or how its key is made, changes
MISS = object()
Listings = dict[str, watched.Entries]  # a folder's entries and their identities, by its path


class Inputs(NamedTuple):
    """The key of a workspace's inputs, when it was taken, and the files too recent for their identity alone to
    vouch for their bytes (each with the digest of its bytes, read right after the identity was taken)."""

    key: str
    seen: int  # time.time_ns() before the scan
    recent: list[tuple[str, str | None]]
    token: watched.Token | None = None  # the journal's token the entries were listed after, when a watcher serves


def inputs(
    root: Path, label: str, listings: Listings | None = None, keys: dict[str, str] | None = None
) -> Inputs | None:
    """The key of every input of a whole-workspace command run as `label` on the workspace `root` (`.planning/`);
    None when the tree holds a link or a special file, or cannot be listed (the command then runs in full). Each
    folder's entries and their stat identities go into `listings` (when given): a reader need not take them again;
    and the key of those of each folder alone into `keys` (when given: see `listed_inputs`)."""
    return _inputs(root, label, LOCAL, listings, keys)


@without_collector  # a stat result per entry: 17,000 of them
def _inputs(
    root: Path, label: str, top: str | None, listings: Listings | None, keys: dict[str, str] | None
) -> Inputs | None:
    """The key of the entries under `root` (but `top` at its top) and of planstate's own files (see `inputs`)."""
    from planstate.core.digests import blake2b_hex

    seen = time.time_ns()
    parts = [marshal.dumps((VERSION, str(root), label))]
    recent: list[str] = []
    since = seen - RACY_NS
    token = watched.sync(root)
    tree = _tree(root, parts, recent, since, top=top, listings=listings, keys=keys, planning=root, token=token)
    if not tree or not _code(parts, recent, since):
        return None
    digests = [(name, _digest(name)) for name in recent]
    return Inputs(blake2b_hex(b"".join(parts), 16), seen, digests, token)


def _tree(
    root: Path,
    parts: list[bytes],
    recent: list[str],
    since: int,
    *,
    top: str | None = None,
    anywhere: str | None = None,
    listings: Listings | None = None,
    keys: dict[str, str] | None = None,
    planning: Path | None = None,
    token: watched.Token | None = None,
) -> bool:
    """Add to `parts` the names, modes and stat identities of every entry under `root` (but the entry `top` at its
    top, and entries named `anywhere` at any depth), folder by folder, through one descriptor each, and to `recent`
    the files changed after `since` (ns); tell whether every entry is a folder or a regular file. Under the planning
    folder `planning` (given), a running watcher's journal vouches for the entries it says did not change
    (core/watched.py), all as of its `token` (watched.sync)."""
    folders: list[tuple[str, str]] = [(str(root), "")]
    while folders:
        folder, relative = folders.pop()
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return False
        try:
            entries = watched.vouched(planning, folder, fd, token, since) if planning is not None and token else None
            left_out = [name for name in (top if not relative else None, anywhere) if name is not None]
            if entries is None or left_out:
                listing = entries.listing if entries is not None else watched.listed(fd)
                if any(name in listing.names for name in left_out):
                    listing = listing.only([name not in left_out for name in listing.names])
                entries = watched.Entries.of(listing)
        except OSError:
            return False
        finally:
            os.close(fd)
        # Listing order, not sorted: an order that differs only costs a full run, as any other difference does.
        key = names_and_numbers([relative, entries.digest], ())
        if keys is not None:
            keys[folder] = key
        parts.append(key.encode("ascii"))
        if listings is not None:
            listings[folder] = entries
        if entries.newest > since:
            recent += _recent(folder, entries, since)
        if not entries.plain:
            return False
        folders += [(f"{folder}{os.sep}{name}", f"{relative}{name}/") for name in entries.folders]
    return True


def _recent(folder: str, entries: watched.Entries, since: int) -> list[str]:
    """The regular files of a folder changed after `since` (ns), by path."""
    if entries.again is not None and entries.older <= since:  # only those looked at again or fresh can be recent
        found = entries.lookup([*entries.again, *entries.fresh])
        names, modes, identities = list(found), [mode for mode, _ in found.values()], [i for _, i in found.values()]
    else:
        listing = entries.listing
        names, modes, identities = listing.names, listing.modes, listing.identities
    newer = watched.changed_after(list(zip(names, modes, strict=True)), identities, since)
    return [f"{folder}{os.sep}{name}" for name, mode in newer if stat.S_ISREG(mode)]


def _code(parts: list[bytes], recent: list[str], since: int) -> bool:
    """Add to `parts` the identities of planstate's own files (its rules and built-in templates: an install of
    another version changes them, and so does an edit of an editable install), and to `recent` those changed after
    `since`; tell whether they could all be listed. Listed once per process (a command keys several memos)."""
    global _CODE
    if _CODE is None:
        listed: list[bytes] = []
        changed: list[str] = []
        first = time.time_ns() - 60 * RACY_NS  # what is older than this is not recent for any key this process takes
        package = Path(__file__).parent.parent  # planstate/, above this module's store/
        for folder in (package, package.parent / "templates"):
            # bytecode comes and goes beside the sources
            if folder.is_dir() and not _tree(folder, listed, changed, first, anywhere="__pycache__"):
                return False
        _CODE = (listed, [(name, _changed_at(name)) for name in changed])
    listed, changed_at = _CODE
    parts += listed
    recent += [name for name, at in changed_at if at > since]
    return True


_CODE: tuple[list[bytes], list[tuple[str, int]]] | None = None  # planstate's own files as `_code` listed them


def _changed_at(name: str) -> int:
    """When the file `name` last changed (ns; now, when it cannot be looked at)."""
    try:
        info = os.lstat(name)
    except OSError:
        return time.time_ns()
    return max(info.st_mtime_ns, info.st_ctime_ns)


def listed_inputs(folder: str, label: str, listed: watched.Entries, seen: int, key: str | None = None) -> Inputs | None:
    """The key of one folder's entries as `inputs` listed them at `seen` (ns; `listed`, from its `listings`) and of
    planstate's own files, for what a command run as `label` derives from that folder alone; its recent files are
    those of the folder changed within the timestamp tick of `seen` (and planstate's own files changed since); None
    when planstate's own files cannot be listed. `key`, the key `inputs` took of that listing, spares digesting it
    again."""
    from planstate.core.digests import blake2b_hex

    listing = (key if key is not None else listed.digest).encode("ascii")
    parts = [marshal.dumps((VERSION, folder, label)), listing]
    since = seen - RACY_NS
    recent = _recent(folder, listed, since) if listed.newest > since else []
    if not _code(parts, recent, since):
        return None
    return Inputs(blake2b_hex(b"".join(parts), 16), seen, [(name, _digest(name)) for name in recent])


def code_key() -> str | None:
    """The key of planstate's own files (as `inputs` takes them), for what is kept of single files between runs;
    None when they cannot be listed or one changed too recently for its identity to vouch for it."""
    from planstate.core.digests import blake2b_hex

    parts = [marshal.dumps(VERSION)]
    recent: list[str] = []
    if not _code(parts, recent, time.time_ns() - RACY_NS) or recent:
        return None
    return blake2b_hex(b"".join(parts), 16)


def _digest(name: str) -> str | None:
    """The digest of the bytes of the file `name` (None when it cannot be read: never equal to a digest)."""
    from planstate.store.cache import digest

    try:
        with open(name, "rb") as handle:
            return digest(handle.read())
    except OSError:
        return None


def path(root: Path, name: str) -> Path:
    """Where the memo `name` of the workspace `root` is kept."""
    from planstate.store.cache import versioned

    return versioned(root / LOCAL / "cache", f"memo-{name}", VERSION, ".json")


def recall(root: Path, name: str, now: Inputs) -> Any:
    """What the memo `name` holds when it was kept under the key `now.key` and each file too recent then for its
    identity to vouch for it alone still has the bytes it had; else MISS."""
    try:
        with open(path(root, name), "rb") as handle:
            head = json.loads(handle.readline())
            if head.get("key") != now.key:
                return MISS
            # The same identities as when it was kept: the same files are too recent for them, relative to its `seen`.
            recent = head.get("recent", [])
            for file, hashed in recent:
                if hashed is None or _digest(file) != hashed:
                    return MISS
            body = handle.read()
        value = json.loads(body)
    except (OSError, ValueError, AttributeError, TypeError):
        return MISS
    if len(now.recent) < len(recent):  # fewer are recent now: no need to read those again
        _write(root, name, now, body)
    return value


def remember(root: Path, name: str, now: Inputs, value: Any) -> None:
    """Keep `value` (JSON data) as the memo `name` under the key `now`; best effort, never an error, and never
    bringing back a workspace folder deleted meanwhile."""
    with contextlib.suppress(TypeError, ValueError):
        _write(root, name, now, json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))


def _write(root: Path, name: str, now: Inputs, body: bytes) -> None:
    """Write the memo `name`: its key `now`, then `body` (JSON); best effort."""
    from planstate.core.files import write_cache
    from planstate.store.cache import drop_older

    if not root.is_dir():
        return
    target = path(root, name)
    head = json.dumps({"key": now.key, "seen": now.seen, "recent": now.recent}).encode("utf-8")
    made = not os.path.lexists(target)
    write_cache(target, head + b"\n" + body)
    if made:  # the first memo of this format: what older ones left, nothing reads
        drop_older(target.parent, f"memo-{name}", VERSION, ".json")
