"""`planstate git merge-driver`: merge one planning file three ways, keeping our side's text and layout.

The front matter merges field by field (merge.py, by the rules of mergerules.py) and is spliced
into our side's text, so our comments and formatting stay. A field both sides changed
differently gets standard conflict markers around its lines only. The body merges with
`git merge-file`; generated regions are taken whole from the side that changed them, then rendered
again from the merged front matter and, for those that show records, from the records the merge
will hold (recordsets.py). history.jsonl merges as the union of its
entries. When a side does not parse, git's own text merge decides.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core import git
from planstate.core.errors import PlanstateError
from planstate.core.layout import ARCHIVE, HISTORY_FILE, PLANNING, STATE_FILE
from planstate.model.kinds import RECORD_KINDS, SCHEMA_VERSION, to_json
from planstate.model.validation import problems_for
from planstate.render.regions import RECORD_REGIONS
from planstate.text.conflicts import write_hunk
from planstate.text.document import Document
from planstate.text.markers import Layout, parse, split_lines
from planstate.text.paths import shown_path
from planstate.text.plaindata import same
from planstate.vcs import merge
from planstate.vcs.merge import MISSING, Conflict

if TYPE_CHECKING:
    from planstate.render.sources import Loader


class FileMerge(NamedTuple):
    """The merged bytes, the fields (or text) in conflict, and why git's text merge was used, if it was."""

    data: bytes
    conflicts: list[str]
    fallback: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """Whether the merge left no conflict."""
        return not self.conflicts


def kind_of(name: str) -> str | None:
    """The kind of planning file a repository path names: state, decision, blocker, session, history, or None."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.name == STATE_FILE:
        return "state"
    if path.name == HISTORY_FILE:
        return "history"
    if path.suffix == ".md" and path.parent.name in RECORD_KINDS:
        return RECORD_KINDS[path.parent.name]
    if path.suffix == ".md" and path.parent.name == ARCHIVE and path.parent.parent.name in RECORD_KINDS:
        return RECORD_KINDS[path.parent.parent.name]  # an archived record
    return None


def merge_driver(
    base: str,
    ours: str,
    theirs: str,
    *,
    marker_size: int = 7,
    path: str | None = None,
    ours_label: str = "ours",
    theirs_label: str = "theirs",
) -> int:
    """Merge the files git names into `ours`; 0 when clean, 1 with conflict markers (git then reports a conflict).

    What cannot be merged (a side that is missing or binary) is refused with PlanstateError, and `ours` is left
    as it is: git then reports the file as conflicted, with our side in the work tree.
    """
    name = path or ours
    sides = [_read(p) for p in (base, ours, theirs)]
    for data, side in zip(sides, ("base", "ours", "theirs"), strict=True):
        if b"\0" in data:
            raise PlanstateError(
                f"cannot merge binary files ({side} has NUL bytes); our side is kept as it is", file=name
            )
    labels = (ours_label, theirs_label)
    try:
        result = merge_bytes(*sides, name=name, marker_size=marker_size, labels=labels, planning=planning_of(name))
    except Exception as exc:  # a bug of ours must not cost the user the merge: git's line merge still works
        if isinstance(exc, PlanstateError) and "merge-file" in exc.message:
            raise PlanstateError(f"{exc.message}; our side is kept as it is", file=name) from None
        result = _text_merge(
            sides[0], sides[1], sides[2], labels, marker_size, f"planstate failed ({type(exc).__name__}: {exc})"
        )
    Path(ours).write_bytes(result.data)
    shown = path or ours
    if result.fallback:
        sys.stderr.write(f"planstate: merge: {shown}: {result.fallback}; merged as text by git\n")
    for warning in result.warnings:
        sys.stderr.write(f"planstate: merge: {shown}: warning: {warning}\n")
    for conflict in result.conflicts:
        sys.stderr.write(f"planstate: merge: {shown}: conflict: {conflict}\n")
    if result.conflicts:
        sys.stderr.write(
            f"planstate: merge: {shown}: keep one side between the markers, then `planstate check` and `git add`\n"
        )
    return 0 if result.clean else 1


def planning_of(name: str) -> Path | None:
    """The `.planning/` folder a repository path lies in (git runs drivers at the work tree's top), if it exists."""
    path = Path(name)
    for parent in path.parents:
        if parent.name == PLANNING:
            return parent if parent.is_dir() else None
    return None


def merge_bytes(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    *,
    name: str,
    marker_size: int = 7,
    labels: tuple[str, str] = ("ours", "theirs"),
    planning: Path | None = None,
) -> FileMerge:
    """Merge three versions of the planning file `name` (a repository path: it decides the file's kind)."""
    kind = kind_of(name)
    if kind is None:
        return _text_merge(base, ours, theirs, labels, marker_size, "not a planning file")
    if kind == "history":
        return _history(base, ours, theirs, labels, marker_size)
    try:
        docs = [Document.from_bytes(side, name) if side else None for side in (base, ours, theirs)]
    except PlanstateError as exc:
        return _text_merge(base, ours, theirs, labels, marker_size, f"a side does not parse ({exc.message})")
    _, doc_ours, doc_theirs = docs
    if doc_ours is None or doc_theirs is None:
        return _text_merge(base, ours, theirs, labels, marker_size, "a side is empty")
    why = _unmergeable(docs)
    if why:
        return _text_merge(base, ours, theirs, labels, marker_size, why)
    data = [doc.data if doc is not None else None for doc in docs]
    merged = merge.merge(kind, *data)
    warnings: list[str] = []
    body, body_conflicts = _merge_body(
        kind,
        [doc.body if doc is not None else "" for doc in docs],
        labels,
        marker_size,
        doc_ours.newline,
    )
    out = Document.from_bytes(ours, name)
    try:
        out.update(merged.data)
    except PlanstateError as exc:
        return _text_merge(base, ours, theirs, labels, marker_size, f"cannot write the merged fields ({exc.message})")
    out.set_body(body)
    broken = problems_for(kind, merged.data) if not merged.conflicts else []
    if kind == "state" and not merged.conflicts and not body_conflicts and not broken:
        warnings += _render(out, planning, name, (base, ours, theirs))
    warnings += [
        f"the merged front matter breaks a rule at {shown_path(p.path, merged.data)}: {p.message}" for p in broken
    ]
    try:
        text = _mark(out, merged.conflicts, labels, marker_size)
    except PlanstateError as exc:
        return _text_merge(base, ours, theirs, labels, marker_size, f"cannot mark the conflicts ({exc.message})")
    conflicts = [_described(c, merged.data) for c in merged.conflicts]
    if body_conflicts:
        conflicts.append(f"{body_conflicts} conflicting change{'s' if body_conflicts > 1 else ''} in the markdown body")
    return FileMerge(text, conflicts, None, tuple(warnings))


# ---------------------------------------------------------------------------- fallbacks


def _text_merge(
    base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str], marker_size: int, why: str
) -> FileMerge:
    """Git's own line merge, for a file planstate cannot merge field by field."""
    done = git.merge_text(ours, base, theirs, (labels[0], "base", labels[1]), marker_size)
    if done is None:
        raise PlanstateError("git merge-file is not available: cannot merge this file")
    data, count = done
    return FileMerge(data, [f"{count} conflicting change{'s' if count > 1 else ''} (text merge)"] if count else [], why)


def _unmergeable(docs: list[Document | None]) -> str | None:
    """Why field-level merging cannot be trusted here (no front matter, a newer format), or None."""
    for doc, side in zip(docs, ("base", "ours", "theirs"), strict=True):
        if doc is None:
            continue
        if not doc.has_front_matter:
            return f"{side} has no front matter"
        data = doc.data
        if not isinstance(data, dict):
            return f"{side}'s front matter is not a mapping"
        version = data.get("schema_version")
        if isinstance(version, int) and version > SCHEMA_VERSION:
            return f"{side} is schema_version {version}, newer than this planstate understands ({SCHEMA_VERSION})"
    return None


# ---------------------------------------------------------------------------- history.jsonl


def _history(base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str], marker_size: int) -> FileMerge:
    """The union of three histories' lines, ordered by `at`; identical entries once."""
    try:
        sides = [data.decode("utf-8").splitlines() for data in (base, ours, theirs)]
    except UnicodeDecodeError:
        return _text_merge(base, ours, theirs, labels, marker_size, "a side is not UTF-8 text")
    keyed: dict[str, tuple[str, tuple[int, str]]] = {}  # identity -> (the line as first seen, its sort key)
    listed: list[list[str]] = []
    for lines in sides:
        keys = []
        for line in lines:
            if not line.strip():
                continue
            key, order = _entry(line)
            keyed.setdefault(key, (line, order))
            keys.append(key)
        listed.append(keys)
    keys = merge.union(*listed, ordered=False)
    entries = sorted(keys, key=lambda key: keyed[key][1])
    text = "".join(keyed[key][0] + "\n" for key in entries)
    return FileMerge(text.encode("utf-8"), [])


def _entry(line: str) -> tuple[str, tuple[int, str]]:
    """A history line's identity (its JSON in canonical form, else the line itself) and its sort key (its `at`;
    lines without one sort last, in their order)."""
    try:
        item = json.loads(line)
    except ValueError:
        return line.strip(), (1, "")
    when = merge.when(item.get("at")) if isinstance(item, dict) else None
    order = (0, when.isoformat()) if when is not None else (1, "")
    return json.dumps(item, sort_keys=True, ensure_ascii=False), order


# ---------------------------------------------------------------------------- the body


def _merge_body(
    kind: str, bodies: list[str], labels: tuple[str, str], marker_size: int, newline: str
) -> tuple[str, int]:
    """Merge three bodies: generated regions whole (the side that changed one wins), the rest with git merge-file."""
    base, ours, theirs = bodies
    if ours == theirs or base == theirs:
        return ours, 0
    if base == ours:
        return theirs, 0
    layouts = [parse(body) for body in bodies] if kind == "state" else [Layout([]) for _ in bodies]
    chosen = _choose_regions(layouts)
    collapsed = [_collapse(body, layout) for body, layout in zip(bodies, layouts, strict=True)]
    done = git.merge_text(
        collapsed[1].encode("utf-8", "surrogateescape"),
        collapsed[0].encode("utf-8", "surrogateescape"),
        collapsed[2].encode("utf-8", "surrogateescape"),
        (labels[0], "base", labels[1]),
        marker_size,
    )
    if done is None:
        raise PlanstateError("git merge-file is not available: cannot merge the markdown body")
    text, count = done
    return _expand(text.decode("utf-8", "surrogateescape"), chosen), count


def _regions_of(layout: Layout) -> dict[str, str]:
    """Each region's whole text (both marker lines included), by name."""
    return {r.name: "".join(layout.lines[r.begin : r.end + 1]) for r in layout.regions}


def _choose_regions(layouts: list[Layout]) -> dict[str, str]:
    """Per region: the text of the side that changed it (ours when both did; the render after the merge decides)."""
    base, ours, theirs = (_regions_of(layout) for layout in layouts)
    chosen: dict[str, str] = {}
    for name in {**ours, **theirs}:
        mine, other = ours.get(name), theirs.get(name)
        if mine is not None and (other is None or mine != base.get(name) or other == base.get(name)):
            chosen[name] = mine
        elif other is not None:
            chosen[name] = other
    return chosen


def _placeholder(name: str, indent: str, newline: str) -> str:
    return f"{indent}<!-- planstate:begin {name} -->{newline}{indent}<!-- planstate:end {name} -->{newline}"


def _collapse(body: str, layout: Layout) -> str:
    """The body with each region reduced to a bare pair of marker lines, so git merges only the text around them."""
    if not layout.regions:
        return body
    lines = list(layout.lines)
    for region in reversed(layout.regions):
        last = lines[region.end]
        newline = "\r\n" if last.endswith("\r\n") else "\n"
        lines[region.begin : region.end + 1] = [_placeholder(region.name, region.indent, newline)]
    return "".join(lines)


def _expand(body: str, chosen: dict[str, str]) -> str:
    """Put each chosen region back where its pair of bare marker lines ended up."""
    lines = split_lines(body)
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("<!-- planstate:begin ") and i + 1 < len(lines):
            name = stripped[len("<!-- planstate:begin ") : -len(" -->")]
            if name in chosen and lines[i + 1].strip() == f"<!-- planstate:end {name} -->":
                text = chosen[name]
                if not line.endswith("\n") and text.endswith("\n"):
                    text = text.rstrip("\r\n")
                out.append(text)
                i += 2
                continue
        out.append(line)
        i += 1
    return "".join(out)


def _render(doc: Document, planning: Path | None, name: str, versions: tuple[bytes, bytes, bytes]) -> list[str]:
    """Render again the merged STATE.md's regions: those drawn from the (valid) front matter always, those that
    show records from the records the merge will hold, when `git merge` says what it merges (recordsets.py).
    Otherwise the record regions keep the text chosen above, and `planstate check --fix` renders them."""
    from planstate.render.regions import plan
    from planstate.render.sources import Sources

    data = doc.data
    if not isinstance(data, dict):
        return []
    loader = _merged_records(planning, name, versions)
    if loader is None:
        waiting = "the driver cannot see the merged records: run `planstate check --fix` after the merge"
        loader = lambda kind: ([], [waiting])  # noqa: E731
    sources = Sources(data, planning=planning, loader=loader)
    result = plan(sources, doc.body, doc.body_line)
    doc.set_body(result.body)
    return [
        f"region {o.name} not rendered: {o.message or o.status}"
        for o in result.outcomes
        if o.status in ("template-error",) and o.name not in RECORD_REGIONS
    ]


def _merged_records(planning: Path | None, name: str, versions: tuple[bytes, bytes, bytes]) -> Loader | None:
    """What the record regions of the merged STATE.md `name` show: the records the merge will hold, read and
    validated like a render reads them from disk; None when the driver cannot know them."""
    from planstate.render.sources import region_items, unusable
    from planstate.vcs.recordsets import merged_records

    if planning is None:
        return None
    inside = PurePosixPath(name.replace("\\", "/")).relative_to(PurePosixPath(planning.as_posix())).as_posix()
    files = merged_records(planning, inside, versions, _merge_record)
    if files is None:
        return None
    folder = inside.rpartition("/")[0]

    def load(kind: str) -> tuple[list[dict[str, Any]], list[str]]:
        records: list[tuple[Path, str, dict[str, Any]]] = []
        failures: list[str] = []
        for path, text in files.items():
            if kind_of(path) != kind:
                continue
            shown = (planning / folder / path).as_posix()
            if text is None:
                failures.append(f"{shown} has a merge conflict")
                continue
            try:
                record = Document.from_bytes(text, shown).data
            except PlanstateError as exc:
                failures.append(unusable(shown, exc))
                continue
            if not isinstance(record, dict):
                failures.append(f"{shown} cannot be read (front matter is not a mapping)")
                continue
            records.append((Path(path), shown, record))
        items, invalid = region_items(kind, records)
        return items, failures + invalid

    return load


def _merge_record(base: bytes, ours: bytes, theirs: bytes, name: str) -> bytes | None:
    """A record file both sides changed, merged as the driver merges it; None when it conflicts."""
    result = merge_bytes(base, ours, theirs, name=name)
    return result.data if result.clean else None


# ---------------------------------------------------------------------------- conflict markers


def _mark(doc: Document, conflicts: list[Conflict], labels: tuple[str, str], marker_size: int) -> bytes:
    """Our merged text with conflict markers around the lines of each conflicting field (their value between)."""
    data = doc.to_bytes()
    if not conflicts:
        return data
    newline = doc.newline
    lines = split_lines(data.decode("utf-8", "surrogateescape"))
    hunks = sorted(_hunks(data, doc.path, conflicts, lines), key=lambda h: h[0][0], reverse=True)
    merged = doc.data
    for (start, end, theirs), group in hunks:
        where = ", ".join(shown_path(c.path, merged) for c in group)
        ours_part = lines[start:end]
        if ours_part and not ours_part[-1].endswith("\n"):
            ours_part[-1] += newline
        lines[start:end] = write_hunk(ours_part, theirs, labels, where, newline, marker_size)
    return "".join(lines).encode("utf-8", "surrogateescape")


def _hunks(
    data: bytes, path: str | None, conflicts: list[Conflict], lines: list[str]
) -> list[tuple[tuple[int, int, list[str]], list[Conflict]]]:
    """The hunks to mark: each with the fields it holds; the fields whose lines overlap or touch share one."""
    groups = [[c] for c in conflicts]
    hunks = [_hunk(data, path, group, lines) for group in groups]
    while True:
        order = sorted(range(len(hunks)), key=lambda i: hunks[i][0])
        touching = next(((a, b) for a, b in itertools.pairwise(order) if hunks[b][0] <= hunks[a][1]), None)
        if touching is None:
            return list(zip(hunks, groups, strict=True))
        a, b = touching
        groups[a] = groups[a] + groups[b]
        hunks[a] = _hunk(data, path, groups[a], lines)
        del groups[b], hunks[b]


def _hunk(data: bytes, path: str | None, group: list[Conflict], lines: list[str]) -> tuple[int, int, list[str]]:
    """The line range of our text that holds the group's fields, and their side's lines for it."""
    alt = Document.from_bytes(data, path)
    for conflict in group:
        segments = list(conflict.path)
        if conflict.theirs is MISSING:
            alt.delete(segments)
        elif conflict.ours is MISSING and isinstance(segments[-1], int):
            alt.append(segments[:-1], conflict.theirs)
        else:
            alt.set(segments, conflict.theirs)
    other = split_lines(alt.to_bytes().decode("utf-8", "surrogateescape"))
    prefix, suffix = _common_ends(lines, other)
    theirs = other[prefix : len(other) - suffix]
    if theirs and not theirs[-1].endswith("\n"):
        theirs[-1] += "\n"
    return prefix, len(lines) - suffix, theirs


def _common_ends(lines: list[str], other: list[str]) -> tuple[int, int]:
    """How many lines two texts share at their start, and then how many at their end."""
    shortest = min(len(lines), len(other))
    prefix = 0
    while prefix < shortest and lines[prefix] == other[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and lines[len(lines) - 1 - suffix] == other[len(other) - 1 - suffix]:
        suffix += 1
    return prefix, suffix


def _described(conflict: Conflict, merged: Any) -> str:
    """One conflict for people: where, and both sides' values (for a unit, such as a phase, the fields that differ)."""
    where = shown_path(conflict.path, merged)
    ours, theirs = conflict.ours, conflict.theirs
    if not (isinstance(ours, dict) and isinstance(theirs, dict)):
        return f"{where}: {_shown(ours)} (ours) vs {_shown(theirs)} (theirs)"
    differ = [k for k in {**ours, **theirs} if not same(ours.get(k, MISSING), theirs.get(k, MISSING), ordered=False)]
    shown = "; ".join(
        f"{k} {_shown(ours.get(k, MISSING))} (ours) vs {_shown(theirs.get(k, MISSING))} (theirs)" for k in differ
    )
    return f"{where} changed differently on each side: {shown}"


def _shown(value: Any) -> str:
    """A value in a conflict message, short."""
    if value is MISSING:
        return "(removed)"
    text = json.dumps(to_json(value), ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _read(path: str) -> bytes:
    """One of the three versions git passes; a missing or unreadable one is refused (never read as empty, which
    would merge into a truncated file)."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise PlanstateError(f"cannot be read: {exc.strerror}; nothing was merged", file=path) from None
