"""A folder's entries and their stat identities, vouched for by a running watcher where one runs.

Every command that must notice a hand edit behind its back looks at each file's stat identity: one `lstat` per
record file, 10,000 of them for a year of decisions. `planstate watch` keeps a journal of every change under
`.planning/` (check/journal.py). When it runs, a folder's listing is kept in `.planning/.local/cache/listings/`
with the journal's number at the moment it was true, and the next command asks the journal which entries changed
since: only those are looked at again. The journal's answer is made sure of first (a cookie file it must have seen:
everything changed before the command asked is in the journal by then), and anything it cannot vouch for (another
run of the watcher, a folder moved, an overflowed queue, a file with a second hard link, whose edits through the
other name no watch of this tree sees) means listing in full, as with no watcher. Losing or corrupting a kept
listing costs only time.

The journal listens on a Unix socket in Linux's abstract namespace; a command believes only one run by its own
user. Elsewhere, or with `PLANSTATE_NO_WATCHER` set, every listing is taken in full.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import sys
from collections.abc import Callable
from itertools import compress
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

from planstate.core.layout import LOCAL

COOKIES = "journal"  # the folder in .planning/.local/ for the cookies the journal must see before it answers
LISTINGS = "listings"  # the folder in .planning/.local/cache/ for the kept listings
VERSION = 2  # bump whenever what a kept listing holds changes
TIMEOUT = 3.0  # seconds to wait for the journal (it waits 2 for a cookie): past that, list in full
LAG = 50_000  # a kept listing this many changes behind the journal is kept again, before the journal drops them

Identity = tuple[int, int, int, int, int]  # (device, inode, size, mtime_ns, ctime_ns)
# The stat identity of a file, what changes whenever its bytes do: called once per file by the scans.
IDENTITY: Callable[[os.stat_result], Identity] = attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
_MODE = attrgetter("st_mode")
_AT = (itemgetter(3), itemgetter(4))  # an identity's mtime and ctime
_NLINK = attrgetter("st_nlink")


class Listing:
    """A folder's entries in listing order, the mode and stat identity of each, and those of its regular files
    with more than one hard link (looked at again every time)."""

    __slots__ = ("identities", "linked", "modes", "names")

    def __init__(self, names: list[str], modes: list[int], identities: list[Identity], linked: list[str]) -> None:
        self.names = names
        self.modes = modes
        self.identities = identities
        self.linked = linked

    def only(self, keep: list[bool]) -> Listing:
        """The listing of the entries `keep` says (one flag per entry, in listing order)."""
        names = list(compress(self.names, keep))
        kept = set(names) if self.linked else set()
        return Listing(
            names,
            list(compress(self.modes, keep)),
            list(compress(self.identities, keep)),
            [name for name in self.linked if name in kept],
        )


def second_link(info: os.stat_result) -> bool:
    """Whether a file is a regular one with another hard link: an edit through the other name is seen by no watch of
    its folder, so it is looked at again every time."""
    return info.st_nlink > 1 and stat.S_ISREG(info.st_mode)


class Entries:
    """A folder's entries as a whole-workspace scan takes them (store/memo.py): what the scan needs of every folder
    (a digest of its names, modes and identities, how many, whether a temp file's name is among them, its
    subfolders, its newest change, whether all are folders or regular files), and the entries themselves, which a
    kept listing the journal vouches for as unchanged reads only when asked for (`names`, `identities`)."""

    __slots__ = ("_body", "_listing", "count", "digest", "folders", "newest", "plain", "temp")

    def __init__(self, head: tuple[Any, ...], listing: Listing | None, body: bytes | None = None) -> None:
        self.digest, self.count, self.temp, self.folders, self.newest, self.plain = head
        self._listing, self._body = listing, body

    @classmethod
    def of(cls, listing: Listing) -> Entries:
        """The entries of a listing at hand."""
        return cls(_head(listing), listing)

    @property
    def listing(self) -> Listing:
        """The entries themselves (read from the kept listing the first time). Raises OSError when it cannot be."""
        if self._listing is None:
            try:
                names, modes, identities, linked = marshal.loads(self._body or b"")
            except (EOFError, ValueError, TypeError):
                raise OSError("a kept listing cannot be read") from None
            self._listing, self._body = Listing(names, modes, identities, linked), None
        return self._listing

    @property
    def loaded(self) -> bool:
        """Whether the entries are at hand (reading them costs nothing more)."""
        return self._listing is not None

    @property
    def names(self) -> list[str]:
        """The entries' names, in listing order."""
        return self.listing.names

    @property
    def identities(self) -> list[Identity]:
        """Their stat identities."""
        return self.listing.identities


def _head(listing: Listing) -> tuple[Any, ...]:
    """What `Entries` says of a listing without its entries (see there)."""
    from planstate.core.digests import names_and_numbers
    from planstate.core.files import any_temp_name

    names, modes, identities = listing.names, listing.modes, listing.identities
    digest = names_and_numbers(names, [*modes, *identities])
    folders = list(compress(names, map(stat.S_ISDIR, modes)))
    newest = max(max(map(_AT[0], identities), default=0), max(map(_AT[1], identities), default=0))
    plain = all(stat.S_ISDIR(mode) or stat.S_ISREG(mode) for mode in set(modes))
    return digest, len(names), any_temp_name([names]), folders, newest, plain


def listed(fd: int, names: list[str] | None = None) -> Listing:
    """The entries of the folder open at `fd` (those `names`, when given), one `lstat` each; raises OSError when one
    cannot be looked at (it vanished meanwhile)."""
    if names is None:
        names = os.listdir(fd)
    lstat = os.lstat
    infos = [lstat(name, dir_fd=fd) for name in names]  # through the folder's descriptor: the cheapest stat
    modes = list(map(_MODE, infos))
    linked = []
    if max(map(_NLINK, infos), default=1) > 1:
        linked = list(compress(names, map(second_link, infos)))
    return Listing(names, modes, list(map(IDENTITY, infos)), linked)


Token = tuple[str, int]  # the journal's epoch and a number in it: everything changed before it is numbered


def sync(planning: Path) -> Token | None:
    """The journal's token once it has numbered every change made before now, when a running watcher serves the
    planning folder `planning`; else None."""
    link = _link(planning)
    return link.sync(planning) if link is not None else None


def changed(planning: Path, folder: str, since: Token) -> list[str] | None:
    """The names of the entries of `folder` (an absolute path inside `planning`) that changed after `since` (a
    token `sync` gave), as of the last `sync`; None when the journal cannot tell (the caller looks at every file)."""
    link = _link(planning)
    relative = _relative(planning, folder) if link is not None else None
    if link is None or relative is None:
        return None
    return link.changed(since[0], since[1], relative)


def vouched(planning: Path, folder: str, fd: int, token: Token | None = None) -> Entries | None:
    """The entries of `folder` (an absolute path inside the planning folder `planning`, open at `fd`) from its kept
    listing and the changes the journal tells since, when a running watcher vouches for them (see the module's
    docstring); else None (the caller lists the folder itself). A folder the journal says is unchanged is not read
    until its entries are asked for. `token`: one `sync` gave, for a caller listing several folders as of one
    moment. Raises OSError as `listed` does."""
    link = _link(planning)
    relative = _relative(planning, folder) if link is not None else None
    if link is None or relative is None:
        return None
    if token is None:
        token = link.sync(planning)
        if token is None:
            return None
    epoch, seq = token
    kept = _load(planning, relative)
    if kept is not None and kept[0] == epoch:
        _epoch, since, head, linked, body = kept
        names = link.changed(epoch, since, relative)
        if names is not None and not names and not linked:
            if seq - since > LAG:
                _keep(planning, relative, epoch, seq, Entries(head, None, body).listing)
            return Entries(head, None, body)
        if names is not None:
            try:
                listing, moved = _apply(Entries(head, None, body).listing, names, fd)
            except OSError:  # the kept listing is broken: list in full
                listing, moved = listed(fd), True
            if moved or seq - since > LAG:
                return _keep(planning, relative, epoch, seq, listing)
            return Entries(head, listing)
    return _keep(planning, relative, epoch, seq, listed(fd))


def _apply(kept: Listing, changed: list[str], fd: int) -> tuple[Listing, bool]:
    """The kept listing with the `changed` entries (and the hard-linked ones) looked at again: removed when gone,
    taken in at the end when new; and whether anything differs."""
    again = [*changed, *kept.linked]
    if not again:
        return kept, False
    names, modes, identities = list(kept.names), list(kept.modes), list(kept.identities)
    # A few names are looked up by a search in C each; many, through an index of every name.
    at = {name: index for index, name in enumerate(names)} if len(again) > 16 else None

    def index_of(name: str) -> int | None:
        if at is not None:
            return at.get(name)
        try:
            return names.index(name)
        except ValueError:
            return None

    gone: set[int] = set()
    linked = set(kept.linked)
    moved = False
    for name in again:
        try:
            info = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            index = index_of(name)
            if index is not None and index not in gone:
                gone.add(index)
                linked.discard(name)
                moved = True
            continue
        mode, identity = info.st_mode, IDENTITY(info)
        if second_link(info):
            linked.add(name)
        else:
            linked.discard(name)
        index = index_of(name)
        if index is None:
            if at is not None:
                at[name] = len(names)
            names.append(name)
            modes.append(mode)
            identities.append(identity)
            moved = True
        elif modes[index] != mode or identities[index] != identity:
            modes[index], identities[index] = mode, identity
            moved = True
    listing = Listing(names, modes, identities, sorted(linked))
    if gone:
        listing = listing.only([index not in gone for index in range(len(names))])
    return listing, moved or set(kept.linked) != linked


def _relative(planning: Path, folder: str) -> str | None:
    """`folder` relative to the planning folder ("" for itself), in the journal's notation; None when it is not
    inside it, or its name could not travel on one line of the journal's protocol."""
    top = str(planning)
    if folder == top:
        return ""
    if not folder.startswith(top + os.sep) or "\n" in folder:
        return None
    relative = folder[len(top) + 1 :]
    if relative == LOCAL or relative.startswith(LOCAL + os.sep):
        return None
    return relative.replace(os.sep, "/")


def _state_path(planning: Path, relative: str) -> str:
    from planstate.core.digests import blake2b_hex

    return os.path.join(planning, LOCAL, "cache", LISTINGS, blake2b_hex(relative.encode(), 12) + ".marshal")


def _load(planning: Path, relative: str) -> tuple[str, int, tuple[Any, ...], list[str], bytes] | None:
    """The kept listing of a folder: the epoch and number it was true at, what `Entries` says of it, its hard-linked
    files and its entries, still marshalled; None when there is none or it cannot be read."""
    try:
        with open(_state_path(planning, relative), "rb") as file:
            data = marshal.loads(file.read())  # load(file) reads object by object: 20 times slower
        version, where, epoch, seq, head, linked, body = data
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if version != VERSION or where != relative or not isinstance(head, tuple) or len(head) != 6:
        return None
    if not isinstance(body, bytes) or not isinstance(linked, list):
        return None
    return epoch, seq, head, linked, body


def _keep(planning: Path, relative: str, epoch: str, seq: int, listing: Listing) -> Entries:
    """Keep a folder's listing as true at the journal's `seq` of `epoch` (best effort); its entries."""
    from planstate.core.files import write_cache

    head = _head(listing)
    body = marshal.dumps((listing.names, listing.modes, listing.identities, listing.linked))
    path = Path(_state_path(planning, relative))
    if path.parent.parent.is_dir():  # .local/cache/ is made by the cache; a kept listing never makes it
        write_cache(path, marshal.dumps((VERSION, relative, epoch, seq, head, listing.linked, body)))
    return Entries(head, listing)


# ---------------------------------------------------------------------- the journal's socket


def address(planning: Path) -> str:
    """The journal's address for a planning folder: a name in Linux's abstract namespace, after its device and
    inode (no path to grow too long, no file to leave behind). Raises OSError when the folder cannot be looked at."""
    info = os.stat(planning)
    return f"\0planstate-journal-{info.st_dev}-{info.st_ino}"


class _Link:
    """A connection to the journal of one planning folder, kept for the process's life."""

    def __init__(self, sock: object) -> None:
        self.sock = sock
        self.buffer = b""

    def sync(self, planning: Path) -> Token | None:
        """The journal's epoch and number once it has seen everything changed before now (a cookie's creation);
        None when it cannot say."""
        name = f"{os.getpid()}-{os.urandom(6).hex()}"
        cookie = os.path.join(planning, LOCAL, COOKIES, name)
        try:
            os.close(os.open(cookie, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        except FileNotFoundError:  # `.local/` deleted: made again for the next command, once the watcher watches it
            with contextlib.suppress(OSError):
                os.makedirs(os.path.dirname(cookie), exist_ok=True)
            return None
        except OSError:
            return None
        try:
            lines = self._ask(f"sync {name}\n", 1)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(cookie)
        if not lines:
            return None
        words = lines[0].split(" ")
        if len(words) != 3 or words[0] != "ok" or not words[2].isdigit():
            return None
        return words[1], int(words[2])

    def changed(self, epoch: str, seq: int, relative: str) -> list[str] | None:
        """The names of the entries of the folder `relative` changed after `seq` of `epoch`; None when the journal
        cannot tell."""
        lines = self._ask(f"changed {epoch} {seq} {relative}\n", 1)
        if not lines or not lines[0].startswith("names "):
            return None
        count = lines[0][6:]
        if not count.isdigit():
            return None
        if int(count) == 0:
            return []
        more = self._ask("", int(count))
        return more if more is not None and len(more) == int(count) else None

    def _ask(self, request: str, count: int) -> list[str] | None:
        """Send `request` and read `count` lines of the answer; None (and the connection dropped) on any failure."""
        sock = self.sock
        try:
            if request:
                sock.sendall(request.encode("utf-8"))  # type: ignore[attr-defined]
            while self.buffer.count(b"\n") < count:
                data = sock.recv(65536)  # type: ignore[attr-defined]
                if not data:
                    raise OSError("the journal hung up")
                self.buffer += data
        except OSError:
            _drop(self)
            return None
        *lines, self.buffer = self.buffer.split(b"\n", count)
        return [line.decode("utf-8", "surrogateescape") for line in lines]


_LINKS: dict[str, _Link] = {}  # by address


def _link(planning: Path) -> _Link | None:
    """The connection to the journal serving `planning`, when a watcher run by this user serves it."""
    if sys.platform != "linux" or os.environ.get("PLANSTATE_NO_WATCHER"):
        return None
    try:
        where = address(planning)
    except OSError:
        return None
    link = _LINKS.get(where)
    if link is not None:
        return link
    import _socket  # not `socket`: its import costs several ms, and a command with no watcher pays it

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(TIMEOUT)
        sock.connect(where)
        # struct ucred: pid, uid, gid (three ints)
        uid = int.from_bytes(sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)[4:8], sys.byteorder)
    except OSError:
        sock.close()
        return None
    if uid != os.getuid():  # another user's process on this name: it could say anything
        sock.close()
        return None
    link = _LINKS[where] = _Link(sock)
    return link


def _drop(link: _Link) -> None:
    """Forget a connection that failed: a late answer on it would answer the next question."""
    for where, known in list(_LINKS.items()):
        if known is link:
            del _LINKS[where]
    with contextlib.suppress(OSError):
        link.sock.close()  # type: ignore[attr-defined]
