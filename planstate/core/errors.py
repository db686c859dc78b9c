"""The exception hierarchy of planstate and the exit code each one maps to."""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_INTERNAL = 4  # a bug: the traceback goes to a file, one line to stderr
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it


class PlanstateError(Exception):
    """Base of every expected planstate error; `str(err)` is one printable line."""

    exit_code = EXIT_USAGE

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.column = column
        self.field = field

    def location(self) -> str:
        """Return `file:line:col` (as much of it as is known), or an empty string."""
        parts: list[str] = []
        if self.file is not None:
            parts.append(self.file)
            if self.line is not None:
                parts.append(str(self.line))
                if self.column is not None:
                    parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        prefix = self.location()
        text = self.message if not self.field else f"{self.field}: {self.message}"
        return f"{prefix}: {text}" if prefix else text

    def to_dict(self) -> dict[str, object]:
        """Return the error as a JSON-ready dict."""
        return {
            "error": type(self).__name__,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "message": self.message,
        }


class UsageError(PlanstateError):
    """The command was called wrongly: a bad path, a bad value, a missing workspace."""


class ParseError(PlanstateError):
    """A file could not be read as markdown with YAML front matter."""


class ValidationError(PlanstateError):
    """Data does not match the planstate schema."""

    def __init__(self, problems: list[PlanstateError]) -> None:
        first = problems[0]
        super().__init__(first.message, file=first.file, line=first.line, column=first.column, field=first.field)
        self.problems = problems

    def __str__(self) -> str:
        text = PlanstateError.__str__(self)
        more = len(self.problems) - 1
        return f"{text} (and {more} more problem{'s' if more > 1 else ''})" if more else text


class EditError(PlanstateError):
    """An edit cannot be applied without touching bytes it should not touch."""


class LockTimeout(PlanstateError):
    """The workspace lock could not be taken in time."""

    exit_code = EXIT_CONFLICT


class ConflictError(PlanstateError):
    """A file changed underneath a transaction; nothing was written."""

    exit_code = EXIT_CONFLICT
