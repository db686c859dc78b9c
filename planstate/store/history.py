"""The lifecycle history of an initiative: `history.jsonl`, one JSON object per line, only ever appended.

One line per transition, and no command ever rewrites an earlier line, so two branches'
histories merge as a union: `planstate init` marks the file `merge=union` in
`.planning/.gitattributes`. Readers order entries by time, since a union merge may interleave them.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from planstate.core.clock import parse_datetime
from planstate.core.errors import ParseError, PlanstateError
from planstate.core.files import read_bytes
from planstate.core.layout import PLANNING
from planstate.model.kinds import Transition, to_json
from planstate.text.paths import format_path

KEYS = ("at", "from", "to", "trigger", "reason", "by")
GITATTRIBUTES = (
    "# planstate: lifecycle histories are append-only, so a union merge is always right.\nhistory.jsonl merge=union\n"
)


def entry(
    at: datetime, source: str | None, target: str, trigger: str, reason: str | None, by: str | None
) -> dict[str, Any]:
    """A history entry with its keys in the documented order."""
    return {"at": at, "from": source, "to": target, "trigger": trigger, "reason": reason, "by": by}


def is_transition(item: dict[str, Any]) -> bool:
    """Whether an entry moves the lifecycle. A structure change (`phase add`, a `repair` of the snapshot) leaves it
    where it was: its `from` is its `to`, and no rule about the last transition reads it."""
    return item.get("from") != item.get("to")


def last_transition(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last entry that moves the lifecycle (entries oldest first), or None when none does."""
    return next((item for item in reversed(entries) if is_transition(item)), None)


def line(item: dict[str, Any]) -> str:
    """One entry as its line of JSON (keys in the documented order, extra keys after them)."""
    ordered = {k: item.get(k) for k in KEYS}
    ordered.update({k: v for k, v in item.items() if k not in KEYS})
    return json.dumps(to_json(ordered), ensure_ascii=False, separators=(", ", ": ")) + "\n"


def parse(data: bytes, shown: str) -> tuple[list[dict[str, Any]], list[PlanstateError]]:
    """Read every entry of a history file; bad lines become problems (file:line) instead of entries."""
    entries: list[dict[str, Any]] = []
    problems: list[PlanstateError] = []
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if number == len(lines) and not text.endswith("\n"):
            problems.append(PlanstateError("last line is cut off (no newline at its end)", file=shown, line=number))
        try:
            item = json.loads(raw)
        except ValueError as exc:
            problems.append(ParseError(f"not a JSON object: {exc.args[0].split(':')[0]}", file=shown, line=number))
            continue
        if not isinstance(item, dict):
            problems.append(ParseError("not a JSON object", file=shown, line=number))
            continue
        for problem in Transition.check_data(item):
            field = format_path(problem.path)
            problems.append(PlanstateError(problem.message, file=shown, line=number, field=field or None))
        item["_line"] = number
        entries.append(item)
    entries.sort(key=_when)
    return entries, problems


def _when(item: dict[str, Any]) -> tuple[int, datetime | str]:
    at = parse_datetime(item.get("at"))
    return (0, at) if at is not None else (1, str(item.get("at")))


def read(path: Path, shown: str, root: Path | None = None) -> tuple[list[dict[str, Any]], list[PlanstateError]]:
    """The entries of the history at `path`, oldest first (none when the file does not exist).

    The file is read through the guards of every planning file: a regular file (never a FIFO),
    inside the workspace `root` (default: the `.planning/` folder holding it), of sane size.
    A file that fails them is reported as a problem, with no entries.
    """
    if not os.path.lexists(path):
        return [], []
    try:
        data = read_bytes(path, root if root is not None else workspace_of(path))
    except PlanstateError as exc:
        exc.file = shown
        return [], [exc]
    return parse(data, shown)


def workspace_of(path: Path) -> Path:
    """The `.planning/` folder a planning file is in (its own folder when none of its parents is one)."""
    for folder in path.absolute().parents:
        if folder.name == PLANNING:
            return folder
    return path.absolute().parent
