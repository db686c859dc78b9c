"""The exception hierarchy of planstate and the exit code each one maps to."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_INTERNAL = 4  # a bug: the traceback goes to a file, one line to stderr
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it


class PlanstateError(Exception):
    """Base of every expected planstate error; `str(err)` is one printable line."""

    exit_code = EXIT_USAGE
    # A refinement that JSON answers name by the documented class it refines (docs/json.md lists those).
    json_type: ClassVar[str | None] = None

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
        """Return the error as a JSON-ready dict: its type, message and where it is (`path`, as shown)."""
        return {
            "type": self.json_type or type(self).__name__,
            "message": self.message,
            "path": self.file,
            "line": self.line,
            "column": self.column,
            "field": self.field,
        }


class UsageError(PlanstateError):
    """The call was wrong: a bad path, a bad value, a missing workspace.

    `argument` names the keyword argument of the API call the error is about, as Python spells it (`since`,
    `first_phase`). The message names it the same way: first, when the error is about that argument's value
    (`since 'last week' is not a date …`), or else as `name=VALUE` in a hint that comes after any text quoted from
    the caller or the files (`2 sessions are active (…); name one with session=ID`). A shell says it in its own
    words: the command line prints `--since 'last week' …` and `--session ID`.
    """

    def __init__(
        self,
        message: str,
        *,
        argument: str | None = None,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, file=file, line=line, column=column, field=field)
        self.argument = argument


class NotFound(UsageError):
    """No record has the id asked for: refused as any bad input, and told apart where a protocol has its own
    answer for it (an MCP resource read answers "resource not found")."""

    json_type = "UsageError"


class NoWorkspace(UsageError):
    """No `.planning/` folder where one was looked for: `where` searched with its parents (`why` is None), or
    `where` given and not a workspace (`why` says what it is). `make` is how the caller makes one, in its own
    words; each way in (the MCP server) may say it in its own."""

    json_type = "UsageError"

    def __init__(self, where: Path, why: str | None = None, *, make: str | None = None) -> None:
        from planstate.core.layout import PLANNING

        self.where, self.why = where, why
        if why is None:
            make = make or "run `planstate init`"
            super().__init__(
                f"no {PLANNING}/ folder in {where} or any parent folder; {make} "
                "or pass explicit=PATH (or set PLANSTATE_DIR)",
                argument="explicit",
            )
        else:
            super().__init__(
                f"no {PLANNING}/ workspace at {where} ({why}); pass the {PLANNING}/ folder "
                f"or the project folder that holds it{f', or {make}' if make else ''}"
            )

    def made_by(self, make: str) -> NoWorkspace:
        """The same error, saying how to make a workspace in `make`'s words (`make one with the … tool`)."""
        return NoWorkspace(self.where, self.why, make=make)


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
