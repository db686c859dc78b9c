"""What changed in `.planning/` between two snapshots, read as meaning: a changelog per initiative.

For each initiative: lifecycle transitions (from the new history.jsonl lines, else from a change
of `lifecycle.state`); phases started, completed (with their duration), failed, skipped, retried
and checkpoint results; position and next-action changes; decisions, blockers and sessions by
what happened to them (added, accepted, superseded, resolved, ended ...); and every other field
that changed, as `path: old → new`. Derived fields and `updated` are left out: they follow from
the rest. Files that cannot be read on either side are listed, never fatal.

Values are compared as the canonical view shows them (planstate/canonical.py): a timestamp
written with or without quotes, or in another zone, is the same timestamp; key order and
comments do not count. Phase paths use the phase number: `phases[2].name` is phase 2.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from planstate.core.clock import parse_datetime
from planstate.core.durations import show as show_duration
from planstate.core.errors import ParseError, PlanstateError, UsageError
from planstate.core.layout import HISTORY_FILE, PLANNING, STATE_FILE
from planstate.model.kinds import Blocker, Decision, Phase, Session, State
from planstate.model.schema import DateTime, Kind, ListOf, MapOf, Model, Nested, Nullable
from planstate.text import filters
from planstate.vcs.snapshot import Snapshot, at_revision, merge_base, split, working_tree
from planstate.vcs.textconv import first_phase, iso_utc

SECTIONS = ("lifecycle", "phases", "position", "decisions", "blockers", "sessions", "fields", "unreadable")
RECORD_KINDS = {"decisions": ("decision", Decision), "blockers": ("blocker", Blocker), "sessions": ("session", Session)}
# Phase fields a phase event (started, completed ...) explains, so they are not listed again as field changes.
PHASE_EVENT_FIELDS = (
    "status",
    "started",
    "completed",
    "failed_at",
    "attempts",
    "previous",
    "failure",
    "skip_reason",
    "checkpoint",
    "evidence",
)
RECORD_EVENT_FIELDS = {
    "decision": ("status", "superseded_by", "rejection"),
    "blocker": ("status", "workaround", "resolution", "resolved", "log"),
    "session": ("status", "ended", "completed", "issues", "handoff_reason", "notes", "context_usage"),
}
POSITION_FIELDS = ("position", "next_action")
_LOG_LINE = re.compile(r"\S+ \S+ → \S+: (.*)", re.DOTALL)
_MISSING: Any = object()
MAX_SHOWN = 300  # characters of one value in the text and markdown output (JSON has it whole)


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
        """JSON-ready data: its identity, status and every section (empty sections included, so keys are stable)."""
        return {
            "initiative": self.slug,
            "title": self.title,
            "folder": self.folder,
            "status": self.status,
            "state": self.state,
            **{name: self.sections[name] for name in SECTIONS},
        }


class SemanticDiff:
    """The comparison of two snapshots of `.planning/`: one InitiativeDiff per initiative that changed."""

    def __init__(self, old: Snapshot, new: Snapshot, initiatives: list[InitiativeDiff]) -> None:
        self.old = old
        self.new = new
        self.initiatives = [i for i in initiatives if not i.empty]

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
            return _md_code(short) if code else short
        return f"{_md_code(snapshot.label)} ({_md_code(short)})" if code else f"{snapshot.label} ({short})"

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON for programs: `from`/`to` (`revision`, `commit`; both null for the working tree), `empty`,
        and `initiatives` (see docs/cli.md, `planstate diff`, for every key)."""
        return {
            "from": self._side(self.old),
            "to": self._side(self.new),
            "empty": self.empty,
            "initiatives": [i.to_dict() for i in self.initiatives],
        }

    def to_text(self) -> str:
        """The changelog for a terminal: a line per initiative, then one indented line per change."""
        span = f"{self._shown(self.old)} to {self._shown(self.new)}"
        if self.empty:
            return f"No changes in {PLANNING}/ from {span}."
        out = [f"Changes in {PLANNING}/ from {span}:"]
        for item in self.initiatives:
            out.append("")
            out.append(_text_heading(item))
            out.extend(f"  {line}" for line in _lines(item, _Plain()))
        return "\n".join(out)

    def to_markdown(self) -> str:
        """The changelog as markdown for a pull-request comment: a heading per initiative, bullets, no raw HTML."""
        span = f"{self._shown(self.old, code=True)} → {self._shown(self.new, code=True)}"
        if self.empty:
            return f"No changes in `{PLANNING}/` ({span})."
        out = [f"## Changes in `{PLANNING}/` ({span})"]
        for item in self.initiatives:
            out.append("")
            title = f": {_md(item.title)}" if item.title else ""
            status = {"added": " (added)", "removed": " (removed)"}.get(item.status, "")
            out.append(f"### {_md_code(item.slug)}{title}{status}")
            out.append("")
            out.extend(f"- {line}" for line in _lines(item, _Markdown()))
        return "\n".join(out)


# ---------------------------------------------------------------------------- comparing


def between(planning: Path, rev1: str | None = None, rev2: str | None = None) -> SemanticDiff:
    """What changed in `planning` (every initiative): HEAD to the working tree without revisions, `rev1` to the
    working tree with one, `rev1` to `rev2` with two; `rev1` may be `A..B`, or `A...B` (from the merge base of A and
    B to B, as `git diff A...B`). UsageError when a revision does not exist or the folder is not in a git
    repository."""
    if rev1 is not None and ".." in rev1:
        if rev2 is not None:
            raise UsageError(f"give either the range {rev1!r} or two revisions, not both")
        symmetric = "..." in rev1
        rev1, _, rev2 = rev1.partition("..." if symmetric else "..")
        rev1, rev2 = rev1 or "HEAD", rev2 or "HEAD"
        if symmetric:  # as `git diff A...B`: from where B left A to B
            base = merge_base(planning, rev1, rev2)
            old = at_revision(planning, base, label=f"merge base of {rev1} and {rev2}")
            return compare(old, at_revision(planning, rev2))
    old = at_revision(planning, rev1 or "HEAD")
    new = working_tree(planning) if rev2 is None else at_revision(planning, rev2)
    return compare(old, new)


def compare(old: Snapshot, new: Snapshot) -> SemanticDiff:
    """The semantic difference from `old` to `new`, initiative by initiative (`.planning/` itself first)."""
    old_groups, new_groups = old.initiatives(), new.initiatives()
    keys = sorted(set(old_groups) | set(new_groups), key=lambda k: (k != "", k))
    found = {key: _initiative(key, old_groups.get(key), new_groups.get(key)) for key in keys}
    for side, taken in (("old", old), ("new", new)):
        for path, message in sorted(taken.unreadable.items()):
            where = split(path)
            key = where[0] if where is not None else ""
            if key not in found:
                found[key] = InitiativeDiff(key, key.rsplit("/", 1)[-1] or "(root)", "", "changed", None)
            found[key].sections["unreadable"].append({"file": f"{PLANNING}/{path}", "side": side, "message": message})
    return SemanticDiff(old, new, list(found.values()))


class _Side:
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


def _location_free(exc: PlanstateError) -> str:
    """An error's message with its line and column (the file is given beside it)."""
    where = f"line {exc.line}" + (f", column {exc.column}" if exc.column else "") + ": " if exc.line else ""
    field = f"{exc.field}: " if exc.field else ""
    return f"{where}{field}{exc.message}"


def _initiative(key: str, old_files: dict[str, bytes] | None, new_files: dict[str, bytes] | None) -> InitiativeDiff:
    """Compare one initiative's files (only those whose bytes differ are read)."""
    before, after = _Side(key, old_files, "old"), _Side(key, new_files, "new")
    status = "added" if old_files is None else "removed" if new_files is None else "changed"
    state_changed = before.files.get(STATE_FILE) != after.files.get(STATE_FILE)
    old_state = before.front(STATE_FILE, State) if state_changed and status != "removed" else None
    new_state = after.front(STATE_FILE, State) if state_changed else None
    result = InitiativeDiff(key, "", "", status, None)
    sections = result.sections
    if status != "removed":
        if before.files.get(HISTORY_FILE) != after.files.get(HISTORY_FILE):
            sections["lifecycle"] = _transitions(before.history(), after.history())
            sections["fields"].extend(_history_removals(before, after))
        if new_state is not None and (old_state is not None or status == "added"):
            _state_changes(old_state or {}, new_state, sections, added=status == "added", file=after.path(STATE_FILE))
        for folder, (kind, model) in RECORD_KINDS.items():
            sections[folder] = _record_changes(before, after, folder, kind, model, sections["fields"])
        sections["unreadable"] = before.problems + after.problems
    shown = new_state or old_state or _quiet_front(after.files.get(STATE_FILE) or before.files.get(STATE_FILE))
    result.slug = str(shown.get("initiative") or key.rsplit("/", 1)[-1] or "(root)")
    result.title = str(shown.get("title") or "")
    lifecycle = shown.get("lifecycle")
    result.state = lifecycle.get("state") if isinstance(lifecycle, dict) else None
    return result


def _quiet_front(data: bytes | None) -> dict[str, Any]:
    """A STATE.md's front matter for its name and title only: {} when it cannot be read (reported elsewhere)."""
    from planstate.text.document import Document

    try:
        front = Document.from_bytes(data or b"").data
    except PlanstateError:
        return {}
    return front if isinstance(front, dict) else {}


def _transitions(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history entries the newer side has and the older does not, oldest first, as transitions."""
    seen: dict[str, int] = {}
    for entry in old:
        seen[_entry_key(entry)] = seen.get(_entry_key(entry), 0) + 1
    out = []
    for entry in new:
        k = _entry_key(entry)
        if seen.get(k):
            seen[k] -= 1
            continue
        out.append(
            {
                "from": entry.get("from"),
                "to": entry.get("to"),
                "at": entry.get("at"),
                "trigger": entry.get("trigger"),
                "reason": entry.get("reason"),
                "by": entry.get("by"),
            }
        )
    return out


def _history_removals(before: _Side, after: _Side) -> list[dict[str, Any]]:
    """Entries only the older history has: history is append-only, so a removal is worth showing."""
    gone = _transitions(after.history(), before.history())
    shown = after.path(HISTORY_FILE)
    return [{"file": shown, "path": "(entry)", "old": entry, "new": None} for entry in gone]


def _entry_key(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, default=str)


def _state_changes(
    old: dict[str, Any], new: dict[str, Any], sections: dict[str, list[Any]], *, added: bool, file: str
) -> None:
    """Lifecycle, phases, position and field changes of STATE.md (`file`, as shown)."""
    old_life, new_life = _dict(old.get("lifecycle")), _dict(new.get("lifecycle"))
    if not sections["lifecycle"] and not added and old_life.get("state") != new_life.get("state"):
        sections["lifecycle"].append(
            {
                "from": old_life.get("state"),
                "to": new_life.get("state"),
                "at": new_life.get("since"),
                "trigger": None,
                "reason": new_life.get("reason"),
                "by": new_life.get("by"),
            }
        )
    if added:
        return  # a new initiative: its transitions say enough; every field would be "added"
    skip = {"updated", "phases", *POSITION_FIELDS}
    if sections["lifecycle"]:
        skip.add("lifecycle")
    for name in POSITION_FIELDS:
        sections["position"].extend(
            _change(file, p, a, b)
            for p, a, b in field_changes(old.get(name, _MISSING), new.get(name, _MISSING), name, _kind(State, name))
        )
    old_phases, new_phases = _numbered(old), _numbered(new)
    for number in sorted(set(old_phases) | set(new_phases)):
        before, after = old_phases.get(number), new_phases.get(number)
        prefix = f"phases[{number}]"
        if before is None or after is None:
            phase = after if after is not None else before
            event = "added" if after is not None else "removed"
            sections["phases"].append({"phase": number, "name": _dict(phase).get("name"), "event": event})
            continue
        events = phase_events(number, _dict(before), _dict(after))
        sections["phases"].extend(events)
        covered = set(PHASE_EVENT_FIELDS) if events else set()
        old_p, new_p = _dict(before), _dict(after)
        for name in _ordered_keys(old_p, new_p, Phase):
            if name in covered or _derived(Phase, name):
                continue
            found = field_changes(
                old_p.get(name, _MISSING), new_p.get(name, _MISSING), f"{prefix}.{name}", _kind(Phase, name)
            )
            sections["fields"].extend(_change(file, p, a, b) for p, a, b in found)
    for name in _ordered_keys(old, new, State):
        if name in skip or _derived(State, name):
            continue
        found = field_changes(old.get(name, _MISSING), new.get(name, _MISSING), name, _kind(State, name))
        sections["fields"].extend(_change(file, p, a, b) for p, a, b in found)


def _numbered(state: dict[str, Any]) -> dict[int, Any]:
    """The phases of a state by their number."""
    phases = state.get("phases")
    if not isinstance(phases, list):
        return {}
    first = first_phase(state)
    return {first + i: phase for i, phase in enumerate(phases)}


def phase_events(number: int, old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """What happened to one phase: retried, started, completed, failed, skipped, or a new checkpoint result."""
    name = new.get("name")
    events: list[dict[str, Any]] = []
    status, was = new.get("status", "pending"), old.get("status", "pending")
    old_previous, new_previous = _list(old.get("previous")), _list(new.get("previous"))
    base = {"phase": number, "name": name}
    if len(new_previous) > len(old_previous):
        last = _dict(new_previous[-1])
        events.append(
            {**base, "event": "retried", "attempt": new.get("attempts"), "previous_failure": last.get("failure")}
        )
        was = "pending"  # the new attempt starts from scratch: report where it got to
    if status == was and not events:
        if new.get("checkpoint") != old.get("checkpoint") and new.get("checkpoint") not in (None, "pending"):
            events.append(
                {
                    **base,
                    "event": "checkpoint",
                    "checkpoint": new.get("checkpoint"),
                    "evidence": new.get("evidence") or {},
                }
            )
        return events
    if status == "active":
        if not events:  # after "retried", the phase is active again: that says it
            events.append({**base, "event": "started", "started": new.get("started"), "attempt": new.get("attempts")})
    elif status == "completed":
        events.append(
            {
                **base,
                "event": "completed",
                "started": new.get("started"),
                "completed": new.get("completed"),
                "duration_seconds": _seconds(new.get("started"), new.get("completed")),
                "checkpoint": new.get("checkpoint"),
                "evidence": new.get("evidence") or {},
            }
        )
    elif status == "failed":
        events.append(
            {
                **base,
                "event": "failed",
                "failure": new.get("failure"),
                "checkpoint": new.get("checkpoint"),
                "evidence": new.get("evidence") or {},
            }
        )
    elif status == "skipped":
        events.append({**base, "event": "skipped", "reason": new.get("skip_reason")})
    elif status != was:
        events.append({**base, "event": "reset", "from": was, "to": status})
    return events


def _seconds(start: Any, end: Any) -> float | None:
    a, b = parse_datetime(start), parse_datetime(end)
    if a is None or b is None:
        return None
    value = (b - a).total_seconds()
    return int(value) if value == int(value) else value


# ---------------------------------------------------------------------------- records


def _record_changes(
    before: _Side, after: _Side, folder: str, kind: str, model: type[Model], fields: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The events of one record kind, by record id; other field changes go to `fields`."""
    old_names = {n for n in before.files if n.startswith(folder + "/")}
    new_names = {n for n in after.files if n.startswith(folder + "/")}
    same = {n for n in old_names & new_names if before.files[n] == after.files[n]}
    old_records = _by_id(before, sorted(old_names - same), model)
    new_records = _by_id(after, sorted(new_names - same), model)
    events: list[dict[str, Any]] = []
    for record_id in sorted(set(old_records) | set(new_records), key=lambda i: _sort_key(old_records, new_records, i)):
        old_entry, new_entry = old_records.get(record_id), new_records.get(record_id)
        name = (new_entry or old_entry)[0]  # type: ignore[index]
        old_data = old_entry[1] if old_entry else None
        new_data = new_entry[1] if new_entry else None
        found = RECORD_EVENTS[kind](record_id, old_data, new_data, new_records)
        for event in found:
            event["file"] = after.path(name) if new_entry else before.path(name)
        events.extend(found)
        if old_data is None or new_data is None:
            continue
        covered = set(RECORD_EVENT_FIELDS[kind]) if found else set()
        for key in _ordered_keys(old_data, new_data, model):
            if key in covered or _derived(model, key):
                continue
            changes = field_changes(old_data.get(key, _MISSING), new_data.get(key, _MISSING), key, _kind(model, key))
            fields.extend(_change(after.path(name), p, a, b) for p, a, b in changes)
    return events


def _sort_key(old: dict[str, Any], new: dict[str, Any], record_id: str) -> tuple[str, str, str]:
    """Records in the order they were made (`date`, `identified`, `started`), then by title or agent and id."""
    entry = new.get(record_id) or old.get(record_id)
    data = entry[1] if entry else {}
    made = data.get("identified") or data.get("started") or data.get("date") or ""
    return (str(made), str(data.get("title") or data.get("agent") or ""), record_id)


def _by_id(side: _Side, names: list[str], model: type[Model]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The readable records of `names` by id (the file's stem when it has none); the first of a duplicated id wins."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in names:
        data = side.front(name, model)
        if data is None:
            continue
        record_id = data.get("id")
        key = record_id if isinstance(record_id, str) else name.rsplit("/", 1)[-1].removesuffix(".md")
        out.setdefault(key, (name, data))
    return out


def _decision_events(
    record_id: str, old: dict[str, Any] | None, new: dict[str, Any] | None, records: dict[str, Any]
) -> list[dict[str, Any]]:
    """Added, removed, accepted, rejected, superseded (and by which decision)."""
    data = new if new is not None else old or {}
    base = {"id": record_id, "title": data.get("title"), "status": data.get("status", "accepted")}
    if new is None:
        return [{**base, "event": "removed"}]
    if old is None:
        return [{**base, "event": "added", "decision": new.get("decision"), "by": new.get("by")}]
    status = new.get("status", "accepted")
    if status == old.get("status", "accepted"):
        return []
    if status == "superseded":
        by = new.get("superseded_by")
        other = records.get(by) if isinstance(by, str) else None
        title = other[1].get("title") if other else None
        return [{**base, "event": "superseded", "superseded_by": by, "superseded_by_title": title}]
    if status == "rejected":
        return [{**base, "event": "rejected", "rejection": new.get("rejection")}]
    if status == "accepted":
        return [{**base, "event": "accepted"}]
    return [{**base, "event": "status", "from": old.get("status", "accepted"), "to": status}]


def _blocker_events(
    record_id: str, old: dict[str, Any] | None, new: dict[str, Any] | None, records: dict[str, Any]
) -> list[dict[str, Any]]:
    """Added, removed, activated, bypassed (workaround), resolved (resolution)."""
    data = new if new is not None else old or {}
    base = {"id": record_id, "title": data.get("title"), "status": data.get("status")}
    if new is None:
        return [{**base, "event": "removed"}]
    if old is None:
        return [{**base, "event": "added", "description": new.get("description"), "affects": new.get("affects") or []}]
    status, was = new.get("status"), old.get("status")
    if status == was:
        return []
    new_log = _list(new.get("log"))[len(_list(old.get("log"))) :]
    why = None
    if new_log:
        match = _LOG_LINE.match(str(new_log[-1]))
        why = match.group(1) if match else None
    if status == "active":
        return [{**base, "event": "activated", "from": was, "reason": why}]
    if status == "bypassed":
        return [{**base, "event": "bypassed", "workaround": new.get("workaround")}]
    if status == "resolved":
        return [{**base, "event": "resolved", "resolution": new.get("resolution"), "resolved": new.get("resolved")}]
    return [{**base, "event": "status", "from": was, "to": status}]


def _session_events(
    record_id: str, old: dict[str, Any] | None, new: dict[str, Any] | None, records: dict[str, Any]
) -> list[dict[str, Any]]:
    """Started (agent, working on), ended (handoff, completed items), crashed, removed."""
    data = new if new is not None else old or {}
    base = {"id": record_id, "agent": data.get("agent"), "status": data.get("status")}
    if new is None:
        return [{**base, "event": "removed"}]
    events: list[dict[str, Any]] = []
    if old is None:
        events.append({**base, "event": "started", "started": new.get("started"), "working_on": new.get("working_on")})
        old = {"status": "active"}
    status, was = new.get("status"), old.get("status")
    if status == was:
        return events
    completed = _added_items(old.get("completed"), new.get("completed"))
    issues = _added_items(old.get("issues"), new.get("issues"))
    if status == "ended":
        events.append(
            {
                **base,
                "event": "ended",
                "ended": new.get("ended"),
                "duration_seconds": _seconds(new.get("started"), new.get("ended")),
                "handoff_reason": new.get("handoff_reason"),
                "completed": completed,
                "issues": issues,
            }
        )
    elif status == "crashed":
        events.append({**base, "event": "crashed", "ended": new.get("ended"), "issues": issues})
    else:
        events.append({**base, "event": "status", "from": was, "to": status})
    return events


RECORD_EVENTS = {"decision": _decision_events, "blocker": _blocker_events, "session": _session_events}


def _added_items(old: Any, new: Any) -> list[Any]:
    remaining = list(_list(old))
    out = []
    for item in _list(new):
        if item in remaining:
            remaining.remove(item)
        else:
            out.append(item)
    return out


# ---------------------------------------------------------------------------- field-level changes


def normalize(value: Any, kind: Kind[Any] | None) -> Any:
    """Plain data as JSON-ready values, timestamps (where the schema has one, and datetimes anywhere) as ISO UTC."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            child: Kind[Any] | None = None
            if isinstance(kind, Nested):
                field = kind.model.fields.get(str(key))
                child = field.kind if field is not None else None
            elif isinstance(kind, MapOf):
                child = kind.value
            out[str(key)] = normalize(item, child)
        return out
    if isinstance(value, list):
        return [normalize(item, kind.item if isinstance(kind, ListOf) else None) for item in value]
    if isinstance(kind, DateTime) and not isinstance(value, bool):
        parsed = parse_datetime(value)
        return iso_utc(parsed) if parsed is not None else value
    if isinstance(value, datetime):
        return iso_utc(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def field_changes(old: Any, new: Any, path: str, kind: Kind[Any] | None) -> list[tuple[str, Any, Any]]:
    """The changes from `old` to `new` at `path` as (path, old, new); None stands for absent.

    Mappings are compared key by key, lists of single values as sets of items (`path[]`, one change
    per item added or removed), other lists item by item (`path[i]`); derived fields are skipped.
    """
    while isinstance(kind, Nullable):
        kind = kind.inner
    if _equal(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        model = kind.model if isinstance(kind, Nested) else None
        out: list[tuple[str, Any, Any]] = []
        for key in _ordered_keys(old, new, model):
            child: Kind[Any] | None = None
            if model is not None:
                field = model.fields.get(key)
                if field is not None and field.derived:
                    continue
                child = field.kind if field is not None else None
            elif isinstance(kind, MapOf):
                child = kind.value
            out.extend(field_changes(old.get(key, _MISSING), new.get(key, _MISSING), f"{path}.{_segment(key)}", child))
        return out
    if isinstance(old, list) and isinstance(new, list):
        item = kind.item if isinstance(kind, ListOf) else None
        if all(not isinstance(v, dict | list) for v in (*old, *new)):
            removed = _added_items(new, old)
            added = _added_items(old, new)
            return [(f"{path}[]", v, None) for v in removed] + [(f"{path}[]", None, v) for v in added]
        out = []
        for i in range(max(len(old), len(new))):
            a = old[i] if i < len(old) else _MISSING
            b = new[i] if i < len(new) else _MISSING
            out.extend(field_changes(a, b, f"{path}[{i}]", item))
        return out
    return [(path, None if old is _MISSING else old, None if new is _MISSING else new)]


def _equal(a: Any, b: Any) -> bool:
    """Equal as data: key order does not count, types do (1 is not true, 1 is not 1.0)."""
    if a is _MISSING or b is _MISSING:
        return a is b
    return (
        _entry_key(a) == _entry_key(b)
        if isinstance(a, dict | list) or isinstance(b, dict | list)
        else (type(a) is type(b) and a == b)
    )


def _ordered_keys(old: dict[str, Any], new: dict[str, Any], model: type[Model] | None) -> list[str]:
    """The keys of both mappings: the model's fields in their order, then the others sorted."""
    keys = set(old) | set(new)
    declared = [k for k in (model.fields if model is not None else {}) if k in keys]
    return declared + sorted(keys - set(declared))


def _segment(key: str) -> str:
    return re.sub(r"([\\.\[])", r"\\\1", key)


def _derived(model: type[Model], name: str) -> bool:
    field = model.fields.get(name)
    return field is not None and field.derived


def _kind(model: type[Model], name: str) -> Kind[Any] | None:
    field = model.fields.get(name)
    return field.kind if field is not None else None


def _change(file: str, path: str, old: Any, new: Any) -> dict[str, Any]:
    return {"file": file, "path": path, "old": old, "new": new}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# ---------------------------------------------------------------------------- text and markdown


class _Plain:
    """How the text output writes user text, values and code: as they are."""

    def text(self, value: Any) -> str:
        return _clip(" ".join(str(value).split()))

    def value(self, value: Any) -> str:
        return _clip(_value_text(value))

    def code(self, value: Any) -> str:
        return str(value)

    def strong(self, value: str) -> str:
        return value


class _Markdown(_Plain):
    """How the markdown output writes them: user text escaped (no raw HTML, no links), values and ids as code."""

    def text(self, value: Any) -> str:
        return _md(_clip(" ".join(str(value).split())))

    def value(self, value: Any) -> str:
        return _md_code(_clip(_value_text(value)))

    def code(self, value: Any) -> str:
        return _md_code(str(value))

    def strong(self, value: str) -> str:
        return f"**{value}**"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _value_text(value: Any) -> str:
    """A value on one line: strings in double quotes (JSON escapes), null, numbers and lists as JSON."""
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False)


def _md(text: str) -> str:
    """User text for markdown: one line, no raw HTML, and no emphasis, link, code or heading syntax."""
    return re.sub(r"([\\`*_\[\]#!|~])", r"\\\1", filters.inline(text)).replace("@", "@\u200b")


def _md_code(text: str) -> str:
    return filters.code(text)


def _text_heading(item: InitiativeDiff) -> str:
    title = f" {json.dumps(item.title, ensure_ascii=False)}" if item.title else ""
    state = f", {item.state}" if item.state and item.status != "removed" else ""
    return f"initiative {item.slug}{title} ({item.folder}): {item.status}{state}"


def _lines(item: InitiativeDiff, f: _Plain) -> list[str]:
    """One line per change of an initiative, section by section, written through `f` (plain or markdown)."""
    s = item.sections
    out: list[str] = []
    for t in s["lifecycle"]:
        line = f"{f.strong('lifecycle')}: {t['from'] or '(none)'} → {t['to']}"
        if t.get("trigger"):
            line += f" ({f.code(t['trigger'])})"
        if t.get("by"):
            line += f" by {f.text(t['by'])}"
        if t.get("at"):
            line += f" at {f.text(t['at'])}"
        if t.get("reason"):
            line += f": {f.text(t['reason'])}"
        out.append(line)
    for p in s["phases"]:
        out.append(_phase_line(p, f))
    for c in s["position"]:
        out.append(f"{f.code(c['path'])}: {_change_text(c, f)}")
    for d in s["decisions"]:
        out.append(_decision_line(d, f))
    for b in s["blockers"]:
        out.append(_blocker_line(b, f))
    for e in s["sessions"]:
        out.append(_session_line(e, f))
    for c in s["fields"]:
        name = c["file"].removeprefix(item.folder)
        out.append(f"{f.code(name)}: {f.code(c['path'])}: {_change_text(c, f)}")
    for u in s["unreadable"]:
        side = "older side" if u["side"] == "old" else "newer side"
        out.append(f"{f.strong('unreadable')} ({side}): {f.code(u['file'])}: {f.text(u['message'])}")
    return out


def _change_text(c: dict[str, Any], f: _Plain) -> str:
    """`old → new`; for an item of a list of values (`path[]`), `added X` or `removed X`."""
    if c["path"].endswith("[]"):
        return f"added {f.value(c['new'])}" if c["old"] is None else f"removed {f.value(c['old'])}"
    return f"{f.value(c['old'])} → {f.value(c['new'])}"


def _phase_line(p: dict[str, Any], f: _Plain) -> str:
    head = f"{f.strong('phase ' + str(p['phase']))} {f.text(p.get('name') or '')}".rstrip()
    event = p["event"]
    if event == "completed":
        line = f"{head}: completed"
        if p.get("duration_seconds") is not None:
            line += f" in {show_duration(p['duration_seconds'])}"
        return line + _checkpoint(p, f)
    if event == "failed":
        line = f"{head}: failed" + (f": {f.text(p['failure'])}" if p.get("failure") else "")
        return line + _checkpoint(p, f)
    if event == "skipped":
        return f"{head}: skipped" + (f": {f.text(p['reason'])}" if p.get("reason") else "")
    if event == "started":
        attempt = p.get("attempt")
        return f"{head}: started" + (f" (attempt {attempt})" if isinstance(attempt, int) and attempt > 1 else "")
    if event == "retried":
        line = f"{head}: retried (attempt {p.get('attempt')})"
        return line + (f" after: {f.text(p['previous_failure'])}" if p.get("previous_failure") else "")
    if event == "checkpoint":
        return f"{head}:" + _checkpoint(p, f).removeprefix(";")
    if event == "reset":
        return f"{head}: {p['from']} → {p['to']}"
    return f"{head}: {event}"


def _checkpoint(p: dict[str, Any], f: _Plain) -> str:
    if p.get("checkpoint") in (None, "pending"):
        return ""
    line = f"; checkpoint {p['checkpoint']}"
    evidence = p.get("evidence") or {}
    if evidence:
        line += " (" + ", ".join(f"{f.text(k)}: {f.text(v)}" for k, v in sorted(evidence.items())) + ")"
    return line


def _record_head(kind: str, r: dict[str, Any], f: _Plain, label: Any) -> str:
    return f"{f.strong(kind + ' ' + r['event'])}: {f.code(r['id'])} {f.text(label) if label else ''}".rstrip()


def _decision_line(d: dict[str, Any], f: _Plain) -> str:
    head = _record_head("decision", d, f, d.get("title"))
    event = d["event"]
    if event == "added":
        line = f"{head} ({d.get('status')})"
        return line + (f" by {f.text(d['by'])}" if d.get("by") else "")
    if event == "superseded":
        by = d.get("superseded_by")
        title = f" {f.text(d['superseded_by_title'])}" if d.get("superseded_by_title") else ""
        return f"{head}, by {f.code(by)}{title}" if by else head
    if event == "rejected":
        return head + (f": {f.text(d['rejection'])}" if d.get("rejection") else "")
    if event == "status":
        return f"{head}: {d['from']} → {d['to']}"
    return head


def _blocker_line(b: dict[str, Any], f: _Plain) -> str:
    head = _record_head("blocker", b, f, b.get("title"))
    event = b["event"]
    if event == "added":
        line = f"{head} ({b.get('status')})"
        affects = b.get("affects") or []
        return line + (f", affects {', '.join(f.text(a) for a in affects)}" if affects else "")
    if event == "activated":
        return head + (f": {f.text(b['reason'])}" if b.get("reason") else "")
    if event == "bypassed":
        return head + (f", workaround: {f.text(b['workaround'])}" if b.get("workaround") else "")
    if event == "resolved":
        return head + (f": {f.text(b['resolution'])}" if b.get("resolution") else "")
    if event == "status":
        return f"{head}: {b['from']} → {b['to']}"
    return head


def _session_line(e: dict[str, Any], f: _Plain) -> str:
    head = _record_head("session", e, f, e.get("agent"))
    event = e["event"]
    if event == "started":
        return head + (f", working on {f.text(e['working_on'])}" if e.get("working_on") else "")
    if event == "ended":
        line = head
        if e.get("duration_seconds") is not None:
            line += f" after {show_duration(e['duration_seconds'])}"
        if e.get("handoff_reason"):
            line += f", handoff: {f.text(e['handoff_reason'])}"
        if e.get("completed"):
            line += "; completed: " + "; ".join(f.text(c) for c in e["completed"])
        if e.get("issues"):
            line += "; issues: " + "; ".join(f.text(c) for c in e["issues"])
        return line
    if event == "crashed":
        return head + ("; issues: " + "; ".join(f.text(c) for c in e["issues"]) if e.get("issues") else "")
    if event == "status":
        return f"{head}: {e['from']} → {e['to']}"
    return head
