"""The one scan of a folder: every entry's name, mode and stat identity, through one descriptor, and their digest.

Every command that must notice a hand edit behind its back looks at each file's stat identity (device, inode,
size, mtime_ns, ctime_ns): any write of a file's bytes, a rename onto it, `cp -p`, a checkout or a merge changes
its ctime, which no tool can set back. This module is the only place that takes them: a folder at a time
(`scan`), or the whole planning tree (`tree`, for the findings memo's key). What the store makes of them (which
rows they vouch for) is store/cache.py's trust rule.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from itertools import compress
from operator import attrgetter, itemgetter

from planstate.core.digests import names_and_numbers

Identity = tuple[int, int, int, int, int]  # (device, inode, size, mtime_ns, ctime_ns)
# The stat identity of a file, what changes whenever its bytes do: called once per entry by a scan.
IDENTITY: Callable[[os.stat_result], Identity] = attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
MTIME, CTIME = itemgetter(3), itemgetter(4)  # an identity's mtime and ctime (ns)
_MODE = attrgetter("st_mode")


def identity_of(info: os.stat_result) -> Identity:
    """The stat identity of a file: what changes whenever its bytes do."""
    return IDENTITY(info)


def changed_at(identity: Identity) -> int:
    """When a file last changed (ns): the later of its mtime and ctime."""
    return identity[3] if identity[3] > identity[4] else identity[4]


class Listing:
    """A folder's entries sorted by name, with the mode and stat identity of each (same order)."""

    __slots__ = ("_digest", "_records", "identities", "modes", "names")

    def __init__(self, names: list[str], modes: list[int], identities: list[Identity]) -> None:
        self.names = names
        self.modes = modes
        self.identities = identities
        self._records: tuple[list[str], list[Identity | None]] | None = None
        self._digest = ""

    def digest(self) -> str:
        """A digest of every entry's name, mode and identity: equal digests mean the same entries, unchanged (one
        number changed always changes it; see `digests.names_and_numbers`). Made once per listing."""
        if not self._digest:
            self._digest = names_and_numbers(self.names, (*self.modes, *self.identities))
        return self._digest

    def records(self) -> tuple[list[str], list[Identity | None]]:
        """The entries named like record files (`x.md`, not hidden), in name order, with the identity of each
        regular file (None for anything else named so: a link, a folder, a FIFO, which readers refuse). Worked out
        once per listing, by whole-list operations where the folder holds records alone."""
        if self._records is None:
            names, identities = self.names, self.identities
            regular = list(map(stat.S_ISREG, self.modes))
            joined = "\0".join(names) + "\0"
            if joined.count(".md\0") == len(names) and "\0." not in "\0" + joined:  # only record names
                kept = list(names)
                ids: list[Identity | None] = list(identities) if all(regular) else _where(identities, regular)
            else:
                chosen = [name[-3:] == ".md" and name[:1] != "." for name in names]
                kept = list(compress(names, chosen))
                ids = _where(list(compress(identities, chosen)), list(compress(regular, chosen)))
            self._records = (kept, ids)
        return self._records

    def newest(self) -> int:
        """When the most recently changed entry changed (ns; 0 for an empty folder)."""
        return max(max(map(MTIME, self.identities), default=0), max(map(CTIME, self.identities), default=0))

    def plain(self) -> bool:
        """Whether every entry is a regular file or a folder (no link, FIFO, socket or device)."""
        return set(map(stat.S_IFMT, self.modes)) <= _PLAIN

    def folders(self) -> list[str]:
        """The names of the entries that are folders."""
        if stat.S_IFDIR not in set(map(stat.S_IFMT, self.modes)):
            return []
        return [name for name, mode in zip(self.names, self.modes, strict=True) if stat.S_ISDIR(mode)]


def _where(identities: list[Identity], regular: list[bool]) -> list[Identity | None]:
    """Each identity where its entry is a regular file, else None."""
    return [identity if plain else None for identity, plain in zip(identities, regular, strict=True)]


EMPTY = Listing([], [], [])
_PLAIN = frozenset({stat.S_IFREG, stat.S_IFDIR})


def scan(folder: str | os.PathLike[str], skip: frozenset[str] = frozenset()) -> Listing | None:
    """Every entry of `folder` but those named in `skip`, sorted by name, each `lstat`ed through one descriptor of
    the folder (a link at a name is not followed); the empty listing for a folder that does not exist; None for
    one that cannot be listed, or a link in its place."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError) as exc:
        if isinstance(exc, FileNotFoundError) or not os.path.lexists(folder):
            return EMPTY
        return None
    except OSError:
        return None
    try:
        names = sorted(os.listdir(fd))
        if skip:
            names = [name for name in names if name not in skip]
        infos = [os.lstat(name, dir_fd=fd) for name in names]
    except OSError:  # an entry gone meanwhile: the caller reads afresh
        return None
    finally:
        os.close(fd)
    return Listing(names, list(map(_MODE, infos)), list(map(IDENTITY, infos)))


def tree(
    root: str, skip_top: frozenset[str] = frozenset(), skip_any: frozenset[str] = frozenset()
) -> dict[str, Listing] | None:
    """The listing of `root` and of every folder below it, by path (`root` first), leaving out the entries named in
    `skip_top` at its top and in `skip_any` anywhere; None when a folder cannot be listed or holds anything but
    regular files and folders (a link, a FIFO: a tree like that is read in full, never keyed)."""
    out: dict[str, Listing] = {}
    folders = [root]
    while folders:
        folder = folders.pop()
        listing = scan(folder, skip_top | skip_any if folder == root else skip_any)
        if listing is None or not listing.plain():
            return None
        out[folder] = listing
        base = folder + os.sep
        folders += [base + name for name in listing.folders()]
    return out
