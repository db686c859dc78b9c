"""Record files (decisions, blockers, sessions, tasks): naming, finding by id or unique id prefix, listing fast.

A record's `id` in its front matter is the truth; its file name starts with the id so people
and shells find it, and a record is found by reading names first and front matter second.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core import ids
from planstate.core.digests import blake2b_hex
from planstate.core.errors import NotFound, PlanstateError, UsageError
from planstate.model.kinds import KINDS, RECORD_FOLDERS, to_json
from planstate.model.schema import ListOf, Model
from planstate.text.paths import format_path

if TYPE_CHECKING:
    from planstate.store.cache import Facets
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

TEMPLATES = {
    "decision": "decision.md.j2",
    "blocker": "blocker.md.j2",
    "session": "session.md.j2",
    "task": "task.md.j2",
}


class Record(NamedTuple):
    """One record file as read: where it is, its kind and its plain front-matter data."""

    kind: str
    path: Path
    data: dict[str, Any]

    @property
    def id(self) -> str:
        """The record's id (from its front matter; the file name's stem when the id is missing)."""
        value = self.data.get("id")
        return value if isinstance(value, str) else self.path.stem

    @property
    def model(self) -> Model:
        """The record's data as its typed model (a view over `data`)."""
        return KINDS[self.kind](self.data)


def files(folder: Path) -> list[Path]:
    """The record files of a folder, sorted by name (so ids made by planstate sort by time).

    Every entry named like a record counts, whatever it is: a FIFO or a folder named `x.md` is then
    reported by whoever reads it ("not a regular file"), never skipped in silence. Hidden names
    (`.x.md`, planstate's temp files) are not records.
    """
    return [folder / name for name in names(folder)]


def names(folder: Path) -> list[str]:
    """The names of the record files of a folder (see `files`), sorted, without making a path of each."""
    return sorted(_scan(folder))


def _scan(folder: Path) -> list[str]:
    """The names of the record files of a folder, in the order the directory gives them."""
    try:
        # `is_record_name` inline: a call per name costs more than the listing at 10,000 records.
        return [name for name in os.listdir(folder) if name[-3:] == ".md" and name[:1] != "."]
    except (FileNotFoundError, NotADirectoryError):
        return []


def named_ids(folder: Path) -> list[str]:
    """The ids the record files of a folder are named after, sorted, from one listing of their names: none is read, so
    shell completion offers them as fast at 17,000 records as at ten (see `ids.named_after`)."""
    return sorted(set(map(ids.named_after, _scan(folder))))


def is_record_name(name: str) -> bool:
    """Tell whether an entry of a record folder is a record file by its name (a dot-file is a temp file)."""
    return name.endswith(".md") and not name.startswith(".")


def load_all(
    ctx: Context, initiative: Initiative, kind: str, *, archived: bool = False
) -> tuple[list[Record], list[PlanstateError]]:
    """Every record of `kind` in an initiative (with `archived`, those in its `archive/` folder too), and the
    problems of files that could not be read."""
    records: list[Record] = []
    problems: list[PlanstateError] = []
    folder = initiative.folder(kind)
    paths = files(folder) + (files(initiative.archive(kind)) if archived else [])
    if ctx.pending:  # a transaction's records about to be written count as they will be
        where = folder.absolute()
        named = {path.name: path for path in paths}
        named.update({path.name: path for path in ctx.pending if path.parent == where and path.name not in named})
        paths = [named[name] for name in sorted(named)]
    if ctx.leaving:  # and the records it is about to archive count as gone
        paths = [path for path in paths if path.absolute() not in ctx.leaving]
    for path in paths:
        pending = ctx.pending.get(path.absolute())
        if pending is not None:
            records.append(Record(kind, path, pending))
            continue
        data = mapping(ctx, path, problems)
        if data is not None:
            records.append(Record(kind, path, data))
    return records, problems


def mapping(ctx: Context, path: Path, problems: list[PlanstateError]) -> dict[str, Any] | None:
    """A record file's front matter, read through the store; None, with the problem noted, when it cannot be read
    or is no mapping."""
    try:
        data = ctx.cached_data(path)
    except PlanstateError as exc:
        problems.append(exc)
        return None
    if not isinstance(data, dict):
        problems.append(PlanstateError("front matter is not a mapping", file=ctx.display(path), line=2))
        return None
    return data


def made_since(ctx: Context, initiative: Initiative, kind: str, when: float) -> list[Record]:
    """The records of `kind` whose ids say they were made at or after `when` (seconds since 1970), found by their
    file names alone: older files are never read, so the cost follows the recent records, not all of them. Files
    that do not parse are left out (a list or `check` reports them)."""
    floor = ids.first_since(kind, when)
    recent, _broken = _read(ctx, kind, [p for p in files(initiative.folder(kind)) if p.name >= floor])
    return recent


def find(ctx: Context, initiative: Initiative, kind: str, ref: str, *, archived: bool = False) -> Record:
    """The record of `kind` whose id is `ref`, or whose id alone starts with `ref`; UsageError otherwise.

    Files whose names start with `ref` are read first; one of them that does not parse raises its own
    error (file, line, column) rather than a "not found". When none of them has the id `ref` itself, the ids of
    every record are searched too (their summaries, which the store keeps by stat identity: a miss over 10,000
    decisions reads none of them), so a hand-made file whose name does not start with its id is found, and a
    prefix that starts two ids is refused even when only one of the files is named after its id.
    The kind's `archive/` folder is searched too: an archived record is returned when `archived` (to read it),
    else refused, as archived records are not changed.
    """
    noun = kind
    ref = ref.strip()
    if not ref:
        raise UsageError(f"give a {noun} id")
    folder = initiative.folder(kind)
    archive = initiative.archive(kind)
    # Names first, paths only for the files read: 10,000 paths cost more than the rest of a `show`.
    listed = [(folder, _scan(folder)), (archive, _scan(archive))]
    named = [where / name for where, names in listed for name in _starting(names, ref)]  # `ref.md` too
    candidates, broken = _read(ctx, kind, named)
    found = _match(ctx, kind, ref, candidates)
    if found is None and broken:
        raise broken[0]  # the record asked for may be the file that does not parse: say what is wrong with it
    if found is None or found.id != ref:  # none, or a prefix of an id: another file's id may start with it too
        # A record's id is its front matter's `id` when that is text, else its file's stem: one whose name does not
        # start with `ref` can match only through a text id that does, which its summary holds as it is.
        rest = [
            summary.path
            for where, _names in listed
            for summary in folder_summaries(ctx, where, kind, on_disk=True)[0]
            if summary.id.startswith(ref) and not summary.name.startswith(ref)
        ]
        if rest:
            others, _broken = _read(ctx, kind, rest)
            found = _match(ctx, kind, ref, [*candidates, *others])
    if found is None:
        raise NotFound(
            f"no {noun} with id {ref!r} in {ctx.display(folder)}/ (`planstate {kind} list --all` lists them)"
        )
    if not archived and found.path.parent != folder:
        raise UsageError(
            f"{noun} {found.id} is archived, and archived records are not changed", file=ctx.display(found.path)
        )
    return found


def _starting(names: list[str], prefix: str) -> list[str]:
    """The names that start with `prefix`, found by searching all of them as one text (a loop over 10,000 names
    in Python costs more)."""
    if not prefix:
        return list(names)
    text = "\n" + "\n".join(names) + "\n"
    if text.count("\n") != len(names) + 1 or "\n" in prefix:  # a line break in a name: one by one
        return [name for name in names if name.startswith(prefix)]
    out: list[str] = []
    needle = "\n" + prefix
    at = text.find(needle)
    while at >= 0:
        end = text.index("\n", at + 1)
        out.append(text[at + 1 : end])
        at = text.find(needle, end)
    return out


def _read(ctx: Context, kind: str, paths: list[Path]) -> tuple[list[Record], list[PlanstateError]]:
    """The records of `paths` that parse, and the errors of those that do not."""
    records: list[Record] = []
    broken: list[PlanstateError] = []
    for path in paths:
        try:
            data = ctx.cached_data(path)
        except PlanstateError as exc:
            broken.append(exc)
            continue
        if isinstance(data, dict):
            records.append(Record(kind, path, data))
        else:
            broken.append(PlanstateError("front matter is not a mapping", file=ctx.display(path), line=2))
    return records, broken


def _match(ctx: Context, kind: str, ref: str, candidates: list[Record]) -> Record | None:
    """The one record whose id is `ref`, else the one whose id starts with it; None when none does.

    UsageError when several records have that id, or the prefix starts several ids."""
    exact = [r for r in candidates if r.id == ref]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        where = ", ".join(ctx.display(r.path) for r in exact)
        raise UsageError(
            f"{len(exact)} {RECORD_FOLDERS[kind]} have the id {ref!r}: {where}; `planstate check` lists duplicates"
        )
    prefixed = [r for r in candidates if r.id.startswith(ref)]
    if len(prefixed) == 1:
        return prefixed[0]
    if prefixed:
        shown = ", ".join(sorted(r.id for r in prefixed)[:8])
        raise UsageError(f"{kind} id {ref!r} is ambiguous: it starts {len(prefixed)} ids ({shown}); type more of it")
    return None


def new_path(
    initiative: Initiative, kind: str, title: str, when: float | None = None, names: list[str] | None = None
) -> tuple[str, Path]:
    """A fresh id for a new record and its file path; retried until no file in the folder uses the id. `names`:
    the folder's entries, as a transaction listed them (`Transaction.names`); else it is listed here."""
    folder = initiative.folder(kind)
    try:  # every name counts as taken, record or not; one string searched in C, so 10,000 names cost no loop
        taken = "\n" + "\n".join(os.listdir(folder) if names is None else names) + "\n"
    except (FileNotFoundError, NotADirectoryError):
        taken = ""
    for _ in range(100):
        record_id = ids.new_id(kind, when)
        if f"\n{record_id}.md\n" not in taken and f"\n{record_id}-" not in taken:
            return record_id, folder / ids.file_name(record_id, title)
    raise UsageError(f"could not find a free {kind} id in {folder}")  # pragma: no cover - 2**25 ids a second


# ---------------------------------------------------------------------------- summaries, for regions and lists

# The field a region orders each kind of record by (then by id).
ORDER = {"decision": "date", "blocker": "identified", "session": "started", "task": "created"}


class Summary(NamedTuple):
    """What a region needs to know of a record without its data: id, order, status, a fingerprint of its region
    item (so a region's inputs can be hashed from summaries alone), and why it cannot be shown, if it cannot."""

    folder: Path
    name: str  # the file's name in `folder` (its path is made only when asked for: 10,000 paths cost 50 ms)
    id: str
    order: str
    status: str | None
    fingerprint: str  # item_fingerprint of its region item ("" when it does not validate)
    problem: str | None  # `FIELD: message` of a record that does not validate; None when it does
    unknown: bool  # it holds keys the format does not define (a check reports each)

    @property
    def path(self) -> Path:
        """The record file."""
        return self.folder / self.name


# Fields no region shows, left out of region items: a retry key (ops/records.retried) is for machines, and keeping it
# out of what a region is rendered from means records gained it without any region's `in=` checksum changing.
NOT_SHOWN = frozenset({"request_id"})


def region_item(kind: str, path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """A valid record as a region shows it: every declared field as JSON-ready data (missing ones as their
    default: null, or an empty list) and a `link` relative to STATE.md's folder, so strict templates can use any
    field. Regions only read these items."""
    item = to_json(data)
    out: dict[str, Any] = {}
    for name, field in KINDS[kind].fields.items():
        if name in NOT_SHOWN:
            continue
        if name in item:
            out[name] = item[name]
        else:
            out[name] = [] if isinstance(field.kind, ListOf) else to_json(field.default)
    out["link"] = f"{RECORD_FOLDERS[kind]}/{path.name}"
    return out


def item_fingerprint(item: dict[str, Any]) -> str:
    """A digest of a record's region item: equal exactly when a region would show the record alike."""
    import json

    text = json.dumps(item, sort_keys=True, ensure_ascii=False, default=repr)
    return blake2b_hex(text.encode("utf-8", errors="surrogateescape"), 16)


def summarize(kind: str, path: Path, data: Any) -> Summary | None:
    """The summary of a record file's front matter; None when it is not a mapping (it cannot be shown at all)."""
    if not isinstance(data, dict):
        return None
    problems_for, unknown_keys = _validation()
    problems = problems_for(kind, data)
    problem = None
    if problems:
        field = format_path(problems[0].path)
        problem = f"{field + ': ' if field else ''}{problems[0].message}"
    status = data.get("status")
    return Summary(
        path.parent,
        path.name,
        str(data.get("id")),
        str(to_json(data.get(ORDER[kind]))),
        status if isinstance(status, str) else None,
        "" if problem else item_fingerprint(region_item(kind, path, data)),
        problem,
        bool(unknown_keys(KINDS[kind], data)),
    )


@functools.cache
def _validation() -> tuple[Callable[..., list[Any]], Callable[..., list[Any]]]:
    """model.validation's problems_for and unknown_keys, imported once (a cold check summarizes 17,000 records, and
    an import inside a function costs microseconds on every call)."""
    from planstate.model.validation import problems_for, unknown_keys

    return problems_for, unknown_keys


@functools.cache
def _exact_json() -> Callable[[Any], str | None]:
    """cache.exact_json, imported once (see `_validation`)."""
    from planstate.store.cache import exact_json

    return exact_json


# The fields of a record that the checks across records (references, duplicates, sessions) and the resume brief
# (its order of blockers, decisions and sessions, and its doubts) read of every record: kept in its row, so a
# record the store vouches for is not read at all.
FACTS = (
    "id",
    "status",
    "date",
    "identified",
    "started",
    "ended",
    "supersedes",
    "superseded_by",
    "phase",
    "resumed_from",
    "affects",
    "depends_on",
    "wave",
    "created",
)
# The facts by which a record names another record or a phase (a rule across records checks each).
REFERS = ("supersedes", "superseded_by", "resumed_from", "affects", "depends_on")


def facts(data: dict[str, Any]) -> dict[str, Any]:
    """A record's facts: those of its `FACTS` fields it has."""
    return {name: data[name] for name in FACTS if name in data}


def facets(kind: str, path: Path, data: Any) -> Facets:
    """What the store keeps of a record file besides its data (cache.Facets): its summary and facts, and the columns
    its queries select and order by."""
    import json

    from planstate.core.clock import instant
    from planstate.store.cache import Facets

    found = summarize(kind, path, data)
    if found is None:
        return Facets("null", None, None, None, None, None, None, 0, None, None)
    record_id = data.get("id")
    phase = data.get("phase") if kind in ("decision", "task") else None
    return Facets(
        json.dumps(list(found[2:]), ensure_ascii=False),
        _exact_json()(facts(data)),
        record_id if isinstance(record_id, str) else None,
        found.order,
        found.status,
        int(found.problem is None),
        phase if isinstance(phase, int) and not isinstance(phase, bool) else None,
        int(any(data.get(name) not in (None, []) for name in REFERS)),
        instant(data.get("started")) if kind == "session" else None,
        instant(data.get("ended")) if kind == "session" else None,
    )


def summaries(ctx: Context, initiative: Initiative, kind: str) -> tuple[list[Summary], list[PlanstateError]]:
    """The summary of every record of `kind` in an initiative (those of a committing transaction's records as they
    will be), and the problems of files that could not be read or are no mapping (store/folders.py: a file the
    store vouches for is not read)."""
    return folder_summaries(ctx, initiative.folder(kind), kind)


def folder_summaries(
    ctx: Context, folder: Path, kind: str, *, on_disk: bool = False
) -> tuple[list[Summary], list[PlanstateError]]:
    """The summaries of the records of `kind` in one folder, in file-name order (see store/folders.summaries)."""
    from planstate.store import folders

    return folders.summaries(ctx, folder, kind, on_disk=on_disk)
