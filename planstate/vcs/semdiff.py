"""What changed in `.planning/` between two snapshots, read as meaning: a changelog per initiative.

For each initiative: lifecycle transitions (from the new history.jsonl lines, else from a change
of `lifecycle.state`); phases started, completed (with their duration), failed, skipped, retried
and checkpoint results; position and next-action changes; decisions, blockers, sessions and tasks
by what happened to them (added, accepted, superseded, resolved, ended, done ...); and every other field
that changed, as `path: old → new`. Derived fields and `updated` are left out: they follow from
the rest. Files that cannot be read on either side are listed, never fatal.

This module compares: which files and records to read, and what changed in them. Reading one side's
files is diffside.py; what each status change or field appearance means is the tables of difftables.py
(applied by diffevents.py), lifecycle transitions are transitions.py; comparing values field by field is
fieldchanges.py; what the result holds and how it reads is diffresult.py.

Values are compared as the canonical view shows them (planstate/vcs/textconv.py): a timestamp
written with or without quotes, or in another zone, is the same timestamp; key order and
comments do not count. Paths are in planstate's one notation: `phases.2.name` is phase 2's name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from planstate.core.errors import UsageError
from planstate.core.layout import HISTORY_FILE, PLANNING, STATE_FILE
from planstate.model.kinds import Phase, State
from planstate.model.schema import Model
from planstate.text.paths import first_phase, format_path
from planstate.vcs import diffevents, transitions
from planstate.vcs.diffevents import Subject
from planstate.vcs.diffresult import InitiativeDiff, SemanticDiff
from planstate.vcs.diffside import Side, quiet_front
from planstate.vcs.difftables import PHASES, RECORDS
from planstate.vcs.fieldchanges import MISSING, derived, field_changes, kind_of, ordered_keys
from planstate.vcs.snapshot import (
    Snapshot,
    archived,
    at_revision,
    is_ancestor,
    merge_base,
    short_id,
    split,
    working_tree,
)

POSITION_FIELDS = ("position", "next_action")
_LONG_ID = re.compile(r"[0-9a-f]{13,64}")  # a commit id longer than the 12 digits a heading shows of one


# ---------------------------------------------------------------------------- comparing


def between(planning: Path, rev1: str | None = None, rev2: str | None = None) -> SemanticDiff:
    """What changed in `planning` (every initiative): HEAD to the working tree without revisions, `rev1` to the
    working tree with one, `rev1` to `rev2` with two; `rev1` may be `A..B`, or `A...B` (from the merge base of A and
    B to B, as `git diff A...B`). Two revisions of which the first is not an ancestor of the second get a warning
    (`warnings`): their trees differ by what each side did. UsageError when a revision does not exist or the folder
    is not in a git repository."""
    if rev1 is not None and ".." in rev1:
        if rev2 is not None:
            raise UsageError(f"give either the range {rev1!r} or two revisions, not both")
        symmetric = "..." in rev1
        rev1, _, rev2 = rev1.partition("..." if symmetric else "..")
        rev1, rev2 = rev1 or "HEAD", rev2 or "HEAD"
        if symmetric:  # as `git diff A...B`: from where B left A to B
            base = merge_base(planning, rev1, rev2)
            label = f"merge base of {short_name(planning, rev1)} and {short_name(planning, rev2)}"
            return compare(at_revision(planning, base, label=label), at_revision(planning, rev2))
    old = at_revision(planning, rev1 or "HEAD")
    new = working_tree(planning) if rev2 is None else at_revision(planning, rev2)
    result = compare(old, new)
    if rev2 is not None and old.commit and new.commit and not is_ancestor(planning, old.commit, new.commit):
        first = rev1 or "HEAD"
        result.warnings.append(
            f"{first} is not an ancestor of {rev2}: this compares their two trees, so what {first} gained since "
            f"{rev2} left it reads as undone; `planstate diff {first}...{rev2}` compares from their merge base"
        )
    return result


def short_name(planning: Path, revision: str) -> str:
    """A revision as a heading shows it: as given (`main`, `HEAD~2`), but a full commit id by its short form."""
    return short_id(planning, revision) if _LONG_ID.fullmatch(revision) else revision


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


def _initiative(key: str, old_files: dict[str, bytes] | None, new_files: dict[str, bytes] | None) -> InitiativeDiff:
    """Compare one initiative's files (only those whose bytes differ are read)."""
    before, after = Side(key, old_files, "old"), Side(key, new_files, "new")
    status = "added" if old_files is None else "removed" if new_files is None else "changed"
    old_state, new_state = _states(before, after, removed=status == "removed")
    result = _named(key, status, new_state or old_state or quiet_front(after, before))
    if status != "removed":
        _fill(result.sections, before, after, old_state, new_state, added=status == "added")
    return result


def _states(before: Side, after: Side, *, removed: bool) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
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
    before: Side,
    after: Side,
    old_state: dict[str, Any] | None,
    new_state: dict[str, Any] | None,
    *,
    added: bool,
) -> None:
    """Every section of an initiative that exists on the newer side, in the order the changes are listed."""
    if before.changed(after, HISTORY_FILE):
        sections["lifecycle"] = transitions.transitions(before.history(), after.history())
        sections["fields"].extend(_history_removals(before, after))
    if new_state is not None and (old_state is not None or added):
        _state_changes(old_state or {}, new_state, sections, added=added, file=after.path(STATE_FILE))
    for subject in RECORDS:
        sections[subject.section] = _record_changes(before, after, subject, sections["fields"])
    sections["unreadable"] = before.problems + after.problems


def _history_removals(before: Side, after: Side) -> list[dict[str, Any]]:
    """Entries only the older history has: history is append-only, so a removal is worth showing."""
    gone = transitions.transitions(after.history(), before.history())
    shown = after.path(HISTORY_FILE)
    return [{"file": shown, "path": "(entry)", "old": entry, "new": None} for entry in gone]


# ---------------------------------------------------------------------------- STATE.md


def _state_changes(
    old: dict[str, Any], new: dict[str, Any], sections: dict[str, list[Any]], *, added: bool, file: str
) -> None:
    """Lifecycle, phases, position and field changes of STATE.md (`file`, as shown)."""
    if not sections["lifecycle"] and not added:
        sections["lifecycle"] = transitions.state_transition(_dict(old.get("lifecycle")), _dict(new.get("lifecycle")))
    if added:
        return  # a new initiative: its transitions say enough; every field would be "added"
    sections["position"] = [
        _change(file, p, a, b)
        for name in POSITION_FIELDS
        for p, a, b in field_changes(old.get(name, MISSING), new.get(name, MISSING), name, kind_of(State, name))
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
    for name in ordered_keys(old, new, model):
        if name in skip or derived(model, name):
            continue
        found = field_changes(old.get(name, MISSING), new.get(name, MISSING), prefix + name, kind_of(model, name))
        out.extend(_change(file, p, a, b) for p, a, b in found)
    return out


# ---------------------------------------------------------------------------- records


def _record_changes(before: Side, after: Side, subject: Subject, fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of one record kind, by record id; other field changes go to `fields`."""
    old_records, new_records = _changed_records(before, after, subject)
    events: list[dict[str, Any]] = []
    for record_id in sorted(set(old_records) | set(new_records), key=lambda i: _sort_key(old_records, new_records, i)):
        old_entry, new_entry = old_records.get(record_id), new_records.get(record_id)
        old_data, new_data = old_entry[1] if old_entry else None, new_entry[1] if new_entry else None
        moved = (
            old_entry is not None and new_entry is not None and archived(new_entry[0]) and not archived(old_entry[0])
        )
        found = diffevents.events(subject, record_id, old_data, new_data, new_records, archived=moved)
        shown = after.path(new_entry[0]) if new_entry else before.path(old_records[record_id][0])
        events.extend({**event, "file": shown} for event in found)
        if old_data is not None and new_data is not None:
            skip = subject.explains if found else ()
            fields.extend(_own_changes(shown, old_data, new_data, subject.model, skip))
    return events


_Record = tuple[str, dict[str, Any]]  # a record as read: its file name and its front matter


def _changed_records(before: Side, after: Side, subject: Subject) -> tuple[dict[str, _Record], dict[str, _Record]]:
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


def _by_id(side: Side, names: list[str], model: type[Model]) -> dict[str, _Record]:
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


def _change(file: str, path: str, old: Any, new: Any) -> dict[str, Any]:
    return {"file": file, "path": path, "old": old, "new": new}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
