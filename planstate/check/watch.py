"""The watcher: re-check the workspace whenever its files change, and report each finding when it appears and when
it clears (or that it is not checked while a file it comes from does not parse).

It watches the project folder that holds `.planning/` (without recursion) and `.planning/`
itself (recursively), so a `.planning/` that is deleted and recreated, or moved away and back,
is picked up again; the folder above the project (without recursion, and only for events about
the project folder itself), so a project folder moved away and back, or deleted and recreated,
is picked up again too; and the folders of the files named in the resume context. Editors save
through temp files, renames and backups, so events are debounced: the check runs once things
have been quiet for a moment. Files under `.planning/.local/` (locks, caches, heartbeats) are
ignored, and so are the watcher's own `--fix` writes. A check reads again only the files that changed;
every `interval` seconds without changes, the findings that depend on the clock (stale sessions) are
looked at again, because a session goes stale without any file changing.
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from planstate.core.errors import PlanstateError, UsageError
from planstate.core.files import is_editor_lock
from planstate.core.layout import HISTORY_FILE, INITIATIVES, LOCAL, STATE_FILE

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver, ObservedWatch

    from planstate.check.findings import Finding
    from planstate.store.context import Context

INTERVAL = 30.0  # seconds between re-checks when nothing changes
DEBOUNCE = 0.05  # seconds of quiet after the last event before checking
MAX_DELAY = 1.0  # a steady stream of events is still checked this often
RESUME_FOLDERS = 64  # at most this many folders of resume-context files are watched
_SUFFIXES = (".md", ".jsonl", ".j2")  # the files whose changes can change a finding
_POLL = 0.2  # seconds between looks at the stop flag while waiting
_SETTLE = 5  # at most this many passes over the watches while folders come and go under them

Emit = Callable[[dict[str, Any]], None]
Key = tuple[str, str, str | None, str]

# The findings that keep a file's other findings from being checked, and what the file needs to be checked again.
UNTIL = {"parse-error": "parses", "schema-error": "is valid", "conflict-marker": "has no conflict markers"}


class Watcher:
    """Watch one workspace and emit `found`, `cleared`, `unchecked`, `fixed`, `ready` and `stopped` events (see
    docs/cli.md)."""

    def __init__(
        self,
        ctx: Context,
        emit: Emit,
        *,
        fix: bool = False,
        stale_after: float,
        interval: float = INTERVAL,
        debounce: float = DEBOUNCE,
    ) -> None:
        self.ctx = ctx
        self.emit = emit
        self.fix = fix
        self.stale_after = stale_after
        self.interval = interval
        self.debounce = debounce
        self.planning = ctx.root
        self.project = ctx.root.parent
        self._chain = frozenset({self.project, *self.project.parents})  # the project folder and those above it
        self.current: dict[Key, Finding] = {}
        # Findings shown and not cleared that cannot be checked now (their file does not parse): found again
        # silently once it parses and they still hold, cleared once it parses and they do not.
        self.held: dict[Key, Finding] = {}
        self._events: queue.Queue[tuple[str, str, str, bool]] = queue.Queue()
        self._watches: dict[str, tuple[ObservedWatch, tuple[int, int] | None]] = {}
        self._resume_files: set[Path] = set()
        self._written: dict[Path, str] = {}  # content hashes of the files the watcher's own fixes wrote
        from planstate.check.checks import Checker

        self.checker = Checker(ctx, stale_after)  # one for the watcher's life: it remembers what it read

    # ------------------------------------------------------------------ the loop

    def run(self, stop: threading.Event) -> None:
        """Watch until `stop` is set: an initial check, then a check after each quiet batch of relevant events, and
        every `interval` seconds without events a look at the findings that depend on the clock."""
        self._watch(stop)

    def _watch(self, stop: threading.Event) -> None:
        """The checks' loop (see `run`)."""
        import warnings

        from watchdog.observers import Observer

        from planstate.check.checks import Checker

        # watchdog warns when a folder created under a recursive watch was already added by its scan: harmless.
        warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
        _quiet_shutdown_race()
        observer = Observer()
        try:
            observer.start()
        except OSError as exc:
            raise UsageError(f"cannot watch files: {exc.strerror or exc}") from None
        try:
            self._reconcile(observer)
            if self.planning.is_dir() and "planning" not in self._watches:
                raise UsageError(
                    f"cannot watch {self.ctx.display(self.planning)}/ (the system's limit of watches reached?)"
                )
            self._cycle(set())
            counts = self._counts()
            self.emit({"event": "ready", "path": str(self.planning), **counts})
            while not stop.is_set():
                batch = self._collect(stop)
                if stop.is_set():
                    break
                if batch is None:
                    self._tick()  # nothing changed: only time moved on
                    continue
                changed = self._relevant(batch)
                if not changed:
                    continue
                # Watch what exists now first, then check: a change made after the check's report is
                # seen by a watch that already exists, and one made before it is read by the check.
                if self._reconcile(observer):
                    # `.planning/` got a new watch: it was gone, or out of sight (its project folder was
                    # moved away), and changes made meanwhile raised no event, so nothing read is trusted.
                    self.checker = Checker(self.ctx, self.stale_after)
                self._cycle(changed)
        finally:
            observer.stop()
            observer.join(timeout=5)
        self.emit({"event": "stopped"})

    def _collect(self, stop: threading.Event) -> list[tuple[str, str, str, bool]] | None:
        """Wait for events, then until they have been quiet for `debounce`; None when `interval` passed first."""
        deadline = time.monotonic() + self.interval
        first = None
        while first is None:
            if stop.is_set():
                return []
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                first = self._events.get(timeout=min(_POLL, left))
            except queue.Empty:
                continue
        batch = [first]
        started = time.monotonic()
        while time.monotonic() - started < MAX_DELAY and not stop.is_set():
            try:
                batch.append(self._events.get(timeout=self.debounce))
            except queue.Empty:
                break
        return batch

    def _relevant(self, batch: list[tuple[str, str, str, bool]]) -> set[Path]:
        """The paths in a batch of events that can change a finding (own writes and `.local/` churn cannot)."""
        paths: set[Path] = set()
        for kind, src, dest, is_dir in batch:
            if kind in ("opened", "closed_no_write") or (kind == "modified" and is_dir):
                continue
            for raw in (src, dest):
                if raw and self._concerns(Path(raw), is_dir):
                    paths.add(Path(raw))
        for path in list(paths):
            written = self._written.get(path)
            if written is not None and written == _content_hash(path):
                paths.discard(path)
                del self._written[path]
        return paths

    def _concerns(self, path: Path, is_dir: bool) -> bool:
        """Tell whether a changed path is a planning file or folder, or a resume-context file."""
        if path == self.planning or path in self._chain:
            return True  # `.planning/`, the project folder or a folder above it came, went or moved
        if path in self._resume_files:
            return True
        try:
            parts = path.relative_to(self.planning).parts
        except ValueError:
            return False
        if not parts or parts[0] == LOCAL:
            return False
        # an editor closing a file lets a fix that waited for it go ahead (see core/files.editor_lock)
        return is_dir or path.name.endswith(_SUFFIXES) or (self.fix and is_editor_lock(path))

    # ------------------------------------------------------------------ checking

    def _cycle(self, changed: set[Path]) -> None:
        """Check (and with --fix, repair and check again), then emit what appeared and what cleared.

        Files named by events are read again; the others only when their stat identity changed.
        """
        try:
            if not self.planning.is_dir():
                findings = [self._gone()]
            else:
                self.checker.reader.forget(changed)
                findings = self.checker.run()
                if self.fix and any(f.fixable for f in findings):
                    findings = self._repair(findings)
        except (PlanstateError, OSError) as exc:
            self.emit({"event": "error", "message": str(exc)})
            return
        self._report(findings)

    def _tick(self) -> None:
        """The timer: re-evaluate the findings that depend on the clock (stale sessions), reading no file."""
        if not self.planning.is_dir():
            return
        try:
            timed = self.checker.timed()
        except (PlanstateError, OSError) as exc:
            self.emit({"event": "error", "message": str(exc)})
            return
        self._report([f for f in self.current.values() if f.code != "stale-session"] + timed)

    def _report(self, findings: list[Finding]) -> None:
        """Emit `cleared` for the findings that are gone, `found` for the new ones, and `unchecked` for those that
        cannot be checked now; remember the new set, and the findings held unchecked."""
        fresh = {f.key: f for f in findings}
        blocked = {f.file: "is back" if f.file.endswith("/") else UNTIL[f.code] for f in findings if f.code in UNTIL}
        held: dict[Key, Finding] = {}
        unchecked: list[dict[str, Any]] = []  # said after what was found: the cause first
        for key, finding in self.held.items():
            if key in fresh:
                continue  # checked again and still so: it was never cleared, so it is not found again
            if self._unchecked_by(finding, blocked) is None:
                self.emit({"event": "cleared", **finding.to_dict()})
            else:
                held[key] = finding
        for key, finding in self.current.items():
            if key in fresh:
                continue
            cause = self._unchecked_by(finding, blocked)
            if cause is None:
                self.emit({"event": "cleared", **finding.to_dict()})
            else:
                held[key] = finding
                reason = f"not checked until {cause} {blocked[cause]}"
                unchecked.append({"event": "unchecked", **finding.to_dict(), "reason": reason})
        for key, finding in fresh.items():
            if key not in self.current and key not in self.held:
                self.emit({"event": "found", **finding.to_dict()})
        for event in unchecked:
            self.emit(event)
        self.held = held
        self.current = fresh

    def _unchecked_by(self, finding: Finding, blocked: dict[str, str]) -> str | None:
        """The file (of `blocked`: shown path, what it lacks) that keeps `finding` from being checked now: its own
        file, the `.planning/` folder while it is gone, or its initiative's STATE.md, from which every rule of the
        initiative reads; None when nothing does."""
        path = Path(finding.file)
        root = Path(self.ctx.display(self.planning))
        for shown in blocked:
            cause = Path(shown)
            if cause == path and finding.code != "parse-error":  # whether a file parses is always checked
                return shown
            if shown.endswith("/") and cause in path.parents:
                return shown
            if cause.name == STATE_FILE and cause.parent in path.parents:
                nested = cause.parent == root and path.relative_to(root).parts[0] == INITIATIVES
                if not nested:  # the first initiative's folder holds the others' folders: not its files
                    return shown
        return None

    def _repair(self, findings: list[Finding]) -> list[Finding]:
        """Apply the safe fixes, remember what the watcher wrote, emit `fixed` events; return the new findings."""
        from planstate.check.fixes import fix

        touched = {p for f in findings if f.fixable and f.initiative is not None for p in _fix_targets(f.initiative)}
        before = {p: _content_hash(p) for p in touched}
        for failure in fix(self.ctx, findings):
            self.emit({"event": "fix-failed", "message": failure})
        for path in touched:
            after = _content_hash(path)
            if after != before[path]:
                self._written[path] = after
        after_findings = self.checker.run()
        remaining = {f.key for f in after_findings}
        for finding in findings:
            if finding.fixable and finding.key not in remaining:
                self.emit({"event": "fixed", **finding.to_dict()})
                self.current.pop(finding.key, None)  # fixed before it was ever shown: no `cleared` for it
        return after_findings

    def _gone(self) -> Finding:
        from planstate.check.findings import Finding

        return Finding(
            "parse-error",
            self.ctx.display(self.planning) + "/",
            None,
            None,
            "the workspace folder is gone (deleted or moved away); watching for it to come back",
            "restore .planning/ (git checkout, or move it back)",
        )

    def _counts(self) -> dict[str, int]:
        errors = sum(1 for f in self.current.values() if f.severity == "error")
        return {"finding_count": len(self.current), "error_count": errors, "warning_count": len(self.current) - errors}

    # ------------------------------------------------------------------ watches

    def _reconcile(self, observer: BaseObserver) -> bool:
        """Schedule the watches the workspace needs now (and drop stale ones), looking again until nothing changes
        under them; return whether `.planning/` got a new watch."""
        renewed = False
        for _ in range(_SETTLE):
            changed, planning = self._schedule(observer)
            renewed = renewed or planning
            if not changed:
                break
        return renewed

    def _schedule(self, observer: BaseObserver) -> tuple[bool, bool]:
        """One pass over the watches; return whether any was added or dropped, and whether `.planning/`'s was
        added."""
        wanted: dict[str, tuple[Path, bool]] = {"project": (self.project, False)}
        above = next((folder for folder in self.project.parents if folder.is_dir()), None)
        if above is not None:
            # Watches follow a folder, not its path: only a watch above the project folder sees it come back.
            wanted[f"above:{above}"] = (above, False)
        if self.planning.is_dir():
            wanted["planning"] = (self.planning, True)
        for folder in self._resume_folders():
            wanted[f"dir:{folder}"] = (folder, False)
        changed = False
        for key in list(self._watches):
            watch, identity = self._watches[key]
            spec = wanted.get(key)
            if spec is None or _identity(spec[0]) != identity:
                observer.unschedule(watch)
                del self._watches[key]
                changed = True
        handler = _Handler(self._events)
        planning = False
        for key, (path, recursive) in wanted.items():
            if key in self._watches:
                continue
            identity = _identity(path)
            if identity is None:
                continue
            # The folder above the project may be busy (a home folder, /tmp): only events naming the
            # project folder or a folder above it are queued, so its churn never delays a check.
            chosen = _Handler(self._events, only=self._chain) if key.startswith("above:") else handler
            try:
                watch = observer.schedule(chosen, str(path), recursive=recursive)
            except OSError:
                continue  # gone between the look and the watch, or not readable; the next cycle tries again
            self._watches[key] = (watch, identity)
            changed = True
            planning = planning or key == "planning"
        return changed, planning

    def _resume_folders(self) -> list[Path]:
        """The existing folders (outside .planning/) of the files named in every initiative's resume context."""
        from planstate.store.initiatives import discover

        self._resume_files = set()
        if not self.planning.is_dir():
            return []
        folders: list[Path] = []
        for initiative in discover(self.planning):
            try:
                data = self.ctx.cached_data(initiative.state_path)
            except PlanstateError:
                continue
            context = data.get("resume_context") if isinstance(data, dict) else None
            items = context.get("files_modified") if isinstance(context, dict) else None
            for item in items if isinstance(items, list) else []:
                if not isinstance(item, str) or not item.strip():
                    continue
                path = Path(item) if Path(item).is_absolute() else self.project / item
                self._resume_files.add(path)
                folder = path.parent
                if folder.is_dir() and folder not in folders and self.planning not in (folder, *folder.parents):
                    folders.append(folder)
        return folders[:RESUME_FOLDERS]


class _Handler(FileSystemEventHandler):
    """Puts each filesystem event on the watcher's queue (as plain strings), from the observer's thread."""

    def __init__(self, events: queue.Queue[tuple[str, str, str, bool]], *, only: frozenset[Path] | None = None) -> None:
        super().__init__()
        self._events = events
        self._only = only  # when given, only events whose source or destination is one of these paths

    def dispatch(self, event: FileSystemEvent) -> None:
        """Queue (type, source path, destination path, is a folder)."""
        import os

        src = os.fsdecode(event.src_path) if event.src_path else ""
        dest = os.fsdecode(event.dest_path) if getattr(event, "dest_path", "") else ""
        kind = str(event.event_type)
        if self._only is not None and (
            (kind == "modified" and event.is_directory)
            or not any(raw and Path(raw) in self._only for raw in (src, dest))
        ):
            return
        self._events.put((kind, src, dest, bool(event.is_directory)))


def _quiet_shutdown_race() -> None:
    """Drop watchdog's log line about an emitter read that raced with stopping it (watchdog 7): nothing is lost,
    since the watcher is stopping, but it would print on stderr where agents expect only real errors."""
    import logging

    logger = logging.getLogger("watchdog.observers.inotify")
    if _shutdown_race_filter not in logger.filters:
        logger.addFilter(_shutdown_race_filter)


def _shutdown_race_filter(record: Any) -> bool:
    """A logging filter: False for watchdog's "called when the thread is inactive" record."""
    return "called when the thread is inactive" not in record.getMessage()


def _identity(path: Path) -> tuple[int, int] | None:
    """A folder's (device, inode), or None when it is not a folder: a recreated folder gets a new watch."""
    try:
        info = path.stat()
    except OSError:
        return None
    import stat

    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _content_hash(path: Path) -> str:
    """A hash of a file's bytes ('' when it cannot be read)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _fix_targets(folder: Path) -> tuple[Path, ...]:
    """The files a fix of an initiative may write."""
    return (folder / STATE_FILE, folder / HISTORY_FILE)
