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
import struct
import sys
from collections.abc import Callable
from itertools import compress
from operator import attrgetter, itemgetter, or_
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from planstate.core.layout import LOCAL

COOKIES = "journal"  # the folder in .planning/.local/ for the cookies the journal must see before it answers
LISTINGS = "listings"  # the folder in .planning/.local/cache/ for the kept listings
VERSION = 5  # bump whenever what a kept listing holds changes
CHANGES = ".changes.marshal"  # the suffix of the file of the changes over a listing kept whole
CHANGES_MAX = 256  # entries changed since a listing was kept whole above which it is kept whole again
TIMEOUT = 3.0  # seconds to wait for the journal (it waits 2 for a cookie): past that, list in full
LAG = 50_000  # a kept listing this many changes behind the journal is kept again, before the journal drops them

Identity = tuple[int, int, int, int, int]  # (device, inode, size, mtime_ns, ctime_ns)
# The stat identity of a file, what changes whenever its bytes do: called once per file by the scans.
IDENTITY: Callable[[os.stat_result], Identity] = attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
_MODE = attrgetter("st_mode")
MTIME, CTIME = itemgetter(3), itemgetter(4)  # an identity's mtime and ctime (ns)
_NLINK = attrgetter("st_nlink")
T = TypeVar("T")
# A kept entry packed: its mode, then its identity (device, inode and size unsigned; times signed, as before 1970).
_PACKED = struct.Struct("<QQQQqq")
_MODE_OF, _IDENTITY_OF = itemgetter(0), itemgetter(slice(1, 6))  # of an entry unpacked


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


Entry = tuple[int, Identity]  # an entry's mode and stat identity
Changes = dict[str, "Entry | None"]  # entries by name as they are now (None: gone), over a kept listing's


class Entries:
    """A folder's entries as a whole-workspace scan takes them (store/memo.py): what the scan needs of every folder
    (a digest of its names, modes and identities, how many, whether a temp file's name is among them, its
    subfolders, its newest change, whether all are folders or regular files), and the entries themselves, which a
    kept listing the journal vouches for reads only when asked for (`names`, `identities`, `lookup`): those kept
    whole, still packed, with the `changes` since over them. From a kept listing, `again` names the entries looked
    at again since it was kept (the journal named them, or they have a second hard link): only those can have
    changed since (None when listed in full); every entry but those and the `fresh` ones last changed at or before
    `older` (ns), so only those can be recent (memo's `_recent`)."""

    __slots__ = (
        "_base",
        "_body",
        "_listing",
        "again",
        "changes",
        "count",
        "digest",
        "folders",
        "fresh",
        "newest",
        "older",
        "plain",
        "temp",
    )

    def __init__(
        self,
        head: tuple[Any, ...],
        listing: Listing | None,
        body: tuple[str, bytes] | None = None,
        again: list[str] | None = None,
        older: int = 0,
        fresh: list[str] | None = None,
        changes: Changes | None = None,
    ) -> None:
        self.digest, self.count, self.temp, self.folders, self.newest, self.plain = head
        self._listing, self._body, self._base = listing, body, listing
        self.again, self.older, self.fresh = again, older, fresh or []
        self.changes: Changes = changes or {}

    @classmethod
    def of(cls, listing: Listing) -> Entries:
        """The entries of a listing at hand."""
        return cls(_head(listing), listing)

    def _kept(self) -> Listing:
        """The entries kept whole (unpacked the first time). Raises OSError when they cannot be."""
        if self._base is None:
            held, packed = self._body or ("", b"")
            names = held[1:-1].split("\0") if len(held) > 2 else []
            if len(packed) != len(names) * _PACKED.size:
                raise OSError("a kept listing cannot be read")
            entries = list(_PACKED.iter_unpack(packed))
            modes, identities = list(map(_MODE_OF, entries)), list(map(_IDENTITY_OF, entries))
            self._base, self._body = Listing(names, modes, identities, []), None
        return self._base

    @property
    def listing(self) -> Listing:
        """The entries themselves, in listing order (those kept whole with the changes since over them: a new one at
        the end). Raises OSError when they cannot be read."""
        if self._listing is None:
            self._listing = _merged(self._kept(), self.changes)
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

    def lookup(self, names: list[str]) -> dict[str, Entry]:
        """The mode and stat identity of each of `names` that is an entry (the changes first, then those kept whole,
        found where they are kept: no object made of every entry)."""
        if not names:
            return {}
        if self._listing is None and self._base is None and self._body is not None:
            changes, entry_of = self.changes, self._packed_entry
        else:
            listing = self._listing or self._kept()
            changes = self.changes if self._listing is None else {}
            index_of = _indexer(listing.names, len(names))

            def entry_of(name: str) -> Entry | None:
                index = index_of(name)
                return None if index is None else (listing.modes[index], listing.identities[index])

        found: dict[str, Entry] = {}
        for name in names:
            entry = changes[name] if name in changes else entry_of(name)
            if entry is not None:
                found[name] = entry
        return found

    def _packed_entry(self, name: str) -> Entry | None:
        """The entry `name` among those kept whole as they are kept: searched in their joined names, unpacked alone.
        Raises OSError when they cannot be read."""
        held, packed = self._body or ("", b"")
        at = held.find(f"\0{name}\0")
        if at < 0:
            return None
        index = held.count("\0", 0, at)  # the NULs before it: one begins each name
        try:
            unpacked = _PACKED.unpack_from(packed, index * _PACKED.size)
        except struct.error:
            raise OSError("a kept listing cannot be read") from None
        return _MODE_OF(unpacked), _IDENTITY_OF(unpacked)


def _indexer(names: list[str], asked: int) -> Callable[[str], int | None]:
    """Where each name is among `names` (None when it is not), for `asked` names: a few are each found by a search
    in C, many through an index of every name."""
    if asked > 16:
        return {name: index for index, name in enumerate(names)}.get

    def index_of(name: str) -> int | None:
        try:
            return names.index(name)
        except ValueError:
            return None

    return index_of


def _merged(kept: Listing, changes: Changes) -> Listing:
    """The listing `kept` with the `changes` over it: an entry changed in place, one gone left out, a new one at the
    end (in the order of the changes)."""
    if not changes:
        return kept
    names, modes, identities = list(kept.names), list(kept.modes), list(kept.identities)
    index_of = _indexer(kept.names, len(changes))
    gone: set[int] = set()
    for name, entry in changes.items():
        index = index_of(name)
        if entry is None:
            if index is not None:
                gone.add(index)
        elif index is None:
            names.append(name)
            modes.append(entry[0])
            identities.append(entry[1])
        else:
            modes[index], identities[index] = entry
    listing = Listing(names, modes, identities, kept.linked)
    return listing.only([index not in gone for index in range(len(names))]) if gone else listing


def _head(listing: Listing) -> tuple[Any, ...]:
    """What `Entries` says of a listing without its entries (see there)."""
    from planstate.core.digests import names_and_numbers
    from planstate.core.files import any_temp_name

    names, modes, identities = listing.names, listing.modes, listing.identities
    digest = names_and_numbers(names, [*modes, *identities])
    folders = list(compress(names, map(stat.S_ISDIR, modes)))
    newest = max(max(map(MTIME, identities), default=0), max(map(CTIME, identities), default=0))
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


def vouched(planning: Path, folder: str, fd: int, token: Token, since: int) -> Entries | None:
    """The entries of `folder` (an absolute path inside the planning folder `planning`, open at `fd`) from its kept
    listing and the changes the journal tells since, when a running watcher vouches for them (see the module's
    docstring); else None (the caller lists the folder itself). A folder's entries are not read until they are asked
    for. `token`: what `sync` gave (a caller lists every folder as of one moment); an entry changed after `since` (ns)
    is recent (see `Entries`). Raises OSError as `listed` does."""
    link = _link(planning)
    relative = _relative(planning, folder) if link is not None else None
    if link is None or relative is None:
        return None
    epoch, seq = token
    kept = _load(planning, relative)
    names = link.changed(epoch, kept.seq, relative) if kept is not None and kept.epoch == epoch else None
    if kept is None or names is None:
        return _keep(planning, relative, epoch, seq, listed(fd), since)
    again = [*names, *kept.linked]
    entries = Entries(kept.head, None, kept.body, again, kept.older, kept.fresh, kept.changes)
    try:
        step, before, linked = _looked(entries, again, kept.linked, fd)
    except OSError:  # the kept listing is broken: list in full
        return _keep(planning, relative, epoch, seq, listed(fd), since)
    if not step and linked == kept.linked:
        if seq - kept.seq > LAG:  # kept again, before the journal forgets the changes since
            _note(planning, kept._replace(seq=seq), relative)
        return entries
    changes = {**kept.changes, **step}
    head = _next_head(kept.head, step, before)
    if head is None or len(changes) > CHANGES_MAX:  # kept whole again
        whole = _merged(entries._kept(), changes)
        listing = Listing(whole.names, whole.modes, whole.identities, linked)
        return _keep(planning, relative, epoch, seq, listing, since, again)
    # An entry the kept listing did not hold fresh last changed at or before its `older`: it is not fresh now.
    older = max(since, kept.older)
    now = entries.lookup(kept.fresh)
    for name, entry in step.items():
        if entry is None:
            now.pop(name, None)
        else:
            now[name] = entry
    fresh = changed_after(list(now), [entry[1] for entry in now.values()], older)
    _note(planning, Kept(epoch, seq, kept.token, head, linked, older, fresh, kept.body, changes), relative)
    return Entries(head, None, kept.body, again, older, fresh, changes)


def changed_after(items: list[T], identities: list[Identity], after: int) -> list[T]:
    """The `items` (one for each of the `identities`, in order) whose file changed after `after` (ns), by whole
    columns in C: no step per entry in Python."""
    newer = map(or_, map(after.__lt__, map(MTIME, identities)), map(after.__lt__, map(CTIME, identities)))
    return list(compress(items, newer))


def _looked(kept: Entries, again: list[str], linked: list[str], fd: int) -> tuple[Changes, dict[str, Entry], list[str]]:
    """The entries `again` of a kept listing (those the journal named, and the hard-linked ones) looked at again:
    those that differ from the ones kept, as they are now (None: gone), in name order; the ones kept of them; and
    the hard-linked files now."""
    before = kept.lookup(again)
    step: Changes = {}
    now_linked = set(linked)
    for name in sorted(set(again)):
        try:
            info = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            now_linked.discard(name)
            if name in before:
                step[name] = None
            continue
        entry = info.st_mode, IDENTITY(info)
        if second_link(info):
            now_linked.add(name)
        else:
            now_linked.discard(name)
        if before.get(name) != entry:
            step[name] = entry
    return step, before, sorted(now_linked)


def _next_head(head: tuple[Any, ...], step: Changes, before: dict[str, Entry]) -> tuple[Any, ...] | None:
    """What `Entries` says of a kept listing (`head`) after the changes `step` (in name order; the entries `before`
    them): a digest that also tells what changed (the digest it follows, the step's names, modes and identities:
    equal digests mean equal entries in an equal order, as for a listing digested whole), and the rest updated from
    the step alone; None when that cannot be told without every entry (a temp file or a special one gone)."""
    from planstate.core.digests import names_and_numbers
    from planstate.core.files import any_temp_name

    digest, count, temp, folders, newest, plain = head
    gone = [name for name, entry in step.items() if entry is None]
    now = {name: entry for name, entry in step.items() if entry is not None}
    if (temp and any_temp_name([gone])) or not plain:
        return None
    numbers = [(-1,) if entry is None else (entry[0], *entry[1]) for entry in step.values()]
    digest = names_and_numbers([digest, *step], numbers)
    count += len(now.keys() - before.keys()) - len(gone)
    temp = temp or any_temp_name([list(now)])
    if any(stat.S_ISDIR(entry[0]) for entry in (*now.values(), *before.values())):
        folders = [name for name in folders if name not in step]
        folders += [name for name, entry in now.items() if stat.S_ISDIR(entry[0])]
    newest = max([newest, *(max(MTIME(entry[1]), CTIME(entry[1])) for entry in now.values())])
    plain = all(stat.S_ISDIR(entry[0]) or stat.S_ISREG(entry[0]) for entry in now.values())
    return digest, count, temp, folders, newest, plain


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


def _state_path(planning: Path, relative: str, suffix: str = ".marshal") -> str:
    from planstate.core.digests import blake2b_hex

    return os.path.join(planning, LOCAL, "cache", LISTINGS, blake2b_hex(relative.encode(), 12) + suffix)


class Kept(NamedTuple):
    """A folder's kept listing: the journal's epoch and number it is true at, the token of the entries kept whole
    (the changes kept since name it), what `Entries` says of it, its hard-linked files, its `older` and `fresh` (see
    `Entries`), its entries kept whole (still packed) and the changes since, over them."""

    epoch: str
    seq: int
    token: str
    head: tuple[Any, ...]
    linked: list[str]
    older: int
    fresh: list[str]
    body: tuple[str, bytes]
    changes: Changes


def _load(planning: Path, relative: str) -> Kept | None:
    """The kept listing of a folder: kept whole, with the changes kept since when they follow it (`_note`); None when
    there is none or it cannot be read."""
    whole = _read(_state_path(planning, relative), relative)
    if whole is None:
        return None
    epoch, seq, token, head, linked, older, fresh, body = whole
    if not (isinstance(body, tuple) and len(body) == 2 and isinstance(body[0], str) and isinstance(body[1], bytes)):
        return None
    kept = Kept(epoch, seq, token, head, linked, older, fresh, body, {})
    since = _read(_state_path(planning, relative, CHANGES), relative)
    if since is None or since[0] != kept.epoch or since[2] != kept.token or not _changes(since[-1]):
        return kept
    return kept._replace(
        seq=since[1], head=since[3], linked=since[4], older=since[5], fresh=since[6], changes=since[-1]
    )


def _read(path: str, relative: str) -> tuple[Any, ...] | None:
    """What a kept listing's file holds after its version and folder: the journal's epoch and number, the token,
    what `Entries` says, the hard-linked files, `older` and `fresh`, and its entries (or the changes since); None
    when it is no such file."""
    try:
        with open(path, "rb") as file:
            data = marshal.loads(file.read())  # load(file) reads object by object: 20 times slower
        version, where, epoch, seq, token, head, linked, older, fresh, rest = data
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if version != VERSION or where != relative or not isinstance(head, tuple) or len(head) != 6:
        return None
    if not isinstance(epoch, str) or type(seq) is not int or not isinstance(token, str) or not isinstance(linked, list):
        return None
    if type(older) is not int or not isinstance(fresh, list):
        return None
    return epoch, seq, token, head, linked, older, fresh, rest


def _changes(kept: Any) -> bool:
    """Whether what a file of changes holds is such: entries by name, each a mode and a stat identity, or None."""
    if not isinstance(kept, dict):
        return False
    return all(
        isinstance(name, str)
        and (
            entry is None
            or (isinstance(entry, tuple) and len(entry) == 2 and type(entry[0]) is int and _identity(entry[1]))
        )
        for name, entry in kept.items()
    )


def _identity(kept: Any) -> bool:
    """Whether a kept value is a stat identity (five integers)."""
    return isinstance(kept, tuple) and len(kept) == 5 and all(type(number) is int for number in kept)


def _keep(
    planning: Path,
    relative: str,
    epoch: str,
    seq: int,
    listing: Listing,
    since: int,
    again: list[str] | None = None,
) -> Entries:
    """Keep a folder's listing whole as true at the journal's `seq` of `epoch` (best effort), with no changes since;
    its entries (`again` as `Entries` has them; those changed after `since` are its fresh ones)."""
    from planstate.core.files import write_cache

    head = _head(listing)
    fresh = changed_after(listing.names, listing.identities, since)
    entries = Entries(head, listing, None, again, since, fresh)
    try:
        body = _packed(listing)
    except struct.error:  # a number out of the packed range: nothing is kept
        return entries
    path = Path(_state_path(planning, relative))
    if path.parent.parent.is_dir():  # .local/cache/ is made by the cache; a kept listing never makes it
        token = os.urandom(8).hex()  # names this listing for the changes that will be kept over it
        kept = (VERSION, relative, epoch, seq, token, head, listing.linked, since, fresh, body)
        write_cache(path, marshal.dumps(kept))
        with contextlib.suppress(OSError):
            os.unlink(_state_path(planning, relative, CHANGES))
    return entries


def _packed(listing: Listing) -> tuple[str, bytes]:
    """A listing's entries as kept: their names joined (`joined`) and, in the same order, each entry's mode and
    identity packed in a fixed width (one is found and unpacked alone)."""
    columns = zip(*listing.identities, strict=True) if listing.identities else ((),) * 5
    return joined(listing.names), b"".join(map(_PACKED.pack, listing.modes, *columns))


def joined(names: list[str]) -> str:
    """Names as one text to search for a name in (`f"\\0{name}\\0" in it`): each between NULs, which no file name
    holds."""
    return "\0" + "\0".join(names) + "\0"


def _note(planning: Path, kept: Kept, relative: str) -> None:
    """Keep the changes over a folder's listing kept whole, as true at the journal's number `kept.seq` (best effort):
    a few entries, where the listing is 10,000."""
    from planstate.core.files import write_cache

    path = Path(_state_path(planning, relative, CHANGES))
    if path.parent.parent.is_dir():
        since = (kept.epoch, kept.seq, kept.token, kept.head, kept.linked, kept.older, kept.fresh, kept.changes)
        write_cache(path, marshal.dumps((VERSION, relative, *since)))


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
