"""Drift checks: every finding about a workspace, each with a stable code (docs/checks.md), and the safe fixes.

A finding is something a person or an agent should look at: a file that does not parse or
validate, a generated region that is stale or was edited by hand, a derived copy that disagrees
with its source, a reference to a record that does not exist, a stale session... Errors make
`planstate check` exit 1; warnings are shown but only fail with `--strict`. The safe fixes
re-render stale regions, recompute derived copies and repair a history that lags the lifecycle.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.durations import show
from planstate.errors import ParseError, PlanstateError
from planstate.models import KINDS, RECORD_FOLDERS, phase_numbers, phase_reference, record_reference
from planstate.schema import ListOf, Model, Nested, Nullable, parse_datetime

if TYPE_CHECKING:
    from planstate.document import Document
    from planstate.initiatives import Initiative
    from planstate.rendered import FileChange
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
    "phase-out-of-range": Code(ERROR, False, "position.phase is not a phase number"),
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
}
FIXABLE = tuple(code for code, info in CODES.items() if info.fixable)


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

    @property
    def severity(self) -> str:
        """`error` or `warning`."""
        return CODES[self.code].severity

    @property
    def fixable(self) -> bool:
        """Whether `planstate check --fix` repairs it."""
        return CODES[self.code].fixable

    @property
    def key(self) -> tuple[str, str, str | None, str]:
        """What identifies a finding across runs (its line may move while it stays the same finding)."""
        return (self.code, self.file, self.field, self.message)

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

    def github(self) -> str:
        """A GitHub Actions workflow command that annotates the file and line."""
        props = [f"file={_gh_property(self.file)}"]
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


# ---------------------------------------------------------------------------- running the checks


def run(ws: Workspace, *, stale_after: float = STALE_AFTER, now: datetime | None = None) -> tuple[int, list[Finding]]:
    """Check every file of the workspace; return how many files were checked and the findings, sorted."""
    from planstate.clock import now as clock_now
    from planstate.initiatives import discover

    checker = _Checker(ws, stale_after, now or clock_now())
    for initiative in discover(ws.root):
        checker.initiative(initiative)
    checker.workspace_rules()
    if ws.root.is_dir():  # saving the cache makes its folders: never bring back a .planning/ deleted meanwhile
        ws.save_cache()
    found = sorted(checker.findings, key=lambda f: (f.file, f.line or 0, f.column or 0, f.code, f.message))
    return checker.files, found


class _Checker:
    """One run of the checks over a workspace."""

    def __init__(self, ws: Workspace, stale_after: float, now: datetime) -> None:
        self.ws = ws
        self.stale_after = stale_after
        self.now = now
        self.findings: list[Finding] = []
        self.files = 0
        self._docs: dict[Path, Document] = {}
        self._raw: dict[Path, bytes] = {}

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
    ) -> None:
        """Record a finding."""
        where = initiative.dir if initiative is not None else None
        self.findings.append(Finding(code, file, line, column, message, hint, field, where))

    def add_error(self, code: str, error: PlanstateError, hint: str) -> None:
        """Record a finding from a PlanstateError (its file, line, column and field)."""
        self.add(code, error.file or "", error.line, error.message, hint, column=error.column, field=error.field)

    # ------------------------------------------------------------------ one file

    def read(self, path: Path) -> tuple[bytes | None, bool]:
        """A file's bytes (None when unreadable: a finding is added) and whether it holds conflict markers."""
        from planstate.files import read_bytes

        self.files += 1
        try:
            raw = read_bytes(path, self.ws.root, self.ws.root.parent)
        except PlanstateError as exc:
            self.add_error("parse-error", exc, "make it a readable regular file inside .planning/, or remove it")
            return None, False
        self._raw[path] = raw
        conflicts = conflict_blocks(raw)
        for first, last in conflicts:
            self.add(
                "conflict-marker",
                self.ws.display(path),
                first,
                f"unresolved git conflict (lines {first}-{last})",
                "keep the right side, delete the <<<<<<<, ======= and >>>>>>> lines, then run `planstate check`",
            )
        return raw, bool(conflicts)

    def document(self, path: Path, raw: bytes | None = None) -> Document:
        """The parsed document of a file read in this run (parsed once); raises ParseError."""
        from planstate.document import Document

        doc = self._docs.get(path)
        if doc is None:
            doc = Document.from_bytes(raw if raw is not None else self._raw[path], self.ws.display(path))
            self._docs[path] = doc
        return doc

    def front_matter(self, kind: str, path: Path) -> tuple[dict[str, Any] | None, bytes | None, bool]:
        """Read a planning file and check its schema: (data when it is a mapping, bytes, schema-valid)."""
        raw, conflicted = self.read(path)
        if raw is None:
            return None, None, False
        try:
            data = self.ws.cached_data(path) if kind != "state" else self._state_data(path, raw)
        except PlanstateError as exc:
            if not conflicted:  # the conflict is the cause; its finding says what to do
                self.add_error("parse-error", exc, "fix the YAML at that line; docs/format.md describes the file")
            return None, raw, False
        from planstate.validation import problems_for

        problems = problems_for(kind, data)
        if problems:
            from planstate.validation import located

            doc = self.document(path, raw)
            for error in located(doc, problems):
                if kind == "state" and error.field == "position.phase" and _out_of_range(data):
                    self.add_error(
                        "phase-out-of-range",
                        error,
                        "set position.phase to a phase number: `planstate set position.phase N`",
                    )
                else:
                    hint = f"correct the value; `planstate schema {kind}` lists the fields"
                    self.add_error("schema-error", error, hint)
        if not isinstance(data, dict):
            return None, raw, False
        for segments in unknown_keys(KINDS[kind], data):
            doc = self.document(path, raw)
            line, column = doc.locate(list(segments))
            name = ".".join(str(s) for s in segments)
            self.add(
                "unknown-key",
                doc.path or self.ws.display(path),
                line,
                f"{name} is not a field of the format; planstate keeps it",
                "check the spelling against `planstate schema " + kind + "`; remove it if it is a typo",
                column=column,
                field=name,
            )
        return data, raw, not problems

    def _state_data(self, path: Path, raw: bytes) -> Any:
        doc = self.document(path, raw)
        if not doc.has_front_matter:
            raise PlanstateError("has no front matter (it must start with a '---' line)", file=doc.path, line=1)
        return doc.data

    # ------------------------------------------------------------------ one initiative

    def initiative(self, initiative: Initiative) -> None:
        """Check an initiative: its STATE.md, its records, its history and how they refer to each other."""
        data, raw, valid = self.front_matter("state", initiative.state_path)
        state_ok = valid and data is not None and raw is not None
        records: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
        from planstate import records as record_store

        for kind in RECORD_FOLDERS:
            records[kind] = []
            for path in record_store.files(initiative.folder(kind)):
                record, _raw, _valid = self.front_matter(kind, path)
                if record is not None:
                    records[kind].append((path, record))
        self.history(initiative, data if state_ok else None)
        self.references(initiative, records, data if state_ok else None)
        self.sessions(initiative, records["session"])
        if state_ok and data is not None and raw is not None:
            doc = self.document(initiative.state_path, raw)
            self.derived(initiative, doc, data)
            self.resume_files(doc, data)
            self.regions(initiative, doc, data)

    def derived(self, initiative: Initiative, doc: Document, data: dict[str, Any]) -> None:
        """Derived copies (progress, durations, phase name) that disagree with what the phases say; completion."""
        from planstate.derived import recompute
        from planstate.models import State
        from planstate.plain import get_in

        expected = copy.deepcopy(data)
        recompute(State(expected))
        paths: list[list[Any]] = [["progress", k] for k in ("phases_total", "phases_completed", "percent", "bar")]
        paths += [["phases", i, "duration_seconds"] for i in range(len(data.get("phases") or []))]
        paths.append(["position", "phase_name"])
        for segments in paths:
            found, value = get_in(data, segments)
            _, want = get_in(expected, segments)
            if not found or value == want:
                continue
            name = ".".join(str(s) for s in segments)
            line, column = doc.locate(segments)
            code = "phase-name-mismatch" if name == "position.phase_name" else "derived-mismatch"
            source = "the current phase is named" if code == "phase-name-mismatch" else "the phases make it"
            self.add(
                code,
                doc.path or "",
                line,
                f"{name} is {_show(value)} but {source} {_show(want)}",
                "run `planstate check --fix`; derived values are recomputed on every write, never set them",
                column=column,
                field=name,
                initiative=initiative,
            )
        phases = [p for p in data.get("phases") or [] if isinstance(p, dict)]
        state = (data.get("lifecycle") or {}).get("state")
        unfinished = [p.get("name") for p in phases if p.get("status") not in ("completed", "skipped")]
        line, column = doc.locate(["lifecycle", "state"])
        if state == "completed" and unfinished:
            self.add(
                "completion-mismatch",
                doc.path or "",
                line,
                f"lifecycle.state is completed but {len(unfinished)} phase{'s are' if len(unfinished) > 1 else ' is'} "
                f"not finished: {', '.join(str(n) for n in unfinished)}",
                "finish or skip those phases, or `planstate reopen` the initiative",
                column=column,
                field="lifecycle.state",
            )
        elif state == "active" and phases and not unfinished:
            self.add(
                "completion-pending",
                doc.path or "",
                line,
                "every phase is completed or skipped but lifecycle.state is still active",
                "complete the initiative with `planstate complete`, or add the work that remains as a phase",
                column=column,
                field="lifecycle.state",
            )

    def history(self, initiative: Initiative, data: dict[str, Any] | None) -> None:
        """history.jsonl: lines that do not parse, and a last transition that does not lead to lifecycle.state."""
        from planstate import history

        path = initiative.history_path
        shown = self.ws.display(path)
        entries: list[dict[str, Any]] = []
        if path.exists():
            raw, conflicted = self.read(path)
            if raw is None:
                return
            entries, problems = history.parse(raw, shown)
            if not conflicted:
                for problem in problems:
                    code = "parse-error" if isinstance(problem, ParseError) else "schema-error"
                    self.add_error(code, problem, "fix or remove that line; lines are only ever appended")
            if conflicted:
                return
        if data is None:
            return
        state = data["lifecycle"]["state"]
        last = entries[-1] if entries else None
        if last is not None and last.get("to") == state:
            return
        if last is None:
            message = f"has no transitions; the last one should lead to {state!r}"
        else:
            message = f"the last transition leads to {last.get('to')!r} but lifecycle.state is {state!r}"
        self.add(
            "history-mismatch",
            shown,
            last.get("_line") if last is not None else None,
            message,
            "run `planstate check --fix` to append a `repair` transition, or correct lifecycle.state",
            initiative=initiative,
        )

    def references(
        self,
        initiative: Initiative,
        records: dict[str, list[tuple[Path, dict[str, Any]]]],
        state: dict[str, Any] | None,
    ) -> None:
        """Duplicate ids, file names that disagree with their ids, and references to missing phases or records."""
        ids: dict[str, dict[str, Path]] = {kind: {} for kind in records}
        for kind, items in records.items():
            for path, data in items:
                record_id = data.get("id")
                if not isinstance(record_id, str):
                    continue
                first = ids[kind].get(record_id)
                if first is not None:
                    self.locate_add(
                        "duplicate-id",
                        path,
                        ["id"],
                        f"id {record_id} is also the id of {self.ws.display(first)}",
                        "give one of them a new id and rename its file to start with it",
                    )
                else:
                    ids[kind][record_id] = path
                if not (path.name == f"{record_id}.md" or path.name.startswith(f"{record_id}-")):
                    self.locate_add(
                        "filename-id-mismatch",
                        path,
                        ["id"],
                        f"the file name {path.name} does not start with its id {record_id}",
                        f"rename the file to start with '{record_id}-' (`git mv`), or correct the id",
                    )
        every_id = {record_id for by_kind in ids.values() for record_id in by_kind}
        numbers = phase_numbers(_state_model(state)) if state is not None else None
        for path, data in records["decision"]:
            for key in ("supersedes", "superseded_by"):
                target = data.get(key)
                if isinstance(target, str) and target not in ids["decision"]:
                    self.locate_add(
                        "missing-reference",
                        path,
                        [key],
                        f"{key} names decision {target}, which does not exist in {_folder(self.ws, initiative)}",
                        "correct the id (commands accept a unique prefix; `planstate decision list` shows them)",
                    )
        for path, data in records["session"]:
            target = data.get("resumed_from")
            if isinstance(target, str) and target not in ids["session"]:
                self.locate_add(
                    "missing-reference",
                    path,
                    ["resumed_from"],
                    f"resumed_from names session {target}, which does not exist",
                    "correct the id, or set it to null",
                )
        for path, data in records["blocker"]:
            affects = data.get("affects")
            if not isinstance(affects, list):
                continue
            for index, item in enumerate(affects):
                if not isinstance(item, str):
                    continue
                number = phase_reference(item)
                if number is not None and numbers is not None and number not in numbers:
                    self.locate_add(
                        "missing-reference",
                        path,
                        ["affects", index],
                        f"affects names phase {number}, but phases are numbered {_range(numbers)}",
                        "correct the phase number",
                    )
                record_id = record_reference(item)
                if record_id is not None and record_id not in every_id:
                    self.locate_add(
                        "missing-reference",
                        path,
                        ["affects", index],
                        f"affects names record {record_id}, which does not exist in this initiative",
                        "correct the id or remove the item",
                    )

    def sessions(self, initiative: Initiative, items: list[tuple[Path, dict[str, Any]]]) -> None:
        """More than one active session; active sessions whose heartbeat is older than `stale_after`."""
        active = [(path, data) for path, data in items if data.get("status") == "active"]
        for path, _data in active[1:]:
            others = ", ".join(str(d.get("id")) for p, d in active if p != path)
            self.locate_add(
                "multiple-active-sessions",
                path,
                ["status"],
                f"is active, and so is {others}",
                "end the sessions that are over with `planstate session end ID`; parallel agents may each have one",
            )
        for path, data in active:
            record_id = data.get("id")
            if not isinstance(record_id, str):
                continue
            beat = self.ws.root / ".local" / "heartbeats" / record_id
            try:
                last = datetime.fromtimestamp(beat.stat().st_mtime, tz=self.now.tzinfo)
                source = "its last heartbeat"
            except OSError:
                started = parse_datetime(data.get("started"))
                if started is None:
                    continue
                last, source = started, "its start; there is no heartbeat on this machine"
            age = (self.now - last).total_seconds()
            if age > self.stale_after:
                self.locate_add(
                    "stale-session",
                    path,
                    ["status"],
                    f"is active, but its last sign of life was {show(age)} ago ({source})",
                    "if its agent is gone, end it with `planstate session end ID` or mark it crashed",
                )

    def resume_files(self, doc: Document, data: dict[str, Any]) -> None:
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
                line, column = doc.locate(["resume_context", "files_modified", index])
                self.add(
                    "missing-file",
                    doc.path or "",
                    line,
                    f"{item} does not exist (paths are relative to the folder that holds .planning/)",
                    "verify the resume context: correct the path or `planstate unset resume_context.files_modified."
                    f"{index}`",
                    column=column,
                    field=f"resume_context.files_modified.{index}",
                )

    def regions(self, initiative: Initiative, doc: Document, data: dict[str, Any]) -> None:
        """Generated regions: malformed markers, hand edits, template errors and stale regions."""
        from planstate import regions
        from planstate.render_context import Sources

        if not regions.has_markers(doc.body):
            return
        result = regions.plan(Sources(data, self.ws, initiative), doc.body, doc.body_line)
        file = doc.path or ""
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
                    f"region {outcome.name} does not show the current state",
                    "run `planstate render` or `planstate check --fix`",
                    field=field_name,
                    initiative=initiative,
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

    def locate_add(self, code: str, path: Path, segments: list[Any], message: str, hint: str) -> None:
        """Record a finding about a field of a record file, located at that field's line."""
        doc = self.document(path)
        line, column = doc.locate(segments)
        name = ".".join(str(s) for s in segments)
        self.add(code, doc.path or self.ws.display(path), line, message, hint, column=column, field=name)

    # ------------------------------------------------------------------ the whole workspace

    def workspace_rules(self) -> None:
        """At most one active initiative; each initiative's folder name matches its id (from `validate`)."""
        for error in self.ws._initiative_problems():
            if error.field == "lifecycle.state":
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


# ---------------------------------------------------------------------------- helpers


def conflict_blocks(raw: bytes) -> list[tuple[int, int]]:
    """The (first, last) lines of each git conflict block: `<<<<<<<` … `=======` … `>>>>>>>` at line starts."""
    if b"<<<<<<<" not in raw:
        return []
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    middle = False
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if re.match(rb"<<<<<<<(?: |\r?$)", line):
            start, middle = number, False
        elif start is not None and re.match(rb"=======\r?$", line):
            middle = True
        elif start is not None and middle and re.match(rb">>>>>>>(?: |\r?$)", line):
            blocks.append((start, number))
            start, middle = None, False
    return blocks


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


def _state_model(data: dict[str, Any]) -> Any:
    from planstate.models import State

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
    from planstate.initiatives import discover

    for initiative in discover(ws.root):
        if initiative.dir == folder:
            return initiative
    raise PlanstateError(f"initiative folder {ws.display(folder)} is gone")


def preview(ws: Workspace, findings: list[Finding]) -> list[FileChange]:
    """What `fix` would change, file by file (nothing is written)."""
    from planstate import history, regions
    from planstate.clock import now
    from planstate.derived import recompute
    from planstate.document import Document
    from planstate.models import State
    from planstate.rendered import FileChange

    changes: list[FileChange] = []
    for folder, codes in _fixable(findings).items():
        initiative = _initiative_at(ws, folder)
        path = initiative.state_path
        before = path.read_bytes()
        doc = Document.from_bytes(before, ws.display(path))
        data = doc.data
        if codes & {"derived-mismatch", "phase-name-mismatch"}:
            recompute(State(data))
            if data != doc.data:
                data["updated"] = now()
                doc.update(data)
        regions.refresh(ws, doc, initiative)
        after = doc.to_bytes()
        if after != before:
            changes.append(FileChange(path, ws.display(path), before, after))
        if "history-mismatch" in codes:
            log = initiative.history_path
            old = log.read_bytes() if log.exists() else b""
            entries = history.parse(old, ws.display(log))[0]
            source = entries[-1].get("to") if entries else None
            when = repair_time(entries, now())
            item = history.entry(when, source, data["lifecycle"]["state"], "repair", REPAIR_REASON, ws.actor)
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
    """Apply the safe fixes for `findings` through transactions; return the errors of fixes that failed."""
    from planstate import history
    from planstate.clock import now
    from planstate.derived import recompute

    failures: list[str] = []
    for folder, codes in _fixable(findings).items():
        try:
            initiative = _initiative_at(ws, folder)
            if codes & {"derived-mismatch", "phase-name-mismatch", "history-mismatch"}:
                with ws.transaction() as tx:
                    state = tx.state(initiative)
                    if codes & {"derived-mismatch", "phase-name-mismatch"}:
                        recompute(state)
                    if "history-mismatch" in codes:
                        entries = history.read(initiative.history_path, ws.display(initiative.history_path))[0]
                        source = entries[-1].get("to") if entries else None
                        target = state.lifecycle.state
                        if source != target:
                            when = repair_time(entries, now())
                            tx.log(initiative, history.entry(when, source, target, "repair", REPAIR_REASON, ws.actor))
            ws.render_initiative(initiative)  # a data fix above re-rendered already; this catches record regions
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
