"""Drift checks: every finding about a workspace, each with a stable code (docs/checks.md), and the safe fixes.

A finding is something a person or an agent should look at: a file that does not parse or
validate, a generated region that is stale or was edited by hand, a derived copy that disagrees
with its source, a reference to a record that does not exist, a stale session... Errors make
`planstate check` exit 1; warnings are shown but only fail with `--strict`. The safe fixes
re-render stale regions, recompute derived copies, point a position that is no phase at the current
phase, repair a history that lags the lifecycle by a move the lifecycle allows, and resolve git
conflicts confined to generated regions.

A check reads each file once (`Reader`), parses its front matter through the front-matter cache,
and shares the bytes and data between the rules. The watcher keeps one `Checker` for its whole
life: files whose stat identity did not change (and that no event named) are not read again,
and its timer re-evaluates only the findings that depend on the clock (`Checker.timed`).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.clock import parse_datetime
from planstate.core.durations import show
from planstate.core.errors import ConflictError, LockTimeout, ParseError, PlanstateError
from planstate.model.kinds import FINISHED, KINDS, RECORD_FOLDERS, phase_numbers, phase_reference, record_reference
from planstate.model.schema import ListOf, Model, Nested, Nullable, Problem

if TYPE_CHECKING:
    from planstate.render.result import FileChange
    from planstate.store.initiatives import Initiative
    from planstate.text.document import Document
    from planstate.workspace import Workspace

ERROR = "error"
WARNING = "warning"
STALE_AFTER = 30 * 60  # seconds without a heartbeat after which an active session is reported stale


@dataclass(frozen=True)
class Code:
    """A finding code: its severity, whether `--fix` repairs it, and what it means."""

    severity: str
    fixable: bool
    summary: str


CODES: dict[str, Code] = {
    "parse-error": Code(ERROR, False, "a planning file cannot be read as markdown with YAML front matter"),
    "schema-error": Code(ERROR, False, "a value does not match the format (docs/format.md)"),
    "unknown-key": Code(WARNING, False, "a key the format does not define (kept, but maybe a typo)"),
    "conflict-marker": Code(ERROR, False, "an unresolved git conflict in a planning file"),
    "stale-region": Code(ERROR, True, "a generated region of STATE.md does not show the current truth"),
    "hand-edit": Code(ERROR, False, "a generated region of STATE.md was edited by hand"),
    "malformed-region": Code(ERROR, False, "region markers that do not form a region"),
    "template-error": Code(ERROR, False, "a region's template cannot be rendered"),
    "derived-mismatch": Code(ERROR, True, "a derived copy (progress, duration) disagrees with its source"),
    "phase-name-mismatch": Code(ERROR, True, "position.phase_name is not the name of the current phase"),
    "phase-out-of-range": Code(ERROR, True, "position.phase is not a phase number"),
    "completion-mismatch": Code(ERROR, False, "the initiative is completed but a phase is not finished"),
    "completion-pending": Code(WARNING, False, "every phase is finished but the initiative is still active"),
    "history-mismatch": Code(ERROR, True, "the last history.jsonl transition does not lead to lifecycle.state"),
    "missing-reference": Code(ERROR, False, "a reference to a phase or record that does not exist"),
    "duplicate-id": Code(ERROR, False, "two records of one kind have the same id"),
    "filename-id-mismatch": Code(ERROR, False, "a file or folder name disagrees with the id inside it"),
    "multiple-active-initiatives": Code(ERROR, False, "more than one initiative is active"),
    "multiple-active-sessions": Code(WARNING, False, "more than one session of an initiative is active"),
    "stale-session": Code(WARNING, False, "an active session whose heartbeat is older than --stale-after"),
    "missing-file": Code(WARNING, False, "a file named in resume_context.files_modified does not exist"),
    "merge-driver-missing": Code(WARNING, False, "merge=planstate applies, but this clone has no merge driver for it"),
    "diff-driver-missing": Code(WARNING, False, "diff=planstate applies, but this clone has no textconv for it"),
}
# Codes `--fix` repairs in general; a finding says for itself when its case is one it cannot repair (a history
# move the lifecycle forbids, a region whose records cannot be read) or can (a conflict only in regions).
FIXABLE = tuple(code for code, info in CODES.items() if info.fixable)
# Error codes that mean the state contradicts itself: the resume brief does not trust a state with these.
CONTRADICTIONS = (
    "completion-mismatch",
    "history-mismatch",
    "phase-out-of-range",
    "phase-name-mismatch",
    "derived-mismatch",
    "multiple-active-initiatives",
)


@dataclass(frozen=True)
class Finding:
    """One finding: code, where (file, line, column, field), what and how to fix it."""

    code: str
    file: str
    line: int | None
    column: int | None
    message: str
    hint: str
    field: str | None = None
    initiative: Path | None = dataclasses.field(default=None, compare=False, repr=False)  # whose fix repairs it
    can_fix: bool | None = dataclasses.field(default=None, compare=False, repr=False)  # overrides the code's
    stable: str | None = dataclasses.field(default=None, compare=False, repr=False)  # identity when the message varies

    @property
    def severity(self) -> str:
        """`error` or `warning`."""
        return CODES[self.code].severity

    @property
    def fixable(self) -> bool:
        """Whether `planstate check --fix` repairs it."""
        return CODES[self.code].fixable if self.can_fix is None else self.can_fix

    @property
    def key(self) -> tuple[str, str, str | None, str]:
        """What identifies a finding across runs: its line may move and a message that says how long ago
        something happened changes while it stays the same finding."""
        return (self.code, self.file, self.field, self.message if self.stable is None else self.stable)

    def location(self) -> str:
        """`file:line:col`, as much as is known."""
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready data."""
        return {
            "code": self.code,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "message": self.message,
            "hint": self.hint,
            "fixable": self.fixable,
        }

    def text(self) -> str:
        """`file:line:col: severity code: message (hint)`."""
        return f"{self.location()}: {self.severity} {self.code}: {self._subject()}{self.message} ({self.hint})"

    def _subject(self) -> str:
        """`field: ` before a message that does not name its field itself."""
        return f"{self.field}: " if self.field and self.field not in self.message else ""

    def github(self, file: str | None = None) -> str:
        """A GitHub Actions workflow command that annotates the file (`file`, when given: the path relative to the
        repository root) and line."""
        props = [f"file={_gh_property(file or self.file)}"]
        if self.line is not None:
            props.append(f"line={self.line}")
            if self.column is not None:
                props.append(f"col={self.column}")
        props.append(f"title={_gh_property(self.code)}")
        return f"::{self.severity} {','.join(props)}::{_gh_data(f'{self._subject()}{self.message} ({self.hint})')}"


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass
class Report:
    """What `check` found: the findings (after fixing, with `fix`), what was fixed and what could not be."""

    files: int
    findings: list[Finding]
    fixed: list[Finding] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    changes: list[FileChange] = field(default_factory=list)  # what --fix changes (or would change)
    fixing: bool = False  # whether fixes were asked for

    @property
    def errors(self) -> list[Finding]:
        """The error findings."""
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        """The warning findings."""
        return [f for f in self.findings if f.severity == WARNING]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        out: dict[str, Any] = {
            "ok": not self.errors,
            "files": self.files,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.fixing:
            out["fixed"] = [f.to_dict() for f in self.fixed]
            out["fix_failures"] = self.failures
        return out


# ---------------------------------------------------------------------------- reading each file once


class FileRead:
    """One planning file as one check read it: its bytes (or why they could not be read), its front matter, and
    what the per-file rules found in it (computed once per content)."""

    __slots__ = (
        "_doc",
        "conflicts",
        "data",
        "entries",
        "error",
        "findings",
        "identity",
        "item",
        "kind",
        "path",
        "problems",
        "raw",
        "read_failed",
        "shown",
        "valid",
    )

    def __init__(self, path: Path, shown: str, kind: str) -> None:
        self.path = path
        self.shown = shown
        self.kind = kind
        self.identity: tuple[int, ...] | None = None  # (device, inode, size, mtime, ctime) of the bytes read
        self.raw: bytes | None = None
        self.error: PlanstateError | None = None  # why it cannot be read or parsed
        self.read_failed = False  # the error happened reading the bytes, not parsing them
        self.conflicts: list[Conflict] = []
        self.data: Any = None
        self.problems: list[Problem] = []  # schema problems
        self.valid = False  # front matter is a mapping without schema problems
        self.findings: list[Finding] | None = None  # the per-file findings, once computed
        self.entries: list[dict[str, Any]] = []  # history.jsonl: its entries
        self.item: dict[str, Any] | None = None  # a valid record as the regions show it
        self._doc: Document | None = None

    @property
    def mapping(self) -> dict[str, Any] | None:
        """The front matter when it is a mapping."""
        return self.data if isinstance(self.data, dict) else None

    def doc(self) -> Document:
        """The parsed document (for locating fields), parsed on first use."""
        if self._doc is None:
            from planstate.text.document import Document

            assert self.raw is not None
            self._doc = Document.from_bytes(self.raw, self.shown)
        return self._doc


class Reader:
    """Reads workspace files for checks: each at most once per check, with safe-path checks done per folder.

    Between checks (the watcher keeps one Reader), a file whose stat identity is unchanged and that no
    event named is not read again.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._memo: dict[Path, FileRead] = {}
        self._listings: dict[Path, tuple[tuple[int, ...], list[Path]]] = {}
        self._seen: set[Path] = set()
        self._folders: dict[Path, bool] = {}
        self._root_real: Path | None = None
        self.reads = 0  # files actually read (for benchmarks)

    def forget(self, paths: Iterable[Path]) -> None:
        """Read these files (and list their folders) again next time, whatever their stat says: change events
        named them."""
        for path in paths:
            self._memo.pop(path, None)
            self._listings.pop(path, None)
            self._listings.pop(path.parent, None)

    def listing(self, folder: Path) -> list[Path]:
        """The record files of a folder; listed again only when the folder's stat identity changed (a file was
        added, removed or renamed) or an event named it."""
        try:
            info = os.stat(folder)
        except OSError:
            self._listings.pop(folder, None)
            return []
        identity = _identity(info)
        known = self._listings.get(folder)
        if known is not None and known[0] == identity:
            return known[1]
        files = record_files(folder)
        self._listings[folder] = (identity, files)
        return files

    def begin(self) -> None:
        """Start a check: folders are looked at afresh (they may have been moved or replaced by links)."""
        self._seen = set()
        self._folders = {}
        self._root_real = None

    def end(self) -> None:
        """End a check: forget the files it did not see (deleted, or no longer part of the workspace)."""
        for path in [p for p in self._memo if p not in self._seen]:
            del self._memo[path]

    def file(self, path: Path, kind: str) -> FileRead:
        """The file at `path` read as `kind` (state, decision, blocker, session, history)."""
        self._seen.add(path)
        memo = self._memo.get(path)
        if memo is not None and memo.kind == kind and memo.identity is not None:
            try:
                info = os.lstat(path)
            except OSError:
                info = None
            if info is not None and stat.S_ISREG(info.st_mode) and _identity(info) == memo.identity:
                return memo
        found = self._read(path, kind)
        self._memo[path] = found
        return found

    def _read(self, path: Path, kind: str) -> FileRead:
        from planstate.core.files import MAX_FILE_BYTES, read_all

        found = FileRead(path, self.ws.display(path), kind)
        self.reads += 1
        if self._inside(path.parent):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    info = os.fstat(fd)
                    if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
                        raw = read_all(fd, MAX_FILE_BYTES)
                        if raw is not None:
                            found.raw, found.identity = raw, _identity(info)
                except OSError:
                    pass
                finally:
                    os.close(fd)
        if found.raw is None:  # a link, a folder, a huge or vanished file: the careful reader says what is wrong
            from planstate.core.files import read_bytes

            try:
                found.raw = read_bytes(path, self.ws.root, self.ws.root.parent)
            except PlanstateError as exc:
                found.error, found.read_failed = exc, True
                return found
        found.conflicts = conflict_blocks(found.raw)
        if kind == "history":
            from planstate.store import history

            found.entries, problems = history.parse(found.raw, found.shown)
            found.problems = []
            found.findings = None
            found.data = problems  # a history's "data" is its line problems
            return found
        try:
            found.data, found._doc = self._front_matter(path, found.raw, found.shown)
        except PlanstateError as exc:
            found.error = exc
            return found
        from planstate.model.validation import problems_for

        found.problems = problems_for(kind, found.data)
        found.valid = isinstance(found.data, dict) and not found.problems
        return found

    def _front_matter(self, path: Path, raw: bytes, shown: str) -> tuple[Any, Document | None]:
        """The front matter of a file's bytes, through the workspace's front-matter cache, and the document when
        it had to be parsed."""
        ws = self.ws

        def parse(data: bytes) -> Any:
            from planstate.text.document import Document

            doc = Document.from_bytes(data, shown)
            if not doc.has_front_matter:
                raise PlanstateError("has no front matter (it must start with a '---' line)", file=shown, line=1)
            parsed.append(doc)  # kept for locating findings: parsing costs more than anything else here
            return doc.data

        parsed: list[Document] = []
        data = ws.cached_parse(path, raw, parse)
        return data, (parsed[0] if parsed else None)

    def _inside(self, folder: Path) -> bool:
        """Tell whether a folder is inside the workspace once links are followed (looked at once per check)."""
        known = self._folders.get(folder)
        if known is None:
            try:
                if self._root_real is None:
                    self._root_real = self.ws.root.resolve()
                real = folder.resolve()
                known = real == self._root_real or self._root_real in real.parents
            except (OSError, RuntimeError):
                known = False
            self._folders[folder] = known
        return known


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def record_files(folder: Path) -> list[Path]:
    """The record files of a folder, sorted by name (as records.files, without a stat per plain file)."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                entry.name
                for entry in entries
                if entry.name.endswith(".md") and not entry.name.startswith(".") and entry.is_file()
            )
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / name for name in names]


# ---------------------------------------------------------------------------- running the checks


def run(ws: Workspace, *, stale_after: float = STALE_AFTER, now: datetime | None = None) -> tuple[int, list[Finding]]:
    """Check every file of the workspace; return how many files were checked and the findings, sorted."""
    checker = Checker(ws, stale_after)
    findings = checker.run(now)
    return checker.files, findings


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in report order: by file, line, column, code and message."""
    return sorted(findings, key=lambda f: (f.file, f.line or 0, f.column or 0, f.code, f.message))


class ActiveSession:
    """An active session seen by the last check: what the clock-driven rule needs to look at it again."""

    __slots__ = ("id", "read", "started")

    def __init__(self, read: FileRead, record_id: str, started: datetime | None) -> None:
        self.read = read
        self.id = record_id
        self.started = started


class Checker:
    """Runs the checks over a workspace; keep one to check again cheaply (the watcher does)."""

    def __init__(
        self,
        ws: Workspace,
        stale_after: float,
        reader: Reader | None = None,
        *,
        regions: bool = True,
        resume_files: bool = True,
        drivers: bool = True,
    ) -> None:
        self.ws = ws
        self.stale_after = stale_after
        self.reader = reader or Reader(ws)
        self.check_regions = regions  # the resume brief needs neither regions nor the resume files checked
        self.check_resume_files = resume_files
        self.check_drivers = drivers  # whether git's attributes name drivers this clone lacks (two git calls at most)
        self.now: datetime | None = None
        self.findings: list[Finding] = []
        self.files = 0
        self.active: list[ActiveSession] = []  # active sessions seen by the last run
        self.reads: dict[Path, FileRead] = {}  # every file the last run read, by path

    def run(self, now: datetime | None = None, *, only: Initiative | None = None) -> list[Finding]:
        """Check every file of the workspace (or of the initiative `only`, and the workspace-wide rules); return
        the findings, sorted."""
        from planstate.core.clock import now as clock_now
        from planstate.store.initiatives import discover

        self.now = now or clock_now()
        self.findings = []
        self.files = 0
        self.active = []
        self.reads = {}
        self.reader.begin()
        initiatives = discover(self.ws.root)
        for initiative in initiatives:
            if only is None or initiative.dir == only.dir:
                self.initiative(initiative)
        if len(initiatives) > 1:  # with one initiative, neither workspace rule can be broken
            self.workspace_rules()
        if self.check_drivers:
            self.drivers()
        self.reader.end()
        if self.ws.root.is_dir():  # saving the cache makes its folders: never bring back a .planning/ deleted meanwhile
            self.ws.save_cache()
        return ordered(self.findings)

    def timed(self, now: datetime | None = None) -> list[Finding]:
        """The findings that depend on the clock (stale sessions) as of `now`, for the sessions the last run saw
        active; nothing is read but the heartbeat files' times."""
        from planstate.core.clock import now as clock_now

        self.now = now or clock_now()
        out = [f for f in (self._stale(session) for session in self.active) if f is not None]
        return ordered(out)

    def add(
        self,
        code: str,
        file: str,
        line: int | None,
        message: str,
        hint: str,
        *,
        column: int | None = None,
        field: str | None = None,
        initiative: Initiative | None = None,
        can_fix: bool | None = None,
        stable: str | None = None,
        into: list[Finding] | None = None,
    ) -> None:
        """Record a finding (in `into`, when given, instead of this run's findings)."""
        where = initiative.dir if initiative is not None else None
        found = Finding(code, file, line, column, message, hint, field, where, can_fix, stable)
        (self.findings if into is None else into).append(found)

    def add_error(self, code: str, error: PlanstateError, hint: str, into: list[Finding] | None = None) -> None:
        """Record a finding from a PlanstateError (its file, line, column and field)."""
        self.add(
            code, error.file or "", error.line, error.message, hint, column=error.column, field=error.field, into=into
        )

    # ------------------------------------------------------------------ one file

    def file(self, path: Path, kind: str) -> FileRead:
        """Read one file (once per run) and add its own findings: reading, parsing, conflicts, schema, keys."""
        found = self.reader.file(path, kind)
        self.reads[path] = found
        self.files += 1
        if found.findings is None:
            found.findings = self._file_findings(found)
        self.findings.extend(found.findings)
        return found

    def _file_findings(self, found: FileRead) -> list[Finding]:
        """What is wrong with a file on its own; depends only on its bytes, so it is computed once per content."""
        out: list[Finding] = []
        if found.read_failed and found.error is not None:
            self.add_error("parse-error", found.error, _read_hint(found), into=out)
            return out
        for conflict in found.conflicts:
            self._conflict(found, conflict, out)
        if found.kind == "history":
            if not found.conflicts:
                for problem in found.data or []:
                    code = "parse-error" if isinstance(problem, ParseError) else "schema-error"
                    self.add_error(code, problem, "fix or remove that line; lines are only ever appended", into=out)
            return out
        if found.error is not None:
            if not found.conflicts:  # the conflict is the cause; its finding says what to do
                hint = "fix the YAML at that line; docs/format.md describes the file"
                self.add_error("parse-error", found.error, hint, into=out)
            return out
        if found.problems:
            from planstate.model.validation import located

            for error in located(found.doc(), found.problems):
                if found.kind == "state" and error.field == "position.phase" and _out_of_range(found.data):
                    target = _position_target(found.data)
                    hint = f"`planstate check --fix` points it at phase {target}, the current phase"
                    where = found.path.parent  # the initiative folder, whose fix repairs it
                    shown = error.file or found.shown
                    args = (shown, error.line, error.column, error.message, hint, error.field, where)
                    out.append(Finding("phase-out-of-range", *args))
                else:
                    hint = f"correct the value; `planstate schema {found.kind}` lists the fields"
                    self.add_error("schema-error", error, hint, into=out)
        if found.mapping is not None:
            for segments in unknown_keys(KINDS[found.kind], found.data):
                line, column = found.doc().locate(list(segments))
                name = ".".join(str(s) for s in segments)
                self.add(
                    "unknown-key",
                    found.shown,
                    line,
                    f"{name} is not a field of the format; planstate keeps it",
                    f"check the spelling against `planstate schema {found.kind}`; remove it if it is a typo",
                    column=column,
                    field=name,
                    into=out,
                )
        return out

    def _conflict(self, found: FileRead, conflict: Conflict, out: list[Finding]) -> None:
        """A git conflict block: in STATE.md, fixable when every conflict of the file lies inside regions; one that
        planstate's merge driver wrote about a field says which, and how to settle it."""
        first, last, name = conflict
        confined = False
        if found.kind == "state" and found.raw is not None and name is None:
            from planstate.render.regions import resolve_region_conflicts

            confined = resolve_region_conflicts(found.raw) is not None
        if name is not None:
            message = f"unresolved merge conflict on {name} (lines {first}-{last}): both sides changed it differently"
            # STATE.md's regions show the field: rendering them from the value kept is the safe fix that follows
            then = "`planstate check`"
            if found.kind == "state":
                then = "`planstate check --fix` (it renders the regions again)"
            hint = f"keep one side's lines for {name}, delete the three marker lines, run {then}, then "
            hint += f"`git add {found.shown}`"
        elif confined:
            message = f"unresolved git conflict (lines {first}-{last}), only inside generated regions"
            hint = "run `planstate check --fix` (or `planstate render`): the regions are rendered again from the "
            hint += "merged files"
        else:
            message = f"unresolved git conflict (lines {first}-{last})"
            hint = "keep the right side, delete the <<<<<<<, ======= and >>>>>>> lines, then run `planstate check`"
        out.append(
            Finding(
                "conflict-marker",
                found.shown,
                first,
                None,
                message,
                hint,
                field=name,
                initiative=found.path.parent if confined else None,
                can_fix=True if confined else None,
            )
        )

    # ------------------------------------------------------------------ one initiative

    def initiative(self, initiative: Initiative) -> None:
        """Check an initiative: its STATE.md, its records, its history and how they refer to each other."""
        state = self.file(initiative.state_path, "state")
        data = state.mapping if state.valid else None
        records: dict[str, list[FileRead]] = {}
        for kind in RECORD_FOLDERS:
            records[kind] = [self.file(path, kind) for path in self.reader.listing(initiative.folder(kind))]
        self.history(initiative, data)
        usable = {kind: [r for r in items if r.mapping is not None] for kind, items in records.items()}
        self.references(initiative, usable, data)
        self.sessions(usable["session"])
        if data is not None:
            self.derived(initiative, state, data)
            if self.check_resume_files:
                self.resume_files(state, data)
            if self.check_regions and not state.conflicts:  # a conflicted body has its own finding (and fix)
                self.regions(initiative, state, data, records)

    def derived(self, initiative: Initiative, state: FileRead, data: dict[str, Any]) -> None:
        """Derived copies (progress, durations, phase name) that disagree with what the phases say; completion."""
        from planstate.model.derived import recompute
        from planstate.model.kinds import State
        from planstate.text.paths import get_in

        expected = copy.deepcopy(data)
        recompute(State(expected))
        paths: list[list[Any]] = [["progress", k] for k in ("phases_total", "phases_completed", "percent", "bar")]
        paths += [["phases", i, "duration_seconds"] for i in range(len(data.get("phases") or []))]
        paths.append(["position", "phase_name"])
        first = phase_numbers(State(data)).start
        for segments in paths:
            found, value = get_in(data, segments)
            _, want = get_in(expected, segments)
            if not found or value == want:
                continue
            name = ".".join(str(s) for s in segments)
            line, column = state.doc().locate(segments)
            code = "phase-name-mismatch" if name == "position.phase_name" else "derived-mismatch"
            source = "the current phase is named" if code == "phase-name-mismatch" else "the phases make it"
            which = f" (phase {first + segments[1]})" if segments[0] == "phases" else ""
            self.add(
                code,
                state.shown,
                line,
                f"{name}{which} is {_show(value)} but {source} {_show(want)}",
                "run `planstate check --fix`; derived values are recomputed on every write, never set them",
                column=column,
                field=name,
                initiative=initiative,
            )
        phases = [p for p in data.get("phases") or [] if isinstance(p, dict)]
        lifecycle_state = (data.get("lifecycle") or {}).get("state")
        unfinished = [p.get("name") for p in phases if p.get("status") not in FINISHED]
        if lifecycle_state == "completed" and unfinished:
            line, column = state.doc().locate(["lifecycle", "state"])
            self.add(
                "completion-mismatch",
                state.shown,
                line,
                f"lifecycle.state is completed but {len(unfinished)} phase{'s are' if len(unfinished) > 1 else ' is'} "
                f"not finished: {', '.join(str(n) for n in unfinished)}",
                "finish or skip those phases, or `planstate reopen` the initiative",
                column=column,
                field="lifecycle.state",
            )
        elif lifecycle_state == "active" and phases and not unfinished:
            line, column = state.doc().locate(["lifecycle", "state"])
            self.add(
                "completion-pending",
                state.shown,
                line,
                "every phase is completed or skipped but lifecycle.state is still active",
                "complete the initiative with `planstate complete`, or add the work that remains as a phase",
                column=column,
                field="lifecycle.state",
            )

    def history(self, initiative: Initiative, data: dict[str, Any] | None) -> None:
        """history.jsonl: lines that do not parse, and a last transition that does not lead to lifecycle.state."""
        path = initiative.history_path
        entries: list[dict[str, Any]] = []
        shown = self.ws.display(path)
        if path.exists():
            found = self.file(path, "history")
            if found.read_failed or found.conflicts:
                return
            entries = found.entries
        if data is None:
            return
        target = data["lifecycle"]["state"]
        last = entries[-1] if entries else None
        source = last.get("to") if last is not None else None
        if last is not None and source == target:
            return
        if last is None:
            message = f"has no transitions; the last one should lead to {target!r}"
        else:
            message = f"the last transition leads to {source!r} but lifecycle.state is {target!r}"
        if repair_allowed(source, target, data):
            hint = "run `planstate check --fix` to append a `repair` transition, or correct lifecycle.state"
            fixable = True
        else:
            message += f"; the lifecycle allows no move from {source or 'nothing'} to {target}"
            if target == "completed" and source is not None:
                message += " while phases are unfinished"
            hint = (
                "correct lifecycle.state by hand (or restore STATE.md from git), then make the move with its "
                "command (docs/lifecycle.md lists them)"
            )
            fixable = False
        self.add(
            "history-mismatch",
            shown,
            last.get("_line") if last is not None else None,
            message,
            hint,
            initiative=initiative,
            can_fix=None if fixable else False,
        )

    def references(
        self,
        initiative: Initiative,
        records: dict[str, list[FileRead]],
        state: dict[str, Any] | None,
    ) -> None:
        """Duplicate ids, file names that disagree with their ids, and references to missing phases or records."""
        ids: dict[str, dict[str, Path]] = {kind: {} for kind in records}
        for kind, items in records.items():
            for found in items:
                record_id = found.data.get("id")
                if not isinstance(record_id, str):
                    continue
                path = found.path
                first = ids[kind].get(record_id)
                if first is not None:
                    self.locate_add(
                        "duplicate-id",
                        found,
                        ["id"],
                        f"id {record_id} is also the id of {self.ws.display(first)}",
                        "give one of them a new id and rename its file to start with it",
                    )
                else:
                    ids[kind][record_id] = path
                if not (path.name == f"{record_id}.md" or path.name.startswith(f"{record_id}-")):
                    self.locate_add(
                        "filename-id-mismatch",
                        found,
                        ["id"],
                        f"the file name {path.name} does not start with its id {record_id}",
                        f"rename the file to start with '{record_id}-' (`git mv`), or correct the id",
                    )
        every_id = {record_id for by_kind in ids.values() for record_id in by_kind}
        numbers = phase_numbers(_state_model(state)) if state is not None else None
        for found in records["decision"]:
            data = found.data
            for key in ("supersedes", "superseded_by"):
                target = data.get(key)
                if isinstance(target, str) and target not in ids["decision"]:
                    self.locate_add(
                        "missing-reference",
                        found,
                        [key],
                        f"{key} names decision {target}, which does not exist in {_folder(self.ws, initiative)}",
                        "correct the id; commands accept a unique prefix, and `planstate decision list` shows them",
                    )
            number = data.get("phase")
            real = isinstance(number, int) and not isinstance(number, bool)
            if real and numbers is not None and number not in numbers:
                self.locate_add(
                    "missing-reference",
                    found,
                    ["phase"],
                    f"phase names phase {number}, but phases are numbered {_range(numbers)}",
                    "correct the phase number, or set it to null",
                )
        for found in records["session"]:
            target = found.data.get("resumed_from")
            if isinstance(target, str) and target not in ids["session"]:
                self.locate_add(
                    "missing-reference",
                    found,
                    ["resumed_from"],
                    f"resumed_from names session {target}, which does not exist",
                    "correct the id, or set it to null",
                )
        for found in records["blocker"]:
            affects = found.data.get("affects")
            if not isinstance(affects, list):
                continue
            for index, item in enumerate(affects):
                if not isinstance(item, str):
                    continue
                phase = phase_reference(item)
                if phase is not None and numbers is not None and phase not in numbers:
                    self.locate_add(
                        "missing-reference",
                        found,
                        ["affects", index],
                        f"affects names phase {phase}, but phases are numbered {_range(numbers)}",
                        "correct the phase number",
                    )
                record_id = record_reference(item)
                if record_id is not None and record_id not in every_id:
                    self.locate_add(
                        "missing-reference",
                        found,
                        ["affects", index],
                        f"affects names record {record_id}, which does not exist in this initiative",
                        "correct the id or remove the item",
                    )

    def sessions(self, items: list[FileRead]) -> None:
        """More than one active session; active sessions whose heartbeat is older than `stale_after`."""
        active = [found for found in items if found.data.get("status") == "active"]
        for found in active[1:]:
            others = ", ".join(str(other.data.get("id")) for other in active if other is not found)
            self.locate_add(
                "multiple-active-sessions",
                found,
                ["status"],
                f"is active, and so is {others}",
                f"end a session that is over with `planstate session end --session {found.data.get('id')}`; "
                "parallel agents may each have one",
            )
        for found in active:
            record_id = found.data.get("id")
            if not isinstance(record_id, str):
                continue
            session = ActiveSession(found, record_id, parse_datetime(found.data.get("started")))
            self.active.append(session)
            stale = self._stale(session)
            if stale is not None:
                self.findings.append(stale)

    def _stale(self, session: ActiveSession) -> Finding | None:
        """The stale-session finding of an active session as of `self.now`, if it is stale."""
        assert self.now is not None
        beat = self.ws.root / ".local" / "heartbeats" / session.id
        try:
            last = datetime.fromtimestamp(beat.stat().st_mtime, tz=self.now.tzinfo)
            source = "its last heartbeat"
        except OSError:
            if session.started is None:
                return None
            last, source = session.started, "its start; there is no heartbeat on this machine"
        age = (self.now - last).total_seconds()
        if age <= self.stale_after:
            return None
        line, column = session.read.doc().locate(["status"])
        return Finding(
            "stale-session",
            session.read.shown,
            line,
            column,
            f"is active, but its last sign of life was {show(age)} ago ({source})",
            f"if its agent is gone, `planstate session end --session {session.id}` ends it, or "
            "`planstate session reap` marks every stale session crashed",
            "status",
            stable="stale",  # the age in the message grows by the minute; it stays one finding
        )

    def resume_files(self, state: FileRead, data: dict[str, Any]) -> None:
        """Files named in resume_context.files_modified that do not exist (relative to the project folder)."""
        context = data.get("resume_context")
        items = context.get("files_modified") if isinstance(context, dict) else None
        if not isinstance(items, list):
            return
        project = self.ws.root.parent
        for index, item in enumerate(items):
            if not isinstance(item, str) or not item.strip():
                continue
            target = Path(item)
            if not target.is_absolute():
                target = project / target
            if not target.exists():
                line, column = state.doc().locate(["resume_context", "files_modified", index])
                self.add(
                    "missing-file",
                    state.shown,
                    line,
                    f"{item} does not exist (paths are relative to the folder that holds .planning/)",
                    "verify the resume context: correct the path or `planstate unset resume_context.files_modified."
                    f"{index}`",
                    column=column,
                    field=f"resume_context.files_modified.{index}",
                )

    def regions(
        self, initiative: Initiative, state: FileRead, data: dict[str, Any], records: dict[str, list[FileRead]]
    ) -> None:
        """Generated regions: malformed markers, hand edits, template errors, and stale regions."""
        from planstate.render import regions
        from planstate.render.sources import Sources, invalid_record, region_item, unusable

        assert state.raw is not None
        body, body_line = regions.split_body(state.raw)
        if not regions.has_markers(body):
            return

        def loader(kind: str) -> tuple[list[dict[str, Any]], list[str]]:
            items: list[dict[str, Any]] = []
            failures: list[str] = []
            for found in records[kind]:
                if found.error is not None:
                    failures.append(unusable(found.shown, found.error))
                elif not found.valid:
                    problem = found.problems[0] if found.problems else Problem((), "front matter is not a mapping")
                    failures.append(invalid_record(found.shown, problem))
                else:
                    if found.item is None:
                        found.item = region_item(kind, found.path, found.data)
                    items.append(found.item)
            return items, failures

        result = regions.plan(Sources(data, self.ws, initiative, loader=loader), body, body_line)
        file = state.shown
        for line, message in result.troubles:
            self.add(
                "malformed-region",
                file,
                line,
                message,
                "fix or delete the marker lines; planstate leaves the text around them alone until then",
            )
        for outcome in result.outcomes:
            field_name = f"region {outcome.name}"
            if outcome.status == "hand-edit":
                self.add(
                    "hand-edit",
                    file,
                    outcome.line,
                    f"region {outcome.name} was edited by hand; planstate keeps it until you decide",
                    "move your text outside the markers, then run `planstate render --force`",
                    field=field_name,
                )
            elif outcome.status == "rendered":
                self.add(
                    "stale-region",
                    file,
                    outcome.line,
                    f"region {outcome.name} {outcome.message or 'does not show the current state'}",
                    "run `planstate render` or `planstate check --fix`",
                    field=field_name,
                    initiative=initiative,
                )
            elif outcome.status == "blocked":
                self.add(
                    "stale-region",
                    file,
                    outcome.line,
                    f"region {outcome.name} may not show the current state and {outcome.message}",
                    "fix that record file (its own finding says how), then run `planstate render`",
                    field=field_name,
                    can_fix=False,
                )
            elif outcome.status == "template-error":
                reason = outcome.message.removeprefix("template error: ")
                self.add(
                    "template-error",
                    outcome.template or file,
                    outcome.template_line,
                    f"region {outcome.name} of {file} cannot be rendered: {reason}",
                    "fix your override in .planning/templates/regions/, or delete it to use the built-in template",
                    field=field_name,
                )

    def locate_add(self, code: str, found: FileRead, segments: list[Any], message: str, hint: str) -> None:
        """Record a finding about a field of a record file, located at that field's line."""
        line, column = found.doc().locate(segments)
        name = ".".join(str(s) for s in segments)
        self.add(code, found.shown, line, message, hint, column=column, field=name)

    # ------------------------------------------------------------------ the whole workspace

    def workspace_rules(self) -> None:
        """At most one active initiative; each initiative's folder name matches its id (from `validate`)."""
        several_active = False
        for error in self.ws._initiative_problems():
            if error.field == "lifecycle.state":
                several_active = True
                self.add_error(
                    "multiple-active-initiatives",
                    error,
                    "keep one active; `planstate initiative switch SLUG` pauses the others",
                )
            else:
                self.add_error(
                    "filename-id-mismatch",
                    error,
                    "rename the folder to the initiative's id, or correct the id",
                )
        if several_active:
            self.findings = [self._no_second_active(f) for f in self.findings]

    def drivers(self) -> None:
        """`merge=planstate` or `diff=planstate` on planning files while this clone's git config defines no such
        driver: git silently merges them as text (or diffs their raw text). Silent outside a git work tree."""
        from planstate.vcs.gitsetup import attribute_line, unconfigured

        root = self.ws.root
        names = sorted(str(path.relative_to(root)) for path in self.reads if root in path.parents)
        said = {
            "merge": ("merge.planstate.driver", "git silently merges {} as plain text"),
            "diff": ("diff.planstate.textconv", "`git diff` shows {} raw text"),
        }
        for attribute, files in unconfigured(root, names).items():
            key, effect = said[attribute]
            one = len(files) == 1
            effect = effect.format(("it" if one else "them") if attribute == "merge" else ("its" if one else "their"))
            where = attribute_line(root, attribute)
            file, line = (os.path.relpath(where[0], root.parent), where[1]) if where else (self.ws.display(root), None)
            count = f"{len(files)} planning file{'s' if len(files) != 1 else ''}"
            self.add(
                f"{attribute}-driver-missing",
                file,
                line,
                f"{attribute}=planstate applies to {count}, but this clone's git config has no {key}: {effect}",
                "run `planstate git install`; git config is per clone, so once in every clone",
                stable=f"{attribute}=planstate",
            )

    def _no_second_active(self, finding: Finding) -> Finding:
        """A history repair that would record a move to `active` while another initiative is active is not
        fixable: `resume --activate` would refuse that move, and so does `check --fix`."""
        if finding.code != "history-mismatch" or not finding.fixable or finding.initiative is None:
            return finding
        from planstate.store.initiatives import STATE_FILE

        found = self.reads.get(finding.initiative / STATE_FILE)
        data = found.mapping if found is not None else None
        if not isinstance(data, dict) or data.get("lifecycle", {}).get("state") != "active":
            return finding
        hint = "another initiative is active too: keep one active first, with `planstate initiative switch SLUG`"
        return dataclasses.replace(finding, hint=hint, can_fix=False)


# ---------------------------------------------------------------------------- helpers


def _read_hint(found: FileRead) -> str:
    """How to fix a file that cannot be read."""
    if found.kind == "state" and found.error is not None and "not found" in found.error.message:
        return "restore it (`git checkout -- FILE`), or run `planstate init` to start a new workspace"
    return "make it a readable regular file inside .planning/, or remove it"


def repair_allowed(source: Any, target: Any, data: dict[str, Any]) -> bool:
    """Whether `check --fix` may append a `repair` history line from `source` (the history's last state; None
    when it has none) to `target` (lifecycle.state): a move the lifecycle table allows, under the same rules
    as its command (completing needs every phase finished); from nothing, only to `active`, as `init` does."""
    from planstate.ops.lifecycle import TABLE

    if source == target:
        return False
    if source is None:
        return bool(target == "active")
    if not any(t.source == source and t.target == target for t in TABLE):
        return False
    if target == "completed":
        phases = [p for p in data.get("phases") or [] if isinstance(p, dict)]
        return all(p.get("status") in FINISHED for p in phases)
    return True


class Conflict(NamedTuple):
    """One git conflict block of a file: its first and last lines, and the field it is about when planstate's merge
    driver wrote it (the field's path follows the label on both the `<<<<<<<` and the `>>>>>>>` line)."""

    first: int
    last: int
    field: str | None


def conflict_blocks(raw: bytes) -> list[Conflict]:
    """The git conflict blocks of a file: `<<<<<<<` … `=======` … `>>>>>>>` at line starts."""
    if b"<<<<<<<" not in raw:
        return []
    blocks: list[Conflict] = []
    start: int | None = None
    opening = b""
    middle = False
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if re.match(rb"<<<<<<<(?: |\r?$)", line):
            start, opening, middle = number, line, False
        elif start is not None and re.match(rb"=======\r?$", line):
            middle = True
        elif start is not None and middle and re.match(rb">>>>>>>(?: |\r?$)", line):
            blocks.append(Conflict(start, number, marked_field(opening, line)))
            start, middle = None, False
    return blocks


def marked_field(opening: bytes, closing: bytes) -> str | None:
    """The field a conflict is about, from its marker lines: planstate's merge driver writes `<<<<<<< LABEL: PATH`
    and `>>>>>>> LABEL: PATH` (docs/git.md); None for git's own markers (`<<<<<<< HEAD`), whose labels do not end in
    the same `: PATH`. The longest such path wins, so a label that holds `: ` itself does no harm."""
    ours = opening[8:].decode("utf-8", errors="replace").rstrip("\r")
    theirs = closing[8:].decode("utf-8", errors="replace").rstrip("\r")
    at = ours.find(": ")
    while at != -1:
        path = ours[at + 2 :]
        if path and path == path.strip() and theirs.endswith(": " + path):
            return path
        at = ours.find(": ", at + 1)
    return None


def unknown_keys(model: type[Model], data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of keys in `data` that `model` (and its nested models) do not declare."""
    out: list[tuple[Any, ...]] = []
    if not isinstance(data, dict):
        return out
    for key, value in data.items():
        declared = model.fields.get(str(key))
        if declared is None:
            out.append((*path, key))
            continue
        kind: Any = declared.kind
        while isinstance(kind, Nullable):
            kind = kind.inner
        if isinstance(kind, Nested):
            out.extend(unknown_keys(kind.model, value, (*path, key)))
        elif isinstance(kind, ListOf) and isinstance(kind.item, Nested) and isinstance(value, list):
            for index, item in enumerate(value):
                out.extend(unknown_keys(kind.item.model, item, (*path, key, index)))
    return out


def _out_of_range(data: Any) -> bool:
    """Tell whether position.phase is an integer outside the phase numbers."""
    position = data.get("position") if isinstance(data, dict) else None
    number = position.get("phase") if isinstance(position, dict) else None
    if not isinstance(number, int) or isinstance(number, bool):
        return False
    try:
        return number not in phase_numbers(_state_model(data))
    except (TypeError, ValueError):
        return False


def _position_target(data: dict[str, Any]) -> int:
    """The phase an out-of-range position belongs on: the active phase, else the first unfinished one, else the
    last (where completing the last phase leaves it)."""
    numbers = phase_numbers(_state_model(data))
    statuses = [p.get("status") if isinstance(p, dict) else None for p in data.get("phases") or []]
    numbered = list(zip(numbers, statuses, strict=False))
    active = [n for n, status in numbered if status == "active"]
    unfinished = [n for n, status in numbered if status not in FINISHED]
    return (active or unfinished or [numbers[-1] if numbers else numbers.start])[0]


def _state_model(data: dict[str, Any]) -> Any:
    from planstate.model.kinds import State

    return State(data)


def _range(numbers: range) -> str:
    return f"{numbers.start} to {numbers.stop - 1}" if len(numbers) else "(there are no phases)"


def _folder(ws: Workspace, initiative: Initiative) -> str:
    return ws.display(initiative.folder("decision")) + "/"


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


# ---------------------------------------------------------------------------- fixing


def _fixable(findings: Iterable[Finding]) -> dict[Path, set[str]]:
    """The initiatives (by folder) with fixable findings, and the codes to fix in each."""
    out: dict[Path, set[str]] = {}
    for finding in findings:
        if finding.fixable and finding.initiative is not None:
            out.setdefault(finding.initiative, set()).add(finding.code)
    return out


def _initiative_at(ws: Workspace, folder: Path) -> Initiative:
    from planstate.store.initiatives import discover

    for initiative in discover(ws.root):
        if initiative.dir == folder:
            return initiative
    raise PlanstateError(f"initiative folder {ws.display(folder)} is gone")


def preview(ws: Workspace, findings: list[Finding]) -> list[FileChange]:
    """What `fix` would change, file by file (nothing is written)."""
    from planstate.core.clock import now
    from planstate.model.derived import recompute
    from planstate.model.kinds import State
    from planstate.render import regions
    from planstate.render.result import FileChange
    from planstate.store import history
    from planstate.text.document import Document

    changes: list[FileChange] = []
    for folder, codes in _fixable(findings).items():
        initiative = _initiative_at(ws, folder)
        path = initiative.state_path
        before = path.read_bytes()
        text, touched = before, set[str]()
        if "conflict-marker" in codes:
            resolved = regions.resolve_region_conflicts(before)
            if resolved is not None:
                text, touched = resolved
        doc = Document.from_bytes(text, ws.display(path))
        data = doc.data
        if codes & {"derived-mismatch", "phase-name-mismatch", "phase-out-of-range"}:
            if "phase-out-of-range" in codes:
                data["position"]["phase"] = _position_target(data)
            recompute(State(data))
            if data != doc.data:
                data["updated"] = now()
                doc.update(data)
        regions.refresh(ws, doc, initiative, force=touched, warn=False)
        after = doc.to_bytes()
        if after != before:
            changes.append(FileChange(path, ws.display(path), before, after))
        if "history-mismatch" in codes:
            log = initiative.history_path
            old = log.read_bytes() if log.exists() else b""
            entries = history.parse(old, ws.display(log))[0]
            source = entries[-1].get("to") if entries else None
            target = data["lifecycle"]["state"]
            if repair_allowed(source, target, data):
                when = repair_time(entries, now())
                item = history.entry(when, source, target, "repair", REPAIR_REASON, ws.actor)
                new = (old if not old or old.endswith(b"\n") else old + b"\n") + history.line(item).encode("utf-8")
                changes.append(FileChange(log, ws.display(log), old, new))
    return changes


REPAIR_REASON = "history.jsonl lagged lifecycle.state (planstate check --fix)"


def repair_time(entries: list[dict[str, Any]], current: datetime) -> datetime:
    """When a repair line happens: now, or the last line's time when that is later (another machine's clock ran
    ahead), so the repair sorts last as readers order lines by time."""
    last = parse_datetime(entries[-1].get("at")) if entries else None
    return last if last is not None and last > current else current


def fix(ws: Workspace, findings: list[Finding]) -> list[str]:
    """Apply the safe fixes for `findings` through transactions; return the errors of fixes that failed.

    Writes made here do not warn about regions they leave unrendered: the check that follows reports them.
    """
    from planstate.core.clock import now
    from planstate.model.derived import recompute
    from planstate.render import regions
    from planstate.store import history

    failures: list[str] = []
    with regions.quiet():
        for folder, codes in _fixable(findings).items():
            try:
                initiative = _initiative_at(ws, folder)
                if "conflict-marker" in codes:
                    ws.render_initiative(initiative)  # resolve the conflict first: the data fixes need a clean file
                if codes & {"derived-mismatch", "phase-name-mismatch", "phase-out-of-range", "history-mismatch"}:
                    with ws.transaction() as tx:
                        state = tx.state(initiative)
                        if "phase-out-of-range" in codes:
                            tx.repair(initiative)
                            state.position.phase = _position_target(state.to_data())
                        if codes & {"derived-mismatch", "phase-name-mismatch", "phase-out-of-range"}:
                            recompute(state)
                        if "history-mismatch" in codes:
                            shown = ws.display(initiative.history_path)
                            entries = history.read(initiative.history_path, shown)[0]
                            source = entries[-1].get("to") if entries else None
                            target = state.lifecycle.state
                            if repair_allowed(source, target, state.to_data()):
                                when = repair_time(entries, now())
                                item = history.entry(when, source, target, "repair", REPAIR_REASON, ws.actor)
                                tx.log(initiative, item)
                ws.render_initiative(initiative)  # a data fix above re-rendered already; this catches record regions
            except (LockTimeout, ConflictError):
                raise  # exit 3: nothing of this initiative was written, and running again may well work
            except PlanstateError as exc:
                failures.append(str(exc))
    return failures


def check(ws: Workspace, *, fix_findings: bool = False, diff: bool = False, stale_after: float = STALE_AFTER) -> Report:
    """Run the checks; with `fix_findings` apply the safe fixes and check again; with `diff` include the changes."""
    files, findings = run(ws, stale_after=stale_after)
    changes = preview(ws, findings) if diff else []
    if not fix_findings or not any(f.fixable for f in findings):
        return Report(files, findings, changes=changes, fixing=fix_findings)
    failures = fix(ws, findings)
    files, after = run(ws, stale_after=stale_after)
    remaining = {f.key for f in after}
    fixed = [f for f in findings if f.fixable and f.key not in remaining]
    return Report(files, after, fixed, failures, changes, fixing=True)
