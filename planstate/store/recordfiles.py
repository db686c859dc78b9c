"""Record files (decisions, blockers, sessions): naming, finding by id or unique id prefix, listing fast.

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
from planstate.core.collector import without_collector
from planstate.core.digests import blake2b_hex
from planstate.core.errors import PlanstateError, UsageError
from planstate.model.kinds import KINDS, RECORD_FOLDERS, to_json
from planstate.model.schema import ListOf, Model
from planstate.text.paths import format_path

if TYPE_CHECKING:
    from planstate.core.watched import Identity
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

TEMPLATES = {"decision": "decision.md.j2", "blocker": "blocker.md.j2", "session": "session.md.j2"}


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
    """A record file's front matter, read through the cache; None, with the problem noted, when it cannot be read
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
    every record are searched too (their summaries, which the cache keeps by stat identity: a miss over 10,000
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
        raise UsageError(
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
ORDER = {"decision": "date", "blocker": "identified", "session": "started"}


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
def _encode_known() -> Callable[[Any], str]:
    """cache.encode_known, imported once (see `_validation`)."""
    from planstate.store.cache import encode_known

    return encode_known


def summary_text(kind: str, path: Path, data: Any) -> str | None:
    """A record's summary as the front-matter cache keeps it (JSON), or None."""
    import json

    found = summarize(kind, path, data)
    return None if found is None else json.dumps(list(found[2:]), ensure_ascii=False)


# The fields of a record that the checks across records (references, duplicates, sessions) and the resume brief
# (its order of blockers, decisions and sessions, and its doubts) read of every record: kept with its cached data,
# so a record whose stat identity vouches for them is not read at all.
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
)


def facts(data: dict[str, Any]) -> dict[str, Any]:
    """A record's facts: those of its `FACTS` fields it has."""
    return {name: data[name] for name in FACTS if name in data}


def facts_text(data: Any) -> str | None:
    """A record's facts as the front-matter cache keeps them (its JSON), or None when it is no mapping (the cache
    asks only of data it keeps, which survives its JSON exactly, and so does any part of it)."""
    return _encode_known()(facts(data)) if isinstance(data, dict) else None


def summaries(ctx: Context, initiative: Initiative, kind: str) -> tuple[list[Summary], list[PlanstateError]]:
    """The summary of every record of `kind` in an initiative (those of a committing transaction's records as they
    will be), and the problems of files that could not be read or are no mapping.

    A file whose stat identity vouches for its cached summary is not read (see cache.py); the others are read
    through the cache, which keeps their summaries for next time."""
    return folder_summaries(ctx, initiative.folder(kind), kind)


@without_collector
def folder_summaries(
    ctx: Context, folder: Path, kind: str, *, on_disk: bool = False
) -> tuple[list[Summary], list[PlanstateError]]:
    """The summaries of the records of `kind` in one folder (see `summaries`; `on_disk`: of the files as they are, a
    committing transaction's changes not yet made), in file-name order.

    One directory scan gives the names and their stat (no path object each), one query the cached summaries and one
    JSON decode all the trusted ones: a write's region refresh over 10,000 decisions costs a few tens of ms."""
    import json

    where = folder.absolute()
    pending = {} if on_disk else {path.name: data for path, data in ctx.pending.items() if path.parent == where}
    leaving = set() if on_disk else {path.name for path in ctx.leaving if path.parent == where}
    listed, trusted, recent = _vouched(folder, ctx.cached_summaries(folder), pending, leaving)
    for name, identity in recent.items():  # just written (by this write's neighbours): the bytes' digest decides
        summary = _renewed(ctx, folder / name, identity)
        if summary is not None:
            trusted[name] = summary
    if pending:
        listed = list(set(listed) | set(pending) - leaving)
    listed.sort()
    return _summarized(ctx, folder, kind, listed, _decode_all(json, trusted), pending)


def _vouched(
    folder: Path, known: dict[str, tuple[Any, ...]], pending: dict[str, Any], leaving: set[str]
) -> tuple[list[str], dict[str, str], dict[str, Identity]]:
    """The record files of a folder by name; the cached summary (JSON) of each whose stat identity vouches for its
    row; and the identity of each whose row has that identity but was written too recently to vouch alone."""
    from planstate.core.watched import IDENTITY
    from planstate.store.cache import RACY_NS

    trusted: dict[str, str] = {}
    recent: dict[str, Identity] = {}
    listed: list[str] = []
    keep, get = listed.append, known.get
    try:
        with os.scandir(folder) as entries:
            for item in entries:
                name = item.name
                if name[-3:] != ".md" or name[0] == "." or name in leaving:
                    continue
                keep(name)
                row = get(name)
                if row is None or name in pending or item.is_symlink():
                    continue
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                # cache._Row.trusted (identity, then cache.settled) inline: this loop runs once per record file.
                mtime, ctime = info.st_mtime_ns, info.st_ctime_ns
                if (
                    row[3] == mtime
                    and row[4] == ctime
                    and row[2] == info.st_size
                    and row[1] == info.st_ino
                    and row[0] == info.st_dev
                ):
                    if row[5] - (mtime if mtime > ctime else ctime) >= RACY_NS:
                        trusted[name] = row[6]
                    else:
                        recent[name] = IDENTITY(info)
    except (FileNotFoundError, NotADirectoryError):
        pass
    return listed, trusted, recent


def _summarized(
    ctx: Context,
    folder: Path,
    kind: str,
    listed: list[str],
    decoded: dict[str, list[Any]],
    pending: dict[str, Any],
) -> tuple[list[Summary], list[PlanstateError]]:
    """The summary of each listed record: decoded from its cached row, else made from its pending or read data;
    and the problems of files that could not be read or are no mapping."""
    make = Summary._make
    out: list[Summary] = []
    problems: list[PlanstateError] = []
    for name in listed:
        values = decoded.get(name)
        if values is not None and name not in pending:  # a list of six values, as `summary_text` writes
            out.append(make((folder, name, *values)))
            continue
        path = folder / name
        if name in pending:
            found = summarize(kind, path, pending[name])
            if found is not None:
                out.append(found)
            continue
        data = mapping(ctx, path, problems)
        found = summarize(kind, path, data) if data is not None else None
        if found is not None:
            out.append(found)
    return out, problems


def _renewed(ctx: Context, path: Path, identity: Identity) -> str | None:
    """The cached summary of a record file its stat identity cannot vouch for alone (written in the last
    `RACY_NS`), when its bytes are still the ones summarized; else None (it is read and summarized afresh)."""
    from planstate.core.files import read_bytes

    try:
        data = read_bytes(path, ctx.root, ctx.root.parent)
    except (OSError, PlanstateError):
        return None
    return ctx.renewed_summary(path, identity, data)


def _decode_all(json: Any, texts: dict[str, str]) -> dict[str, list[Any]]:
    """Cached summaries (JSON lists of six values) decoded, by name, in one call of the decoder (10,000 calls cost
    several times more); any that is not such a list is left out (its file is read instead)."""
    names = list(texts)
    try:
        values = json.loads("[" + ",".join(texts[name] for name in names) + "]")
    except ValueError:  # one broken row: decode them one by one and leave it out
        values = []
        for name in names:
            try:
                values.append(json.loads(texts[name]))
            except ValueError:
                values.append(None)
    if len(values) != len(names):  # a row holding more than one value made the list longer: trust none
        return {}
    return {
        name: value for name, value in zip(names, values, strict=True) if isinstance(value, list) and len(value) == 6
    }
