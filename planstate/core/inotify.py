"""Linux's inotify, read directly: the changes under a tree of folders in the order the kernel queued them, its
queue's overflow included.

The watcher's journal (check/journal.py) vouches that a file did not change since a command last looked at it, so
it must never miss an event without knowing. watchdog, which the checks of `planstate watch` use, handles an
overflowed queue inside (it logs it and rebuilds its watches) and holds a moved-away file's event back for half a
second; this reads the kernel's events as they come, through ctypes, with no thread of its own.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Callable, Iterator
from typing import NamedTuple

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
_IN_CLOEXEC = 0o2000000
_IN_NONBLOCK = 0o4000
# Everything that changes a name or a stat identity (IN_ATTRIB: a ctime moved by chmod, touch or a link count),
# nothing that only reads (opens and closes): a cold check reads every file.
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len, then the name (NUL-padded)


class Event(NamedTuple):
    """One change: the folder it happened in (relative to the tree's root, "" for the root), the name of the entry
    (empty for the folder itself) and the kernel's mask."""

    folder: str
    name: str
    mask: int


class Unavailable(Exception):
    """inotify cannot be used here (not Linux, or the system's limit of instances or watches reached)."""


class Tree:
    """The inotify watches of a folder and the folders below it (those `skip` does not leave out), kept as folders
    come and go; `events` reads what changed."""

    def __init__(self, root: str, skip: Callable[[str], bool]) -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self._add_watch = libc.inotify_add_watch
            self._add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            self._rm_watch = libc.inotify_rm_watch
            self._rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
            fd = libc.inotify_init1(_IN_CLOEXEC | _IN_NONBLOCK)
        except (OSError, AttributeError) as exc:
            raise Unavailable(f"no inotify here: {exc}") from None
        if fd < 0:
            raise Unavailable(f"no inotify here: {os.strerror(ctypes.get_errno())}")
        self.fd: int = fd
        self.root = root
        self.skip = skip
        self.folders: dict[int, str] = {}  # watch descriptor -> folder, relative to the root
        self.watched: dict[str, int] = {}  # the inverse
        self._pending = b""
        self.add("")

    def close(self) -> None:
        """Stop watching."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def add(self, folder: str) -> None:
        """Watch `folder` (relative to the root) and every folder below it, but those `skip` leaves out; a folder
        that vanished meanwhile is left out. Raises Unavailable when the system's limit of watches is reached."""
        todo = [folder]
        while todo:
            relative = todo.pop()
            path = os.path.join(self.root, relative) if relative else self.root
            wd = self._add_watch(self.fd, os.fsencode(path), MASK)
            if wd < 0:
                err = ctypes.get_errno()
                if err == 28:  # ENOSPC: the per-user limit of watches
                    raise Unavailable("the system's limit of inotify watches is reached")
                continue  # gone, or not a folder (any more): its parent's event tells
            self.folders[wd] = relative
            self.watched[relative] = wd
            try:
                with os.scandir(path) as entries:
                    below = [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for name in below:
                child = f"{relative}/{name}" if relative else name
                if not self.skip(child):
                    todo.append(child)

    def events(self) -> Iterator[Event]:
        """The events queued now (none when there are none: the descriptor does not block), a folder created or moved
        in watched before the events after it are read. An overflowed queue reads as one Event with IN_Q_OVERFLOW."""
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        data = self._pending + data
        at, size = 0, len(data)
        unpack, header = _HEADER.unpack_from, _HEADER.size
        while at + header <= size:
            wd, mask, _cookie, length = unpack(data, at)
            if at + header + length > size:
                break
            name = os.fsdecode(data[at + header : at + header + length].rstrip(b"\0"))
            at += header + length
            if mask & IN_Q_OVERFLOW:
                yield Event("", "", mask)
                continue
            folder = self.folders.get(wd)
            if folder is None:
                continue
            if mask & IN_IGNORED:  # the watch is gone (its folder deleted or unmounted)
                del self.folders[wd]
                if self.watched.get(folder) == wd:
                    del self.watched[folder]
                continue
            if mask & IN_ISDIR and name:
                child = f"{folder}/{name}" if folder else name
                if mask & IN_MOVED_FROM:  # it may leave the tree: its watches would report under a wrong name
                    self._drop(child)
                elif mask & (IN_CREATE | IN_MOVED_TO) and not self.skip(child):
                    self.add(child)
            yield Event(folder, name, mask)
        self._pending = data[at:]

    def _drop(self, folder: str) -> None:
        """Stop watching `folder` (relative) and the folders below it."""
        below = folder + "/"
        for relative in [name for name in self.watched if name == folder or name.startswith(below)]:
            wd = self.watched.pop(relative)
            self.folders.pop(wd, None)
            self._rm_watch(self.fd, wd)

    def rewatch(self) -> None:
        """Watch every folder of the tree again (after an overflow, some folders created meanwhile may be
        unwatched; a folder watched already keeps its descriptor)."""
        self.add("")
