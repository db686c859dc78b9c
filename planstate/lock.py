"""The workspace lock: an flock on .planning/.local/lock, with a timeout that names the holder."""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from planstate.errors import LockTimeout

DEFAULT_TIMEOUT = 10.0


class WorkspaceLock:
    """A re-entrant exclusive lock shared by every planstate process writing one workspace."""

    def __init__(self, path: Path, timeout: float | None = None) -> None:
        self.path = path
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self._fd: int | None = None
        self._depth = 0

    def acquire(self) -> None:
        """Take the lock, waiting up to the timeout; raise LockTimeout naming the holder."""
        if self._depth:
            self._depth += 1
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        deadline = time.monotonic() + self.timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise LockTimeout(
                        f"workspace is locked by {holder or 'another process'}; gave up after "
                        f"{self.timeout:g}s (set --lock-timeout or PLANSTATE_LOCK_TIMEOUT to wait longer)",
                        file=str(self.path),
                    ) from None
                time.sleep(delay)
                delay = min(delay * 1.5, 0.05)
        info = f"pid {os.getpid()} on {os.uname().nodename} ({_command()}) since {time.strftime('%H:%M:%S')}"
        os.ftruncate(fd, 0)
        os.pwrite(fd, info.encode("utf-8", errors="replace"), 0)
        self._fd = fd
        self._depth = 1

    def release(self) -> None:
        """Release the lock (the outermost release unlocks)."""
        self._depth -= 1
        if self._depth or self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> WorkspaceLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 512, 0).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


def _command() -> str:
    args = [os.path.basename(sys.argv[0]) if sys.argv else "python", *sys.argv[1:3]]
    return " ".join(args)[:80]
