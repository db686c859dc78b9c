"""What a semantic diff holds and how it reads: one `InitiativeDiff` per initiative, gathered in a `SemanticDiff`.

Each section of an initiative's diff has its line writer in `LINES` (lifecycle transitions, phase and record
events by their tables, field changes, unreadable files); difftext.py writes a line as text or markdown.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from planstate.core.layout import PLANNING
from planstate.vcs.diffevents import Subject, line
from planstate.vcs.difftables import PHASES, RECORDS
from planstate.vcs.difftext import Markdown, Plain, md, md_code
from planstate.vcs.snapshot import Snapshot
from planstate.vcs.transitions import transition_line

SECTIONS = ("lifecycle", "phases", "position", "decisions", "blockers", "sessions", "tasks", "fields", "unreadable")


class InitiativeDiff:
    """The changes of one initiative, section by section (see `SECTIONS`), each a list of JSON-ready dicts."""

    def __init__(self, key: str, slug: str, title: str, status: str, state: str | None) -> None:
        self.key = key
        self.slug = slug
        self.title = title
        self.status = status  # added, removed or changed
        self.state = state  # its lifecycle state on the newer side (the older one when removed)
        self.sections: dict[str, list[dict[str, Any]]] = {name: [] for name in SECTIONS}

    @property
    def folder(self) -> str:
        """Its folder, as shown: `.planning/` or `.planning/initiatives/SLUG/`."""
        return f"{PLANNING}/{self.key}/" if self.key else f"{PLANNING}/"

    @property
    def empty(self) -> bool:
        """Tell whether nothing changed in it."""
        return self.status == "changed" and not any(self.sections.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: its identity, status and every section (empty sections included, so keys are stable),
        in the words of docs/json.md: a file is `path`, a field path `field`, a phase `number`, and the lifecycle
        section is `transitions`."""
        return {
            "initiative": self.slug,
            "title": self.title,
            "path": self.folder,
            "status": self.status,
            "lifecycle": {"state": self.state},
            **{JSON_NAMES.get(name, name): [_json_entry(e, name) for e in self.sections[name]] for name in SECTIONS},
        }

    def lines(self, f: Plain) -> list[str]:
        """One line per change, section by section, written through `f` (plain or markdown)."""
        return [LINES[name](self, entry, f) for name in SECTIONS for entry in self.sections[name]]


# Sections and entry keys whose JSON name differs from the name the code uses.
JSON_NAMES = {"lifecycle": "transitions"}
ENTRY_NAMES = {"file": "path", "path": "field"}
PHASE_NAMES = {**ENTRY_NAMES, "phase": "number"}  # an entry of `phases` is a phase: its number is `number`


def _json_entry(entry: dict[str, Any], section: str) -> dict[str, Any]:
    """One entry of a section with its keys in the JSON vocabulary."""
    names = PHASE_NAMES if section == "phases" else ENTRY_NAMES
    return {names.get(key, key): value for key, value in entry.items()}


LineWriter = Callable[[InitiativeDiff, dict[str, Any], Plain], str]


def _transition(item: InitiativeDiff, entry: dict[str, Any], f: Plain) -> str:
    return transition_line(entry, f)


def _events_of(subject: Subject) -> LineWriter:
    """The line writer of a section of `subject`'s events."""
    return lambda item, entry, f: line(subject, entry, f)


def _position(item: InitiativeDiff, c: dict[str, Any], f: Plain) -> str:
    return f"{f.code(c['path'])}: {_change_text(c, f)}"


def _field(item: InitiativeDiff, c: dict[str, Any], f: Plain) -> str:
    name = c["file"].removeprefix(item.folder)
    return f"{f.code(name)}: {f.code(c['path'])}: {_change_text(c, f)}"


def _unreadable(item: InitiativeDiff, u: dict[str, Any], f: Plain) -> str:
    side = "older side" if u["side"] == "old" else "newer side"
    return f"{f.strong('unreadable')} ({side}): {f.code(u['file'])}: {f.text(u['message'])}"


LINES: dict[str, LineWriter] = {
    "lifecycle": _transition,
    "phases": _events_of(PHASES),
    "position": _position,
    **{subject.section: _events_of(subject) for subject in RECORDS},
    "fields": _field,
    "unreadable": _unreadable,
}


def _change_text(c: dict[str, Any], f: Plain) -> str:
    """`old → new`; for an item of a list of values (`path[]`), `added X` or `removed X`."""
    if c["path"].endswith("[]"):
        return f"added {f.value(c['new'])}" if c["old"] is None else f"removed {f.value(c['old'])}"
    return f"{f.value(c['old'])} → {f.value(c['new'])}"


class SemanticDiff:
    """The comparison of two snapshots of `.planning/`: one InitiativeDiff per initiative that changed."""

    def __init__(self, old: Snapshot, new: Snapshot, initiatives: list[InitiativeDiff]) -> None:
        self.old = old
        self.new = new
        self.initiatives = [i for i in initiatives if not i.empty]
        self.warnings: list[str] = []  # one line each, about the comparison itself (not part of the changelog)

    @property
    def empty(self) -> bool:
        """Tell whether nothing changed."""
        return not self.initiatives

    def _side(self, snapshot: Snapshot) -> dict[str, Any]:
        return {"revision": snapshot.label if snapshot.commit else None, "commit": snapshot.commit}

    def _shown(self, snapshot: Snapshot, code: bool = False) -> str:
        if snapshot.commit is None:
            return f"the {snapshot.label}"
        short = snapshot.commit[:12]
        if snapshot.commit.startswith(snapshot.label):  # given as a commit id: once is enough
            return md_code(short) if code else short
        return f"{md_code(snapshot.label)} ({md_code(short)})" if code else f"{snapshot.label} ({short})"

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON for programs: `from_revision`/`to_revision` (`revision`, `commit`; both null for the working
        tree) and `initiatives` (see docs/cli.md, `planstate diff`, for every key)."""
        return {
            "from_revision": self._side(self.old),
            "to_revision": self._side(self.new),
            "initiatives": [i.to_dict() for i in self.initiatives],
        }

    def to_text(self) -> str:
        """The changelog for a terminal: a line per initiative, then one indented line per change."""
        span = f"{self._shown(self.old)} to {self._shown(self.new)}"
        if self.empty:
            return f"No changes in {PLANNING}/ from {span}."
        out = [f"Changes in {PLANNING}/ from {span}:"]
        for item in self.initiatives:
            title = f" {json.dumps(item.title, ensure_ascii=False)}" if item.title else ""
            state = f", {item.state}" if item.state and item.status != "removed" else ""
            out.extend(["", f"initiative {item.slug}{title} ({item.folder}): {item.status}{state}"])
            out.extend(f"  {line}" for line in item.lines(Plain()))
        return "\n".join(out)

    def to_markdown(self) -> str:
        """The changelog as markdown for a pull-request comment: a heading per initiative, bullets, no raw HTML."""
        span = f"{self._shown(self.old, code=True)} → {self._shown(self.new, code=True)}"
        if self.empty:
            return f"No changes in `{PLANNING}/` ({span})."
        out = [f"## Changes in `{PLANNING}/` ({span})"]
        for item in self.initiatives:
            title = f": {md(item.title)}" if item.title else ""
            status = {"added": " (added)", "removed": " (removed)"}.get(item.status, "")
            out.extend(["", f"### {md_code(item.slug)}{title}{status}", ""])
            out.extend(f"- {line}" for line in item.lines(Markdown()))
        return "\n".join(out)
