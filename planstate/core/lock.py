"""The workspace lock: an flock on .planning/.local/lock, with a timeout that names the holder."""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from planstate.core.errors import ConflictError, LockTimeout, UsageError
from planstate.core.files import temp_path

# Waiting is fair (first come, first served), so a longer wait is progress, not a gamble: with 32 writers on two
# busy cores the 99th-percentile wait was about 10.5 s (benchmarks/contention.py), and 30 s leaves three times that.
DEFAULT_TIMEOUT = 30.0


def check_timeout(value: float) -> float:
    """Return a lock timeout in seconds, refusing negative numbers and NaN (which would wait forever)."""
    if math.isnan(value) or value < 0:
        raise UsageError(f"the lock timeout must be a number of seconds >= 0, not {value!r}")
    return value


class WorkspaceLock:
    """A re-entrant exclusive lock shared by every planstate process and thread writing one workspace.

    Between processes it is an flock on the lock file; between threads of one process a
    re-entrant mutex, so that one thread's nested transactions re-enter while other threads wait.
    """

    def __init__(self, path: Path, timeout: float | None = None) -> None:
        self.path = path
        self.timeout = DEFAULT_TIMEOUT if timeout is None else check_timeout(timeout)
        self._fd: int | None = None
        self._anchors: list[int] = []  # lock files taken over after the held one was removed (see verify)
        self._depth = 0
        self._mutex = threading.RLock()
        self._queue = _Queue(path.parent / "queue")

    def _give_up(self, holder: str) -> LockTimeout:
        return LockTimeout(
            f"workspace is locked by {holder or 'another process'}; gave up after {self.timeout:g}s",
            file=_shown(self.path),
        )

    def acquire(self) -> None:
        """Take the lock, waiting up to the timeout; raise LockTimeout naming the holder."""
        deadline = time.monotonic() + self.timeout
        wait = -1 if self.timeout >= threading.TIMEOUT_MAX else self.timeout
        if not self._mutex.acquire(timeout=wait):
            raise self._give_up("another thread of this process")
        try:
            if not self._depth:
                self._queue.enter(deadline, self._waited_for)
                try:
                    self._fd = self._flock(deadline)
                except BaseException:
                    self._queue.leave()
                    raise
            self._depth += 1
        except BaseException:
            self._mutex.release()
            raise

    def _waited_for(self) -> LockTimeout:
        """The timeout while queued: it names who holds the lock now, as the lock file's note says."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return self._give_up("")
        try:
            return self._give_up(_read_holder(fd))
        finally:
            os.close(fd)

    def _flock(self, deadline: float) -> int:
        """Open the lock file and flock it, waiting until `deadline` (in the kernel where it can, else polling);
        return the descriptor. The lock held is the file at the path: when the file was removed or replaced
        while this process waited (someone cleaned `.local/`), the flock guards nothing, so it starts over."""
        while True:
            fd = self._open(deadline)
            try:
                self._wait(fd, deadline)
            except BaseException:
                os.close(fd)
                raise
            if _same_file(fd, self.path):
                break
            os.close(fd)  # an orphaned inode: other writers lock the file now at the path
        info = f"pid {os.getpid()} on {os.uname().nodename} ({_command()}) since {time.strftime('%H:%M:%S')}"
        note = info.encode("utf-8", errors="replace")
        try:
            # Written over the last holder's note, then cut to its length: truncating to nothing first frees the
            # file's block, which waits on the filesystem's journal after a write's fsyncs (milliseconds a lock).
            os.pwrite(fd, note, 0)
            os.ftruncate(fd, len(note))
        except OSError:
            pass  # the holder note is a courtesy; the flock is what counts
        return fd

    def _open(self, deadline: float) -> int:
        """Open (creating) the lock file; its folder, `.local/`, may be removed and made again meanwhile."""
        while True:
            try:
                os.mkdir(self.path.parent)  # .planning/.local; never recreate a deleted .planning/
            except FileExistsError:
                pass
            except OSError as exc:
                raise _unopenable(self.path, exc) from None
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
            except FileNotFoundError:
                if time.monotonic() >= deadline or not self.path.parent.parent.is_dir():
                    raise UsageError(
                        "cannot take the workspace lock: its folder keeps disappearing", file=_shown(self.path)
                    ) from None
            except OSError as exc:
                raise _unopenable(self.path, exc) from None

    def _wait(self, fd: int, deadline: float) -> None:
        """flock `fd`, waiting until `deadline`; LockTimeout naming the holder after it."""
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise self._give_up(_read_holder(fd)) from None
                waited = _wait_in_kernel(fd, deadline)
                if waited is True:
                    return
                if waited is None:  # not possible here (a thread, or a timer in use): poll
                    time.sleep(delay)
                    delay = min(delay * 1.5, 0.01)

    def verify(self) -> None:
        """Make sure the lock this process holds is still the lock file at the path, right before a write.

        When the file was removed or replaced while held, another writer may have locked the new one.
        If nobody holds the new file, this process takes it too and goes on; otherwise ConflictError,
        and nothing is written.
        """
        if self._fd is None or _same_file(self._anchors[-1] if self._anchors else self._fd, self.path):
            return
        try:
            fd = self._open(time.monotonic())
        except UsageError:
            fd = -1
        if fd >= 0:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                fd = -1
        if fd >= 0 and _same_file(fd, self.path):
            self._anchors.append(fd)
            return
        if fd >= 0:
            os.close(fd)
        raise ConflictError(
            "the workspace lock file was removed while this write held it, and another writer holds the new one; "
            "nothing was written, run the command again",
            file=_shown(self.path),
        )

    def release(self) -> None:
        """Release the lock (the outermost release unlocks)."""
        if not self._depth:
            raise RuntimeError("release of an unheld workspace lock")
        try:
            self._depth -= 1
            if self._depth or self._fd is None:
                return
            fds, self._fd, self._anchors = [self._fd, *self._anchors], None, []
            try:
                for fd in fds:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_UN)
                    finally:
                        os.close(fd)
            finally:
                self._queue.leave()  # after the unlock: the next in line finds the lock free
        finally:
            self._mutex.release()

    def __enter__(self) -> WorkspaceLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


class _Queue:
    """First come, first served among planstate writers of one workspace (an flock alone wakes waiters in no
    order, so under load one writer could lose every race until its timeout ran out).

    Each waiter puts a ticket in `.local/queue/`, named by its arrival time and flocked by its process
    for as long as it waits and writes (the flock is taken before the ticket appears, through a rename).
    A waiter goes on when no earlier ticket is left, waiting meanwhile in the kernel on the flock of the
    ticket just before its own. A ticket whose flock can be taken belongs to a process that died: it is
    removed. Versions of planstate without the queue still serialise on the lock file itself.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fd: int | None = None
        self._name = ""

    def enter(self, deadline: float, timed_out: Callable[[], LockTimeout]) -> None:
        """Take a ticket and wait for this waiter's turn; on timeout leave the queue and raise `timed_out()`."""
        self._take_ticket()
        try:
            while not self._first(deadline):
                if time.monotonic() >= deadline:
                    raise timed_out()
        except BaseException:
            self.leave()
            raise

    def leave(self) -> None:
        """Remove this waiter's ticket and release its flock: the next waiter goes on."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            if _same_file(fd, self.folder / self._name):
                os.unlink(self.folder / self._name)
        os.close(fd)

    def _take_ticket(self) -> None:
        """Make a ticket named by the arrival time, flocked before it becomes visible in the queue."""
        for folder in (self.folder.parent, self.folder):
            with contextlib.suppress(OSError):  # there already, or cannot be: the lock's own open says why
                os.mkdir(folder)  # never makes .planning/ itself: the lock's own open refuses a deleted workspace
        name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(3).hex()}"
        temporary = temp_path(self.folder / name)
        try:
            fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except OSError:
            self._fd = None  # no queue here (a read-only or vanished folder): the lock file alone decides
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            os.rename(temporary, self.folder / name)
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            self._fd = None
            return
        self._fd, self._name = fd, name

    def _first(self, deadline: float) -> bool:
        """Whether this waiter's turn has come; otherwise wait (until `deadline`) on the ticket before it."""
        if self._fd is None:
            return True
        if not _same_file(self._fd, self.folder / self._name):  # the queue was removed meanwhile: queue again
            os.close(self._fd)
            self._take_ticket()
            return self._fd is None
        try:
            names = sorted(n for n in os.listdir(self.folder) if not n.startswith("."))
        except OSError:
            return False
        earlier = [n for n in names if n < self._name]
        if not earlier:
            return True
        ahead = self.folder / earlier[-1]
        try:
            fd = os.open(ahead, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False  # it just left: look again
        try:
            if _try_flock(fd, fcntl.LOCK_SH) or _wait_for(fd, deadline, fcntl.LOCK_SH):
                # Its owner left or died; a ticket still there belongs to a process that is gone.
                with contextlib.suppress(OSError):
                    if _same_file(fd, ahead):
                        os.unlink(ahead)
        finally:
            os.close(fd)
        return False


def _try_flock(fd: int, mode: int) -> bool:
    """Take an flock without waiting; False when someone else holds it."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _wait_for(fd: int, deadline: float, mode: int) -> bool:
    """Wait for an flock until `deadline` (in the kernel where possible, else polling briefly)."""
    waited = _wait_in_kernel(fd, deadline, mode)
    if waited is None:
        time.sleep(0.002)
        return _try_flock(fd, mode)
    return waited


class _Expired(Exception):
    """Raised by the alarm handler to end a blocking flock at the deadline."""


def _expire(signum: int, frame: object) -> None:
    raise _Expired


def _wait_in_kernel(fd: int, deadline: float, mode: int = fcntl.LOCK_EX) -> bool | None:
    """Wait for the lock inside flock until `deadline`: True when taken, False at the deadline, None when this
    cannot be done (not the main thread, or the process's interval timer is in use), so the caller polls.

    A waiter blocked in the kernel is woken the moment the lock is released; a poller sleeps between tries
    and, with many writers on a busy machine, can lose every race until its timeout runs out.
    """
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
        return None
    if remaining >= threading.TIMEOUT_MAX:
        fcntl.flock(fd, mode)
        return True
    previous = signal.signal(signal.SIGALRM, _expire)
    taken = False
    try:
        # The alarm fires once; wherever it lands, even after flock returned, it ends here as False. A lock
        # taken all the same is held by this descriptor, so the caller's next non-blocking try gets it.
        signal.setitimer(signal.ITIMER_REAL, remaining)
        fcntl.flock(fd, mode)
        taken = True
        signal.setitimer(signal.ITIMER_REAL, 0)  # disarmed inside the try, so a late alarm is caught below
    except _Expired:
        taken = False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return taken


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open file `fd` is the file now at `path` (not removed, not replaced by another)."""
    try:
        held, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 512, 0).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


def _command() -> str:
    args = [os.path.basename(sys.argv[0]) if sys.argv else "python", *sys.argv[1:3]]
    return " ".join(args)[:80]


def _shown(path: Path) -> str:
    """The lock file as messages show paths: relative to the project folder that holds `.planning/`."""
    try:
        return str(path.relative_to(path.parents[2]))
    except (IndexError, ValueError):
        return str(path)


def _unopenable(path: Path, exc: OSError) -> UsageError:
    """The refusal of a write whose lock file cannot be opened, saying how to put `.local/` right: it holds only
    machine-local things planstate makes again (the lock, caches, heartbeats)."""
    import errno

    local = str(Path(_shown(path)).parent)
    if exc.errno == errno.ENOTDIR:
        how = f"{local} is not a folder; move it away (planstate makes it again)"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        how = f"{local} cannot be written ({exc.strerror}); make it writable, or move it away"
    else:
        how = exc.strerror or type(exc).__name__
    return UsageError(f"cannot take the workspace lock: {how}", file=_shown(path))
