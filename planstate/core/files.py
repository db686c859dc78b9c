"""Reading files safely and writing them atomically (temp file, fsync, rename, fsync folder)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from planstate.core.errors import ConflictError, ParseError, PlanstateError, UsageError

MAX_FILE_BYTES = 16 << 20  # a planning file is kilobytes; refuse to read runaway files


def _display(path: Path, base: Path | None) -> str:
    """A path as shown in messages: relative to `base` when it is inside it."""
    if base is not None:
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
    return str(path)


# Folders resolved before, by (folder, workspace root) as text: their (device, inode) then and their real path.
# Reading 17,000 records resolved each file's every component twice (1.1 s); a folder's entry is checked again
# with one lstat, and the file's with another.
_FOLDERS: dict[tuple[str, str], tuple[tuple[int, int], Path]] = {}


def real_target(path: Path, root: Path, base: Path | None = None) -> Path:
    """Resolve symlinks in `path`, refusing targets outside the workspace folder `root`."""
    fast = _known_folder_target(path, root)
    if fast is not None:
        return fast
    shown = _display(path, base)
    try:
        resolved = path.resolve()
        root_real = root.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop: RuntimeError before Python 3.13, OSError after
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "a symlink loop"
        raise UsageError(f"cannot resolve {path.name}: {reason}", file=shown) from None
    if resolved != root_real and root_real not in resolved.parents:
        raise UsageError(
            f"{path.name} is a symlink to {resolved}, outside the workspace {root_real}; "
            "planstate will not read or write it",
            file=shown,
        )
    if not os.path.islink(path):  # else `resolved` is where the link leads, and says nothing of its folder
        _remember_folder(path.parent, root, resolved, root_real)
    return resolved


def _identity(folder: Path) -> tuple[int, int] | None:
    """A real folder's (device, inode), or None when it is a symlink, not a folder or gone."""
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _remember_folder(folder: Path, root: Path, resolved: Path, root_real: Path) -> None:
    """Remember the real path of a folder just resolved inside the workspace, when it is a real folder itself."""
    real = resolved.parent
    if real != root_real and root_real not in real.parents:
        return
    seen = _identity(folder)
    if seen is not None and folder.is_absolute():
        _FOLDERS[(str(folder), str(root))] = (seen, real)


def _known_folder_target(path: Path, root: Path) -> Path | None:
    """The real path of a file that is not a symlink in a folder resolved before and unchanged since (its entry
    is the same real folder); None when that cannot be told cheaply, and `real_target` resolves it in full."""
    folder, name = os.path.split(str(path))
    known = _FOLDERS.get((folder, str(root)))
    if known is None:
        return None
    try:
        info = os.lstat(path)
        entry = os.lstat(folder)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(entry.st_mode) or (entry.st_dev, entry.st_ino) != known[0]:
        return None
    return known[1] / name


def read_bytes(path: Path, root: Path, base: Path | None = None) -> bytes:
    """Read a workspace file after checking it is a regular file inside the workspace of sane size."""
    shown = _display(path, base)
    target = real_target(path, root, base)
    try:
        info = target.stat()
    except FileNotFoundError:
        raise UsageError("file not found", file=shown) from None
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror}", file=shown) from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError("not a regular file", file=shown)
    if info.st_size > MAX_FILE_BYTES:
        raise ParseError(
            f"file is {info.st_size / (1 << 20):.1f} MB; planstate reads files up to {MAX_FILE_BYTES >> 20} MB",
            file=shown,
            line=1,
            column=1,
        )
    try:
        data = _read_limited(target)
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror}", file=shown) from None
    if data is None:
        raise ParseError(f"file grew past {MAX_FILE_BYTES >> 20} MB while reading", file=shown, line=1, column=1)
    return data


def _read_limited(path: Path) -> bytes | None:
    """Read a regular file of at most MAX_FILE_BYTES without blocking on FIFOs; None when larger."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return read_all(fd, MAX_FILE_BYTES)
    finally:
        os.close(fd)


def read_all(fd: int, limit: int) -> bytes | None:
    """Read an open file from its position to its end; None when that is more than `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return None if size > limit else b"".join(chunks)


Guard = Callable[[], None]  # raises to stop a write at the last moment (the workspace lock is no longer held)


def atomic_write(
    path: Path, data: bytes, *, expected: bytes | None = None, shown: str | None = None, guard: Guard | None = None
) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file.

    With `expected`, refuse (ConflictError) when the file on disk no longer holds those bytes:
    something outside planstate's lock, such as an editor, changed it since it was read. The check
    and `guard` run after the new bytes are on disk, right before the rename, so that the window in
    which a change can be missed is the rename alone.
    `path` should be the real file, not a symlink: the rename replaces whatever entry has the name.
    """
    shown = shown or str(path)
    try:
        _write_replacing(path, data, expected, shown, guard)
    except OSError as exc:
        raise UsageError(f"cannot write: {exc.strerror or exc}; nothing was written", file=shown) from None


def _write_replacing(path: Path, data: bytes, expected: bytes | None, shown: str, guard: Guard | None) -> None:
    folder = path.parent
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, mode)
        _write_all(fd, data)
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    try:
        if guard is not None:
            guard()
        if expected is not None:
            _require_unchanged(path, expected, shown)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    fsync_dir(folder)


def _require_unchanged(path: Path, expected: bytes, shown: str) -> None:
    """Refuse (ConflictError) when `path` no longer holds `expected`."""
    try:
        current = _read_limited(path)
    except FileNotFoundError:
        current = None
    if current != expected:
        raise ConflictError(
            "changed on disk while planstate was updating it (an editor saving?); "
            "nothing was written, run the command again",
            file=shown,
        )


def write_durably(path: Path, data: bytes) -> None:
    """Write a new file and flush it to disk (for files that appear through a later rename)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd` (os.write may write less than asked) and flush it to disk."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries to disk, so a rename survives a power cut."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def create_exclusive(path: Path, data: bytes, *, guard: Guard | None = None) -> None:
    """Create a new file with `data`, failing if the name exists; the content appears atomically."""
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        if guard is not None:
            guard()
        os.link(tmp, path)  # fails with FileExistsError instead of overwriting
    finally:
        _unlink(tmp)
    fsync_dir(path.parent)


def move_exclusive(source: Path, target: Path, *, guard: Guard | None = None, flush: bool = True) -> None:
    """Move a file to `target` in one rename, failing if the name exists: no instant shows it in both places or
    in neither. Both folders are flushed, so the move survives a power cut (with `flush=False` the caller flushes
    them, once for many moves)."""
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, "File exists", str(target))
    if guard is not None:
        guard()
    os.rename(source, target)  # the workspace lock keeps other planstate writers from taking `target` meanwhile
    if flush:
        fsync_dir(target.parent)
        fsync_dir(source.parent)


def any_temp_name(listings: Iterable[Sequence[str]]) -> bool:
    """Whether a name in any of these folder listings ends as a temp file's (`temp_path`) does: the quick test before
    `stale_temp_files` looks closer, one scan of each listing's joined names (no call per name: 17,000 of them)."""
    return any(f"{TEMP_SUFFIX}\0" in "\0".join((*names, "")) for names in listings)


def stale_temp_files(folder: Path) -> list[Path]:
    """The temp files in `folder` left by planstate writers that were killed (their process is gone), by name.

    Only names planstate makes count: `.<name>.<pid>.<8 hex digits>.tmp`.
    """
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        match = _TEMP_NAME.fullmatch(name)
        if match is None:
            continue
        pid = int(match.group(1))
        if pid != os.getpid() and not _alive(pid):
            out.append(folder / name)
    return out


def remove_stale_temp_files(folder: Path) -> None:
    """Delete the temp files in `folder` left by planstate writers that were killed (see stale_temp_files)."""
    for path in stale_temp_files(folder):
        _unlink(path)


TEMP_SUFFIX = ".tmp"  # how `temp_path`'s names end
# `temp_path`'s names: the writer's pid, then random
_TEMP_NAME = re.compile(r"\..+\.([0-9]+)\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX))


def temp_path(path: Path) -> Path:
    """Where a writer of `path` puts the bytes before renaming them into place: beside it, hidden, named by the
    writing process (so `stale_temp_files` knows when its writer is gone) and a random part (threads of one
    process, or a reused pid, never share it)."""
    return path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}"


def write_cache(path: Path, data: bytes) -> None:
    """Write a cache file under `.planning/.local/` whole, through a temp file; best effort. No fsync: a torn file
    is a miss. The cache folder and `.local/` are made when missing, never the workspace folder above them (a
    workspace deleted meanwhile stays deleted)."""
    temp = temp_path(path)
    with contextlib.suppress(OSError):
        path.parent.parent.mkdir(exist_ok=True)  # fails when the workspace folder is gone
        path.parent.mkdir(exist_ok=True)
        temp.write_bytes(data)
        os.replace(temp, path)
    with contextlib.suppress(OSError):
        temp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def absolute(path: str | Path) -> Path:
    """An absolute path; a clear error when the current folder was deleted under the process."""
    try:
        return Path(path).absolute()
    except FileNotFoundError:
        raise UsageError("the current folder no longer exists; cd to an existing folder") from None


# The files editors keep beside a file they have open: vim's swap files and emacs's lock link. A write made under
# an open editor is undone when the editor saves its buffer (after asking "file changed, write anyway?").
EDITOR_LOCKS = (".{}.swp", ".{}.swo", ".{}.swn", ".#{}")


def is_editor_lock(path: Path) -> bool:
    """Whether `path` is an editor's lock or swap file for a file beside it (its coming and going matters)."""
    name = path.name
    return any(
        name.startswith(head) and name.endswith(tail) and len(name) > len(head) + len(tail)
        for head, tail in (pattern.split("{}") for pattern in EDITOR_LOCKS)
    )


def editor_lock(path: Path) -> Path | None:
    """The lock or swap file an editor keeps beside `path` while it has the file open, if there is one."""
    for pattern in EDITOR_LOCKS:
        lock = path.with_name(pattern.format(path.name))
        if os.path.lexists(lock):
            return lock
    return None


def refuse_while_open(path: Path, shown: str, *, done: str, undone: str, then: str) -> None:
    """The one rule for a file an editor has open (`check --fix`, `next`): refuse to write it, saying why, since
    saving the editor's buffer would undo the write after asking the person about a change they did not make.
    `done`, `undone` and `then` word the refusal: `not {done} … would undo {undone}; close it, then {then}`."""
    lock = editor_lock(path)
    if lock is not None:
        raise PlanstateError(
            f"not {done} while an editor has it open ({lock.name}): saving there would undo {undone}; "
            f"close it, then {then}",
            file=shown,
        )
