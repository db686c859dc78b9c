"""One side of a semantic diff: an initiative's files at one snapshot, parsed on demand; problems become entries."""

from __future__ import annotations

from typing import Any

from planstate.core.errors import ParseError, PlanstateError
from planstate.core.layout import HISTORY_FILE, PLANNING, STATE_FILE
from planstate.model.schema import Model, Nested
from planstate.vcs.fieldchanges import normalize


class Side:
    """One side's files of an initiative, parsed on demand; problems become `unreadable` entries."""

    def __init__(self, key: str, files: dict[str, bytes] | None, side: str) -> None:
        self.key = key
        self.files = files or {}
        self.side = side
        self.problems: list[dict[str, Any]] = []
        self._history: list[dict[str, Any]] | None = None

    def path(self, name: str) -> str:
        """A file's path as shown: `.planning/...`."""
        return f"{PLANNING}/{self.key}/{name}" if self.key else f"{PLANNING}/{name}"

    def front(self, name: str, model: type[Model]) -> dict[str, Any] | None:
        """The normalized front matter of a file (None when absent or unreadable, which is noted)."""
        data = self.files.get(name)
        if data is None:
            return None
        from planstate.text.document import Document

        shown = self.path(name)
        try:
            doc = Document.from_bytes(data, shown)
            doc.require_front_matter()
            front = doc.data
            if not isinstance(front, dict):
                raise ParseError("front matter is not a mapping", file=shown, line=2)
        except PlanstateError as exc:
            self.problems.append({"file": shown, "side": self.side, "message": _location_free(exc)})
            return None
        normalized: dict[str, Any] = normalize(front, Nested(model))
        return normalized

    def history(self) -> list[dict[str, Any]]:
        """The history entries, normalized (bad lines are noted, once, and skipped)."""
        if self._history is None:
            self._history = self._read_history()
        return self._history

    def _read_history(self) -> list[dict[str, Any]]:
        from planstate.store import history

        data = self.files.get(HISTORY_FILE)
        if data is None:
            return []
        shown = self.path(HISTORY_FILE)
        entries, problems = history.parse(data, shown)
        for problem in problems:
            self.problems.append({"file": shown, "side": self.side, "message": _location_free(problem)})
        out = []
        for entry in entries:
            entry.pop("_line", None)
            out.append(normalize(entry, None))
        return out

    def changed(self, other: Side, name: str) -> bool:
        """Tell whether file `name` differs between this side and `other`."""
        return self.files.get(name) != other.files.get(name)


def _location_free(exc: PlanstateError) -> str:
    """An error's message with its line and column (the file is given beside it)."""
    where = f"line {exc.line}" + (f", column {exc.column}" if exc.column else "") + ": " if exc.line else ""
    field = f"{exc.field}: " if exc.field else ""
    return f"{where}{field}{exc.message}"


def quiet_front(after: Side, before: Side) -> dict[str, Any]:
    """A STATE.md's front matter (the newer side's if it has one) for its name and title only: {} when it cannot
    be read (reported elsewhere)."""
    from planstate.text.document import Document

    try:
        front = Document.from_bytes(after.files.get(STATE_FILE) or before.files.get(STATE_FILE) or b"").data
    except PlanstateError:
        return {}
    return front if isinstance(front, dict) else {}
