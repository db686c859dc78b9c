"""Findings: the finding codes (docs/checks.md) with their severity and fixability, one finding, a check's report.

A finding is something a person or an agent should look at. Errors make `planstate check` exit 1;
warnings are shown but only fail with `--strict`. A finding prints as a line of text, as JSON, or
as a GitHub Actions annotation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.errors import PlanstateError

if TYPE_CHECKING:
    from planstate.render.result import FileChange

ERROR = "error"
WARNING = "warning"


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
    "structure-mismatch": Code(WARNING, True, "structure.phases_total counts fewer phases than are listed"),
    "completion-mismatch": Code(ERROR, False, "the initiative is completed but a phase is not finished"),
    "completion-pending": Code(WARNING, False, "every phase is finished but the initiative is still active"),
    "history-mismatch": Code(ERROR, True, "the last history.jsonl transition does not lead to lifecycle.state"),
    "missing-reference": Code(ERROR, False, "a reference to a phase or record that does not exist"),
    "dependency-cycle": Code(ERROR, False, "tasks whose depends_on lead back to themselves: none of them can be ready"),
    "duplicate-id": Code(ERROR, False, "two records of one kind have the same id"),
    "filename-id-mismatch": Code(ERROR, False, "a file or folder name disagrees with the id inside it"),
    "multiple-active-initiatives": Code(ERROR, False, "more than one initiative is active"),
    "multiple-active-sessions": Code(WARNING, False, "more than one session of an initiative is active"),
    "stale-session": Code(
        WARNING, False, "an active session whose heartbeat is older than the stale-after limit (default 30m)"
    ),
    "missing-file": Code(WARNING, False, "a file named in resume_context.files_modified does not exist"),
    "merge-driver-missing": Code(WARNING, False, "merge=planstate applies, but this clone has no merge driver for it"),
    "diff-driver-missing": Code(WARNING, False, "diff=planstate applies, but this clone has no textconv for it"),
    "driver-command-fragile": Code(
        WARNING, False, "this clone's merge driver or textconv may not run planstate from another shell"
    ),
    "stale-temp-file": Code(ERROR, True, "a temp file a killed write left in .planning/ (git would commit it)"),
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

    @classmethod
    def from_error(cls, code: str, error: PlanstateError, hint: str) -> Finding:
        """A finding from a PlanstateError: its file, line, column, field and message."""
        return cls(code, error.file or "", error.line, error.column, error.message, hint, error.field)

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
            "path": self.file,
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
            "files_checked": self.files,
            "error_count": len(self.errors),
            "warning_count": len(self.warnings),
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.fixing:
            out["fixed"] = [f.to_dict() for f in self.fixed]
            out["fix_failures"] = self.failures
        return out


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in report order: by file, line, column, code and message."""
    return sorted(findings, key=lambda f: (f.file, f.line or 0, f.column or 0, f.code, f.message))
