"""The one JSON contract of planstate: every `--json` answer, success or error, is one envelope built here.

The envelope is a plain function of what a command did (its name, exit code, data or error, warnings), with nothing
of argparse in it, so any front end (the command line, a server) answers in the same words. docs/json.md documents
it and `planstate/schemas/` holds its JSON Schemas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planstate.core.errors import EXIT_OK, PlanstateError

SCHEMA = "planstate/1"


def envelope(
    command: str | None,
    exit: int,
    data: Any = None,
    *,
    error: PlanstateError | BaseException | None = None,
    text: str | None = None,
    warnings: Sequence[str] = (),
    workspace: str | None = None,
) -> dict[str, Any]:
    """The JSON answer of `command` that ended with `exit`: its `data` and `warnings`, or, with `error`, the error
    object (`text` is the line printed without JSON; by default `planstate: <error>`). `workspace`, the
    `.planning/` folder that answered, is given by the MCP server, whose calls may each name another one."""
    from planstate.model.kinds import to_json

    out: dict[str, Any] = {"schema": SCHEMA, "command": command, "ok": exit == EXIT_OK, "exit": exit}
    if error is not None:
        out["error"] = error_object(error, text)
    else:
        out["data"] = to_json(data)
    out["warnings"] = list(warnings)
    if workspace is not None:
        out["workspace"] = workspace
    return out


def error_object(error: PlanstateError | BaseException, text: str | None = None) -> dict[str, Any]:
    """An error as the envelope carries it: its type, message, where it is (path, line, column, field) and the
    one line the command line prints for it."""
    if isinstance(error, PlanstateError):
        return {**error.to_dict(), "text": text or f"planstate: {error}"}
    where = {"path": None, "line": None, "column": None, "field": None}
    return {"type": type(error).__name__, "message": str(error), **where, "text": text or f"planstate: {error}"}
