"""A running `planstate watch` and the lines it prints, for the tests of the watcher."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import planstate_command

TIMEOUT = 120.0  # seconds to wait for an expected line: a guard against a hang; a fast machine needs a fraction of one


class WatchProcess:
    """A running `planstate watch` and the lines it printed."""

    def __init__(self, project: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.json = "--format" not in args or "json" in args
        command = [*planstate_command(), "watch", *(["--json"] if "--format" not in args else []), *args]
        full_env = {**os.environ, "PLANSTATE_ACTOR": "tester", "NO_COLOR": "1", **(env or {})}
        self.proc = subprocess.Popen(
            command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[Any] = []
        self.current: dict[tuple[Any, ...], dict[str, Any]] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def _take(self, deadline: float) -> Any:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out; seen so far: {self.seen}\nstderr: {self._stderr()}")
        try:
            line = self.lines.get(timeout=left)
        except queue.Empty:
            raise AssertionError(f"timed out; seen so far: {self.seen}\nstderr: {self._stderr()}") from None
        event = json.loads(line) if self.json else line
        self.seen.append(event)
        if self.json and event["event"] in ("found", "cleared", "fixed"):
            key = (event["code"], event["path"], event["field"], event["message"])
            if event["event"] == "found":
                self.current[key] = event
            else:
                self.current.pop(key, None)
        return event

    def _stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return "(still running)"
        return self.proc.stderr.read()

    def wait(self, predicate: Callable[[Any], bool], timeout: float = TIMEOUT) -> Any:
        """Read lines until one matches `predicate`; return it."""
        deadline = time.monotonic() + timeout
        while True:
            event = self._take(deadline)
            if predicate(event):
                return event

    def wait_event(self, kind: str, code: str | None = None, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Wait for an event of `kind` (and finding `code`)."""
        return self.wait(lambda e: e["event"] == kind and (code is None or e.get("code") == code), timeout)  # type: ignore[no-any-return]

    def wait_until_current(self, expected: set[tuple[Any, ...]], timeout: float = TIMEOUT) -> None:
        """Read lines until the findings shown (found minus cleared) are exactly `expected`."""
        deadline = time.monotonic() + timeout
        while set(self.current) != expected:
            self._take(deadline)

    def stop(self, sig: int = signal.SIGINT) -> tuple[int, str]:
        """Send a signal and return the exit code and stderr."""
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()
