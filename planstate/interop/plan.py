"""What an importer hands the writer: the initiatives, phases and records it read, and what it could not map."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

AGENT = "import"  # `by` of what an import writes when the source names nobody


@dataclass
class Item:
    """One record to write: its kind (decision, blocker, session), front matter (with `imported_from`) and body."""

    kind: str
    data: dict[str, Any]
    body: str = ""

    @property
    def label(self) -> str:
        """How the plan names it: its id when the source has one, then its title (a session: agent and start)."""
        if self.kind == "session":
            name = f"{self.data.get('agent')} {timestamp(self.data.get('started')) or ''}".strip()
        else:
            name = f"'{self.data.get('title')}'"
        return f"{self.data['id']} {name}" if self.data.get("id") else name


@dataclass
class Planned:
    """One initiative to write: its STATE.md fields as the source tells them, and its records."""

    slug: str
    title: str
    origin: dict[str, Any]  # imported_from of its STATE.md
    phases: list[dict[str, Any]]  # whole phase entries, each with its own imported_from
    first_phase: int = 1
    workflow: str | None = None  # structure.workflow: the tool and format the phases came from
    fields: dict[str, Any] = field(default_factory=dict)  # position, next_action, resume_context, created, ...
    lifecycle: dict[str, Any] = field(default_factory=lambda: {"state": "active"})
    records: list[Item] = field(default_factory=list)
    main: bool = True  # the source's current work (milestones and finished sessions are not)


@dataclass
class Unmapped:
    """Something in the source that has no place in the format: the file, what it is and why it was left."""

    path: str
    what: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready data."""
        return {"path": self.path, "what": self.what, "why": self.why}


@dataclass
class Plan:
    """Everything one import read: its initiatives and the report of what was not mapped."""

    source: str
    root: Path
    initiatives: list[Planned] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)

    def leave(self, path: str | Path, what: str, why: str) -> None:
        """Record something not mapped (`path` relative to the imported folder)."""
        shown = str(path.relative_to(self.root)) if isinstance(path, Path) and path.is_absolute() else str(path)
        self.unmapped.append(Unmapped(shown, what, why))


def origin(source: str, path: str, ident: Any) -> dict[str, Any]:
    """An `imported_from` value."""
    return {"source": source, "path": path, "id": ident}


def timestamp(value: Any) -> datetime | None:
    """A timestamp from what foreign files hold: a datetime, a date (its midnight in UTC) or ISO text."""
    from planstate.core.clock import parse_datetime

    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).replace(microsecond=0)
    if isinstance(value, date):
        return datetime.combine(value, time(0), UTC)
    if isinstance(value, str) and value.strip():
        text = value.strip().strip("\"'")
        if len(text) == 10:
            try:
                return datetime.combine(date.fromisoformat(text), time(0), UTC)
            except ValueError:
                return None
        try:
            found = parse_datetime(text.replace(" ", "T", 1) if len(text) > 10 and text[10] == " " else text)
        except (ValueError, TypeError):
            return None
        return None if found is None else found.astimezone(UTC).replace(microsecond=0)
    return None


def day(value: Any) -> date | None:
    """A date from a date, a timestamp or text starting with one."""
    when = timestamp(value)
    if when is not None:
        return when.date()
    if isinstance(value, str):
        import re

        match = re.search(r"\d{4}-\d{2}-\d{2}", value)
        if match:
            try:
                return date.fromisoformat(match.group(0))
            except ValueError:
                return None
    return None
