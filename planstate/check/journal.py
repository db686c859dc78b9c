"""The watcher's journal: every change under `.planning/` numbered in the order it happened, served to the commands
so that they need not `lstat` every record file to know that it did not change.

A command that kept a folder's listing (core/watched.py) asks which of its entries changed since the number it
kept, and looks again only at those. The answer is made sure of first: the command creates a file (a cookie) in
`.planning/.local/journal/` and the journal answers only once it has read the cookie's event, so every change made
before the command asked is in the journal by then (the kernel queues the events of one inotify instance in order).
The journal refuses (the command then lists the folder in full) when it cannot be sure: its number belongs to
another run of the watcher (an `epoch`), the changes since have left the journal, the folder or a folder above it
was created, removed or moved since, or the kernel's queue overflowed (a new epoch). `.planning/.local/` is not
journaled, but for the cookies.

It listens on a Unix socket in Linux's abstract namespace, named after the planning folder's device and inode
(core/watched.py's `address`); a command checks that the socket's other end runs as its own user before it
believes it.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import secrets
import socket
import struct
import threading
from pathlib import Path

from planstate.core import inotify
from planstate.core.layout import LOCAL
from planstate.core.watched import COOKIES, Token, address

KEEP = 200_000  # changes the journal holds; a command whose number is older lists its folders in full
# Filesystems whose files another machine (a server, a VM's host, Windows) can change: no inotify event says so.
SHARED = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "ceph", "glusterfs", "lustre", "gpfs", "davfs"}
    | {"virtiofs", "vboxsf", "vmhgfs", "prl_fs", "drvfs", "osxfs"}
)
SYNC_TIMEOUT = 2.0  # seconds a command's cookie is waited for (core/watched.py waits a little longer)
MAX_COOKIES = 4096  # cookies seen and not asked about, kept at most


class Journal:
    """The numbered changes under one planning folder, and the socket that serves them (`start`, `stop`)."""

    def __init__(self, planning: Path) -> None:
        self.planning = planning
        self.epoch = secrets.token_hex(8)
        self.seq = 0
        self._seqs: list[int] = []  # the number of each change held, ascending
        # (folder, name, itself) of each: the folder relative to .planning ("" its top) and the entry's name in it;
        # `itself` False when only the times of a folder changed, through a change of one of its entries.
        self._changes: list[tuple[str, str, bool]] = []
        self._floor = 0  # the highest number of a change no longer held (all of them, after an overflow)
        self._cookies: dict[str, Token] = {}  # cookie name -> the epoch and number when its event was read
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._tree: inotify.Tree | None = None
        self._server: socket.socket | None = None
        self._wake_r, self._wake_w = -1, -1

    # ------------------------------------------------------------------ life

    def start(self) -> None:
        """Watch the planning folder and serve the journal; raises inotify.Unavailable or OSError when either
        cannot be done (another watcher serves this folder: the address is taken)."""
        shared = shared_filesystem(self.planning)
        if shared is not None:
            raise inotify.Unavailable(f"{self.planning} is on {shared}: changes made elsewhere raise no event here")
        cookies = self.planning / LOCAL / COOKIES
        (self.planning / LOCAL).mkdir(exist_ok=True)  # never the planning folder itself: a missing one stays missing
        cookies.mkdir(exist_ok=True)
        for left in cookies.iterdir():  # of commands killed between making a cookie and removing it
            with contextlib.suppress(OSError):
                left.unlink()
        self._tree = inotify.Tree(str(self.planning), _skip)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(address(self.planning))
            server.listen(64)
        except OSError:
            server.close()
            self._tree.close()
            raise
        self._server = server
        self._wake_r, self._wake_w = os.pipe()
        for target in (self._read, self._serve):
            thread = threading.Thread(target=target, name=f"journal-{target.__name__}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Stop serving and watching."""
        self.halt()
        if self._wake_w >= 0:
            os.write(self._wake_w, b"!")
        if self._server is not None:
            self._server.close()
        for thread in self._threads:
            thread.join(timeout=5)
        if self._tree is not None:
            self._tree.close()
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1

    # ------------------------------------------------------------------ the events

    def _read(self) -> None:
        """Read the kernel's events into the journal until stopped; a reader that cannot go on (the system's limit
        of watches reached under a new folder, say) stops the journal, so no command waits for it."""
        import select

        tree = self._tree
        assert tree is not None
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([tree.fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    return
                self.record(tree, list(tree.events()))
        except Exception as exc:
            import sys

            sys.stderr.write(f"planstate: the journal stopped ({exc}); commands look at every file again\n")
            self.halt()

    def halt(self) -> None:
        """Stop answering (without waiting for the threads): a waiting command gets no answer at once, and a new
        one cannot connect."""
        self._stop.set()
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
        with self._cond:
            self._forget()
            self._cond.notify_all()

    def record(self, tree: inotify.Tree, events: list[inotify.Event]) -> None:
        """Number the changes among `events` and note the cookies seen; an overflowed queue starts a new epoch."""
        local = LOCAL + "/"
        cookie_folder = f"{LOCAL}/{COOKIES}"
        with self._cond:
            for folder, name, mask in events:
                if mask & inotify.IN_Q_OVERFLOW:
                    tree.rewatch()  # folders created while events were lost may be unwatched
                    self._forget()
                    continue
                if folder == cookie_folder:
                    if mask & inotify.IN_CREATE:
                        if len(self._cookies) >= MAX_COOKIES:  # of commands gone before they asked
                            self._cookies.clear()
                        self._cookies[name] = (self.epoch, self.seq)
                    continue
                if folder == LOCAL or folder.startswith(local) or (not folder and name == LOCAL):
                    continue
                if not name and not folder:  # .planning itself deleted or moved: nothing held stays true
                    self._forget()
                    continue
                self.seq += 1
                parent, _, base = folder.rpartition("/")
                if not name:  # a watched folder itself (deleted, moved, its mode): its entry in its parent
                    self._note(parent, base, itself=True)
                    continue
                self._note(folder, name, itself=True)
                if folder:  # the folder's own times changed too (when an entry came or went): its entry in its parent
                    self._note(parent, base, itself=False)
            if len(self._seqs) > KEEP:
                cut = len(self._seqs) - KEEP // 2
                self._floor = self._seqs[cut - 1]
                del self._seqs[:cut], self._changes[:cut]
            self._cond.notify_all()

    def _note(self, folder: str, name: str, *, itself: bool) -> None:
        """Hold a change of the entry `name` of `folder` under the current number (the caller holds the lock)."""
        self._seqs.append(self.seq)
        self._changes.append((folder, name, itself))

    def _forget(self) -> None:
        """Start a new epoch: every number given out so far gets `all` (the caller holds the lock)."""
        self.epoch = secrets.token_hex(8)
        self._seqs.clear()
        self._changes.clear()
        self._floor = self.seq

    # ------------------------------------------------------------------ the answers

    def sync(self, cookie: str, timeout: float = SYNC_TIMEOUT) -> Token | None:
        """The epoch and the number once the event of `cookie` has been read (None when it was not within
        `timeout` seconds, or the journal stopped)."""
        with self._cond:
            if not self._cond.wait_for(lambda: cookie in self._cookies or self._stop.is_set(), timeout):
                return None
            # An overflow since the cookie was seen changed the epoch: the command's question then gets `all`.
            return self._cookies.pop(cookie, None)

    def changed(self, epoch: str, since: int, folder: str) -> list[str] | None:
        """The names of the entries of `folder` (relative to .planning, "" its top) that changed after the number
        `since` of `epoch`; None when that cannot be told: another epoch, changes since then no longer held, the
        folder itself or a folder above it changed (created, removed, moved), or the folder is not watched."""
        with self._cond:
            if epoch != self.epoch or since > self.seq or since < self._floor:
                return None
            tree = self._tree
            if tree is None or folder not in tree.watched:
                return None
            above = set()
            path = folder
            while path:
                parent, _, base = path.rpartition("/")
                above.add((parent, base))
                path = parent
            start = bisect.bisect_right(self._seqs, since)
            names: set[str] = set()
            for where, name, itself in self._changes[start:]:
                if where == folder:
                    names.add(name)
                elif itself and (where, name) in above:
                    return None
            if any("\n" in name for name in names):  # cannot travel on a line of the protocol
                return None
            return sorted(names)

    def _serve(self) -> None:
        """Accept connections until stopped, one thread each."""
        server = self._server
        assert server is not None
        while not self._stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), name="journal-client", daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        """Answer one command's requests, a line each (see core/watched.py), until it hangs up; a process of
        another user is not answered (the journal names the files of `.planning/`)."""
        credentials = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", credentials)[1] != os.getuid():
            conn.close()
            return
        with conn, conn.makefile("rb") as lines:
            for line in lines:
                words = line.decode("utf-8", "replace").rstrip("\n").split(" ", 3)
                reply = self._reply(words)
                try:
                    conn.sendall(reply.encode("utf-8"))
                except OSError:
                    return

    def _reply(self, words: list[str]) -> str:
        """The answer to one request: `sync COOKIE` -> `ok EPOCH SEQ`; `changed EPOCH SEQ FOLDER` -> `names N`
        and N lines, or `all`; anything else, or no answer to be had -> `no`."""
        if words[0] == "sync" and len(words) == 2:
            synced = self.sync(words[1])
            return "no\n" if synced is None else f"ok {synced[0]} {synced[1]}\n"
        if words[0] == "changed" and len(words) in (3, 4) and words[2].isdigit():
            names = self.changed(words[1], int(words[2]), words[3] if len(words) == 4 else "")
            if names is None:
                return "all\n"
            return "".join([f"names {len(names)}\n", *(name + "\n" for name in names)])
        return "no\n"


def shared_filesystem(folder: Path, mounts: str | None = None) -> str | None:
    """The type of the filesystem `folder` is on when another machine can change its files (`SHARED`, or any FUSE
    filesystem but the overlays containers use); else None. `mounts`: the text of /proc/self/mountinfo (read when not
    given); a folder whose mount cannot be found counts as shared."""
    try:
        info = os.stat(folder)
        if mounts is None:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
                mounts = handle.read()
    except OSError:
        return "an unknown filesystem"
    device = f"{os.major(info.st_dev)}:{os.minor(info.st_dev)}"
    real = os.path.realpath(folder)
    by_device, by_path = None, ("", "")
    for line in mounts.splitlines():
        fields = line.split(" ")
        if " - " not in line or len(fields) < 5:
            continue
        kind = line.split(" - ", 1)[1].split(" ", 1)[0]
        point = fields[4].replace("\\040", " ")
        if fields[2] == device:
            by_device = kind
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(by_path[0]):
            by_path = (point, kind)
    kind = by_device or by_path[1]
    if not kind:
        return "an unknown filesystem"
    if kind in SHARED or (kind.startswith("fuse") and kind not in ("fuse-overlayfs", "fuse.fuse-overlayfs")):
        return kind
    return None


def _skip(folder: str) -> bool:
    """Whether the watches leave out `folder` (relative to .planning): all of `.local/` but its cookies."""
    return folder.startswith(LOCAL + "/") and folder != f"{LOCAL}/{COOKIES}"
