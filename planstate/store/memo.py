"""A whole-workspace memo: what `check` or `validate` found, answered again while none of its inputs changed.

A memo is one row of the store (store/cache.py) under the command's label, kept with the key of its inputs: the
scan of the whole planning tree but `.local/` (store/scan.tree: every entry's name, mode and stat identity),
planstate's own files (its rules and templates: another version, or an edit of an editable install, keys anew),
the workspace's path and the label. It is the store's trust rule for a folder, applied to the whole tree: the
memo answers while the key is the same, and each file too recent when it was kept for its identity to vouch alone
(one just written) still has the digest of its bytes kept then. A link or a special file anywhere in the tree
means no memo. What depends on the clock or on things outside `.planning/` is never memoized: the caller keeps
the few inputs it needs to compute that afresh.
"""

from __future__ import annotations

import json
import marshal
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.collector import without_collector
from planstate.core.digests import blake2b_hex
from planstate.core.layout import LOCAL
from planstate.store.cache import RACY_NS, Memo
from planstate.store.scan import Listing, changed_at, tree

if TYPE_CHECKING:
    from planstate.store.cache import Store

VERSION = 1  # bump whenever what a memo holds, or how its key is made, changes
MISS = object()


class Inputs(NamedTuple):
    """The key of a workspace's inputs, when it was taken, the files too recent for their identity alone to vouch
    for their bytes (each with the digest of its bytes, read right after the identity was taken), and every
    folder's listing (a reader need not scan them again)."""

    key: str
    seen: int  # time.time_ns() before the scan
    recent: list[tuple[str, str | None]]
    listings: dict[str, Listing]


@without_collector  # a stat result per entry: 17,000 of them, and no cycles
def inputs(root: Path, label: str) -> Inputs | None:
    """The key of every input of a whole-workspace command run as `label` on the workspace `root` (`.planning/`);
    None when the tree holds a link or a special file, or cannot be listed (the command then runs in full)."""
    seen = time.time_ns()
    listings = tree(str(root), skip_top=frozenset({LOCAL}))
    if listings is None:
        return None
    parts = [marshal.dumps((VERSION, str(root), label))]
    since = seen - RACY_NS
    recent: list[str] = []
    base = len(str(root))
    for folder in sorted(listings):
        listing = listings[folder]
        parts.append(f"{folder[base:]}\0{listing.digest()}".encode("utf-8", "surrogateescape"))
        if listing.newest() > since:
            recent += _recent(folder, listing, since)
    code = _code(since)
    if code is None:
        return None
    parts.append(code[0].encode("ascii"))
    recent += code[1]
    return Inputs(blake2b_hex(b"".join(parts), 16), seen, [(name, _digest(name)) for name in recent], listings)


def _recent(folder: str, listing: Listing, since: int) -> list[str]:
    """The regular files of a folder changed after `since` (ns), by path (found by whole-list operations: a folder
    of 10,000 records holds one or two)."""
    import stat
    from itertools import compress

    from planstate.store.scan import CTIME, MTIME

    ids = listing.identities
    newer = list(map(since.__lt__, map(max, map(MTIME, ids), map(CTIME, ids))))
    found = zip(compress(listing.names, newer), compress(listing.modes, newer), strict=True)
    return [f"{folder}{os.sep}{name}" for name, mode in found if stat.S_ISREG(mode)]


_CODE: tuple[str, list[tuple[str, int]]] | None = None  # planstate's own files as `_code` listed them


def _code(since: int) -> tuple[str, list[str]] | None:
    """The key of planstate's own files (its rules and built-in templates) and those of them changed after `since`;
    None when they cannot be listed. Listed once per process (a command keys several memos)."""
    global _CODE
    if _CODE is None:
        package = Path(__file__).parent.parent  # planstate/, above this module's store/
        parts: list[str] = []
        changed: list[tuple[str, int]] = []
        for top in (package, package.parent / "templates"):
            if not top.is_dir():
                continue
            listings = tree(str(top), skip_any=frozenset({"__pycache__"}))  # bytecode comes and goes
            if listings is None:
                return None
            for folder in sorted(listings):
                listing = listings[folder]
                parts.append(f"{folder}\0{listing.digest()}")
                changed += [
                    (f"{folder}{os.sep}{name}", changed_at(identity))
                    for name, identity in zip(listing.names, listing.identities, strict=True)
                ]
        _CODE = (blake2b_hex("\n".join(parts).encode("utf-8", "surrogateescape"), 16), changed)
    key, changed_at_each = _CODE
    return key, [name for name, at in changed_at_each if at > since]


def code_key() -> str | None:
    """The key of planstate's own files, for what is kept of single files between runs; None when they cannot be
    listed or one changed too recently for its identity to vouch for it."""
    code = _code(time.time_ns() - RACY_NS)
    return code[0] if code is not None and not code[1] else None


def _digest(name: str) -> str | None:
    """The digest of the bytes of the file `name` (None when it cannot be read: never equal to a digest)."""
    from planstate.store.cache import digest

    try:
        with open(name, "rb") as handle:
            return digest(handle.read())
    except OSError:
        return None


def recall(store: Store, label: str, now: Inputs) -> Any:
    """What the memo `label` holds when it was kept under the key `now.key` and each file too recent then for its
    identity to vouch for it alone still has the bytes it had; else MISS."""
    kept = store.memo(label)
    if kept is None or kept.inputs != now.key:
        return MISS
    # The same identities as when it was kept: the same files are too recent for them, relative to when it was kept.
    for file, hashed in kept.recent:
        if hashed is None or _digest(file) != hashed:
            return MISS
    try:
        value = json.loads(kept.body)
    except ValueError:
        return MISS
    if len(now.recent) < len(kept.recent):  # fewer are recent now: no need to read those again
        store.keep_memo(label, Memo(now.key, now.recent, kept.body))
    return value


def remember(store: Store, root: Path, label: str, now: Inputs, value: Any) -> None:
    """Keep `value` (JSON data) as the memo `label` under the key `now`; best effort, never an error, and never
    bringing back a workspace folder deleted meanwhile."""
    if not root.is_dir():
        return
    try:
        body = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return
    store.keep_memo(label, Memo(now.key, now.recent, body))
