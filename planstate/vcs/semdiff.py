"""What changed in `.planning/` between two snapshots, read as meaning: a changelog per initiative.

For each initiative: lifecycle transitions (from the new history.jsonl lines, else from a change
of `lifecycle.state`); phases started, completed (with their duration), failed, skipped, retried
and checkpoint results; position and next-action changes; decisions, blockers and sessions by
what happened to them (added, accepted, superseded, resolved, ended ...); and every other field
that changed, as `path: old → new`. Derived fields and `updated` are left out: they follow from
the rest. Files that cannot be read on either side are listed, never fatal.

This module compares: which files and records to read, and what changed in them. What each status
change or field appearance means, and how its line reads, is the tables of diffevents.py; how a line
is written as text or markdown is difftext.py.

Values are compared as the canonical view shows them (planstate/vcs/textconv.py): a timestamp
written with or without quotes, or in another zone, is the same timestamp; key order and
comments do not count. Paths are in planstate's one notation: `phases.2.name` is phase 2's name.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

from planstate.core.clock import parse_datetime
from planstate.core.errors import ParseError, PlanstateError, UsageError
from planstate.core.layout import HISTORY_FILE, PLANNING, STATE_FILE
from planstate.model.kinds import Phase, State
from planstate.model.schema import ListOf, MapOf, Model, Nested
from planstate.model.types import DateTime, Kind, Nullable
from planstate.text.paths import first_phase, format_path
from planstate.vcs import diffevents
from planstate.vcs.diffevents import PHASES, RECORDS, Subject, added_items, entry_key, line, transition_line
from planstate.vcs.difftext import Markdown, Plain, md, md_code
from planstate.vcs.snapshot import Snapshot, at_revision, merge_base, split, working_tree
from planstate.vcs.textconv import iso_utc

SECTIONS = ("lifecycle", "phases", "position", "decisions", "blockers", "sessions", "fields", "unreadable")
POSITION_FIELDS = ("position", "next_action")
_MISSING: Any = object()


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

    def lines(self, f: Plain) -> list[str]:
        """One line per change, section by section, written through `f` (plain or markdown)."""
        s = self.sections
        out = [transition_line(t, f) for t in s["lifecycle"]]
        out.extend(line(PHASES, p, f) for p in s["phases"])
        out.extend(f"{f.code(c['path'])}: {_change_text(c, f)}" for c in s["position"])
        for subject in RECORDS:
            out.extend(line(subject, r, f) for r in s[subject.section])
        for c in s["fields"]:
            name = c["file"].removeprefix(self.folder)
            out.append(f"{f.code(name)}: {f.code(c['path'])}: {_change_text(c, f)}")
        for u in s["unreadable"]:
            side = "older side" if u["side"] == "old" else "newer side"
            out.append(f"{f.strong('unreadable')} ({side}): {f.code(u['file'])}: {f.text(u['message'])}")
        return out


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
                found[key] = InitiativeDiff(key, _slug_of(key), "", "changed", None)
            found[key].sections["unreadable"].append({"file": f"{PLANNING}/{path}", "side": side, "message": message})
    return SemanticDiff(old, new, list(found.values()))


def _slug_of(key: str) -> str:
    """An initiative's slug from its folder when STATE.md does not say: `(root)` for `.planning/` itself."""
    return key.rsplit("/", 1)[-1] or "(root)"


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

    def changed(self, other: _Side, name: str) -> bool:
        """Tell whether file `name` differs between this side and `other`."""
        return self.files.get(name) != other.files.get(name)


def _location_free(exc: PlanstateError) -> str:
    """An error's message with its line and column (the file is given beside it)."""
    where = f"line {exc.line}" + (f", column {exc.column}" if exc.column else "") + ": " if exc.line else ""
    field = f"{exc.field}: " if exc.field else ""
    return f"{where}{field}{exc.message}"


def _initiative(key: str, old_files: dict[str, bytes] | None, new_files: dict[str, bytes] | None) -> InitiativeDiff:
    """Compare one initiative's files (only those whose bytes differ are read)."""
    before, after = _Side(key, old_files, "old"), _Side(key, new_files, "new")
    status = "added" if old_files is None else "removed" if new_files is None else "changed"
    old_state, new_state = _states(before, after, removed=status == "removed")
    result = _named(key, status, new_state or old_state or _quiet_front(after, before))
    if status != "removed":
        _fill(result.sections, before, after, old_state, new_state, added=status == "added")
    return result


def _states(before: _Side, after: _Side, *, removed: bool) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """STATE.md's front matter on each side, read only when its bytes changed (and the older one only when the
    initiative is still there)."""
    if not before.changed(after, STATE_FILE):
        return None, None
    return (None if removed else before.front(STATE_FILE, State)), after.front(STATE_FILE, State)


def _named(key: str, status: str, state: dict[str, Any]) -> InitiativeDiff:
    """An initiative's diff, named by its STATE.md (`state`: the newer side's when it has one)."""
    lifecycle = state.get("lifecycle")
    return InitiativeDiff(
        key,
        str(state.get("initiative") or _slug_of(key)),
        str(state.get("title") or ""),
        status,
        lifecycle.get("state") if isinstance(lifecycle, dict) else None,
    )


def _fill(
    sections: dict[str, list[dict[str, Any]]],
    before: _Side,
    after: _Side,
    old_state: dict[str, Any] | None,
    new_state: dict[str, Any] | None,
    *,
    added: bool,
) -> None:
    """Every section of an initiative that exists on the newer side, in the order the changes are listed."""
    if before.changed(after, HISTORY_FILE):
        sections["lifecycle"] = diffevents.transitions(before.history(), after.history())
        sections["fields"].extend(_history_removals(before, after))
    if new_state is not None and (old_state is not None or added):
        _state_changes(old_state or {}, new_state, sections, added=added, file=after.path(STATE_FILE))
    for subject in RECORDS:
        sections[subject.section] = _record_changes(before, after, subject, sections["fields"])
    sections["unreadable"] = before.problems + after.problems


def _quiet_front(after: _Side, before: _Side) -> dict[str, Any]:
    """A STATE.md's front matter (the newer side's if it has one) for its name and title only: {} when it cannot
    be read (reported elsewhere)."""
    from planstate.text.document import Document

    try:
        front = Document.from_bytes(after.files.get(STATE_FILE) or before.files.get(STATE_FILE) or b"").data
    except PlanstateError:
        return {}
    return front if isinstance(front, dict) else {}


def _history_removals(before: _Side, after: _Side) -> list[dict[str, Any]]:
    """Entries only the older history has: history is append-only, so a removal is worth showing."""
    gone = diffevents.transitions(after.history(), before.history())
    shown = after.path(HISTORY_FILE)
    return [{"file": shown, "path": "(entry)", "old": entry, "new": None} for entry in gone]


# ---------------------------------------------------------------------------- STATE.md


def _state_changes(
    old: dict[str, Any], new: dict[str, Any], sections: dict[str, list[Any]], *, added: bool, file: str
) -> None:
    """Lifecycle, phases, position and field changes of STATE.md (`file`, as shown)."""
    if not sections["lifecycle"] and not added:
        sections["lifecycle"] = diffevents.state_transition(_dict(old.get("lifecycle")), _dict(new.get("lifecycle")))
    if added:
        return  # a new initiative: its transitions say enough; every field would be "added"
    sections["position"] = [
        _change(file, p, a, b)
        for name in POSITION_FIELDS
        for p, a, b in field_changes(old.get(name, _MISSING), new.get(name, _MISSING), name, _kind(State, name))
    ]
    _phase_changes(old, new, sections, file)
    skip = ("updated", "phases", *POSITION_FIELDS, *(("lifecycle",) if sections["lifecycle"] else ()))
    sections["fields"].extend(_own_changes(file, old, new, State, skip))


def _phase_changes(old: dict[str, Any], new: dict[str, Any], sections: dict[str, list[Any]], file: str) -> None:
    """Phase by phase (matched by number): its events, and the changes of fields no event explains."""
    old_phases, new_phases = _numbered(old), _numbered(new)
    for number in sorted(set(old_phases) | set(new_phases)):
        before, after = _present(old_phases.get(number)), _present(new_phases.get(number))
        events = diffevents.events(PHASES, number, before, after, {})
        sections["phases"].extend(events)
        if before is not None and after is not None:
            skip = PHASES.explains if events else ()
            prefix = format_path(["phases", number]) + "."
            sections["fields"].extend(_own_changes(file, before, after, Phase, skip, prefix))


def _numbered(state: dict[str, Any]) -> dict[int, Any]:
    """The phases of a state by their number."""
    phases = state.get("phases")
    if not isinstance(phases, list):
        return {}
    first = first_phase(state)
    return {first + i: phase for i, phase in enumerate(phases)}


def _present(phase: Any) -> dict[str, Any] | None:
    """A phase as its events read it: None when the list has no such item (or a null), else its mapping."""
    return None if phase is None else _dict(phase)


def _own_changes(
    file: str,
    old: dict[str, Any],
    new: dict[str, Any],
    model: type[Model],
    skip: tuple[str, ...],
    prefix: str = "",
) -> list[dict[str, Any]]:
    """The field changes of a file's (or a phase's) own fields, but those in `skip` and derived ones."""
    out: list[dict[str, Any]] = []
    for name in _ordered_keys(old, new, model):
        if name in skip or _derived(model, name):
            continue
        found = field_changes(old.get(name, _MISSING), new.get(name, _MISSING), prefix + name, _kind(model, name))
        out.extend(_change(file, p, a, b) for p, a, b in found)
    return out


# ---------------------------------------------------------------------------- records


def _record_changes(
    before: _Side, after: _Side, subject: Subject, fields: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The events of one record kind, by record id; other field changes go to `fields`."""
    old_records, new_records = _changed_records(before, after, subject)
    events: list[dict[str, Any]] = []
    for record_id in sorted(set(old_records) | set(new_records), key=lambda i: _sort_key(old_records, new_records, i)):
        old_entry, new_entry = old_records.get(record_id), new_records.get(record_id)
        old_data, new_data = old_entry[1] if old_entry else None, new_entry[1] if new_entry else None
        found = diffevents.events(subject, record_id, old_data, new_data, new_records)
        shown = after.path(new_entry[0]) if new_entry else before.path(old_records[record_id][0])
        events.extend({**event, "file": shown} for event in found)
        if old_data is not None and new_data is not None:
            skip = subject.explains if found else ()
            fields.extend(_own_changes(shown, old_data, new_data, subject.model, skip))
    return events


_Record = tuple[str, dict[str, Any]]  # a record as read: its file name and its front matter


def _changed_records(before: _Side, after: _Side, subject: Subject) -> tuple[dict[str, _Record], dict[str, _Record]]:
    """The records of a kind on each side, by id, leaving out files whose bytes did not change."""
    folder = subject.section + "/"
    old_names = {n for n in before.files if n.startswith(folder)}
    new_names = {n for n in after.files if n.startswith(folder)}
    same = {n for n in old_names & new_names if before.files[n] == after.files[n]}
    model = subject.model
    return _by_id(before, sorted(old_names - same), model), _by_id(after, sorted(new_names - same), model)


def _sort_key(old: dict[str, Any], new: dict[str, Any], record_id: str) -> tuple[str, str, str]:
    """Records in the order they were made (`date`, `identified`, `started`), then by title or agent and id."""
    entry = new.get(record_id) or old.get(record_id)
    data = entry[1] if entry else {}
    made = data.get("identified") or data.get("started") or data.get("date") or ""
    return (str(made), str(data.get("title") or data.get("agent") or ""), record_id)


def _by_id(side: _Side, names: list[str], model: type[Model]) -> dict[str, _Record]:
    """The readable records of `names` by id (the file's stem when it has none); the first of a duplicated id wins."""
    out: dict[str, _Record] = {}
    for name in names:
        data = side.front(name, model)
        if data is None:
            continue
        record_id = data.get("id")
        key = record_id if isinstance(record_id, str) else name.rsplit("/", 1)[-1].removesuffix(".md")
        out.setdefault(key, (name, data))
    return out


# ---------------------------------------------------------------------------- field-level changes


def normalize(value: Any, kind: Kind[Any] | None) -> Any:
    """Plain data as JSON-ready values, timestamps (where the schema has one, and datetimes anywhere) as ISO UTC."""
    kind = _bare(kind)
    if isinstance(value, dict):
        return {str(key): normalize(item, _child(kind, str(key))) for key, item in value.items()}
    if isinstance(value, list):
        return [normalize(item, kind.item if isinstance(kind, ListOf) else None) for item in value]
    return _scalar(value, kind)


def _scalar(value: Any, kind: Kind[Any] | None) -> Any:
    """A single value as JSON shows it: a timestamp (or a text the schema says is one) in ISO UTC, a date ISO."""
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
    kind = _bare(kind)
    if _equal(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        return _mapping_changes(old, new, path, kind)
    if isinstance(old, list) and isinstance(new, list):
        return _list_changes(old, new, path, kind)
    return [(path, None if old is _MISSING else old, None if new is _MISSING else new)]


def _mapping_changes(
    old: dict[str, Any], new: dict[str, Any], path: str, kind: Kind[Any] | None
) -> list[tuple[str, Any, Any]]:
    """Key by key, the model's fields first; derived fields are left out."""
    model = kind.model if isinstance(kind, Nested) else None
    out: list[tuple[str, Any, Any]] = []
    for key in _ordered_keys(old, new, model):
        if model is not None and _derived(model, key):
            continue
        child = _child(kind, key)
        out.extend(field_changes(old.get(key, _MISSING), new.get(key, _MISSING), f"{path}.{_segment(key)}", child))
    return out


def _list_changes(old: list[Any], new: list[Any], path: str, kind: Kind[Any] | None) -> list[tuple[str, Any, Any]]:
    """A list of single values as a set (`path[]`: each item removed, then each added); others item by item."""
    if all(not isinstance(v, dict | list) for v in (*old, *new)):
        removed, added = added_items(new, old), added_items(old, new)
        return [(f"{path}[]", v, None) for v in removed] + [(f"{path}[]", None, v) for v in added]
    item = kind.item if isinstance(kind, ListOf) else None
    out: list[tuple[str, Any, Any]] = []
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else _MISSING
        b = new[i] if i < len(new) else _MISSING
        out.extend(field_changes(a, b, f"{path}.{i}", item))
    return out


def _equal(a: Any, b: Any) -> bool:
    """Equal as data: key order does not count, types do (1 is not true, 1 is not 1.0)."""
    if a is _MISSING or b is _MISSING:
        return a is b
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return entry_key(a) == entry_key(b)
    return type(a) is type(b) and a == b


def _ordered_keys(old: dict[str, Any], new: dict[str, Any], model: type[Model] | None) -> list[str]:
    """The keys of both mappings: the model's fields in their order, then the others sorted."""
    keys = set(old) | set(new)
    declared = [k for k in (model.fields if model is not None else {}) if k in keys]
    return declared + sorted(keys - set(declared))


def _bare(kind: Kind[Any] | None) -> Kind[Any] | None:
    """A kind without its Nullable wrappers."""
    while isinstance(kind, Nullable):
        kind = kind.inner
    return kind


def _child(kind: Kind[Any] | None, key: str) -> Kind[Any] | None:
    """The kind of the value under `key` of a mapping of `kind`: a model's field, a map's values, else unknown."""
    if isinstance(kind, Nested):
        return _kind(kind.model, key)
    if isinstance(kind, MapOf):
        return kind.value
    return None


def _segment(key: str) -> str:
    return format_path([key])


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
