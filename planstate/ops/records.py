"""What the decision, blocker and session operations share: result objects, new-record bodies, argument checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core import durations
from planstate.core.clock import parse_datetime
from planstate.core.errors import PlanstateError, UsageError, ValidationError
from planstate.model.kinds import KINDS, READ_ONLY_STATES, read_only_message, to_json
from planstate.model.schema import Model
from planstate.model.validation import located as validation_located
from planstate.model.validation import problems_for
from planstate.store import recordfiles
from planstate.store.recordfiles import TEMPLATES, Record

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction

TITLE_WIDTH = 60
RETRY_WINDOW = 24 * 3600  # seconds: a retry comes within a day of the call it repeats; older records are not read
PAGE = 50  # records a list shows unless asked for another number: the newest ones (the one rule of CLI and MCP)


class Entry:
    """One record as an operation returns it: id, file, front matter, and what the command noticed on the way."""

    # A plain class, not a dataclass: importing dataclasses costs every record command about 9 ms.
    def __init__(
        self,
        kind: str,
        id: str,
        path: Path,
        shown: str,  # the path as shown to people, relative to the project folder
        data: dict[str, Any],
        extra: dict[str, Any] | None = None,  # computed facts (a session's heartbeat, a body)
        warnings: list[str] | None = None,
    ) -> None:
        self.kind = kind
        self.id = id
        self.path = path
        self.shown = shown
        self.data = data
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.warnings: list[str] = [] if warnings is None else warnings

    def _fields(self) -> tuple[Any, ...]:
        return (self.kind, self.id, self.path, self.shown, self.data, self.extra, self.warnings)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Entry) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value, as the dataclass was

    def __repr__(self) -> str:
        return f"Entry(kind={self.kind!r}, id={self.id!r}, path={self.path!r})"

    @property
    def model(self) -> Model:
        """The front matter as its typed model (Decision, Blocker or Session)."""
        return KINDS[self.kind](self.data)

    def warned(self, warning: str) -> Entry:
        """This entry with one more warning."""
        self.warnings.append(warning)
        return self

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data: `id`, `path`, every front-matter field, then computed facts."""
        fields = {k: v for k, v in self.data.items() if k != "id"}
        out: dict[str, Any] = to_json({"id": self.id, "path": self.shown, **fields, **self.extra})
        return out


class Listing:
    """The records a list command found, and the files it could not read (shown as warnings)."""

    def __init__(
        self,
        items: list[Entry],
        problems: list[PlanstateError] | None = None,
        invalid: list[PlanstateError] | None = None,  # listed as they are, with a warning
        kind: str = "record",  # decision, blocker or session: names the list in `to_dict()`
        more: int = 0,  # older records that matched but are left out of the page
    ) -> None:
        self.items = items
        self.problems: list[PlanstateError] = [] if problems is None else problems
        self.invalid: list[PlanstateError] = [] if invalid is None else invalid
        self.kind = kind
        self.more = more

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Listing) and (self.items, self.problems, self.invalid, self.kind, self.more) == (
            other.items,
            other.problems,
            other.invalid,
            other.kind,
            other.more,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Listing(kind={self.kind!r}, items={len(self.items)}, more={self.more})"

    @property
    def total(self) -> int:
        """How many records matched: those listed and those left out of the page."""
        return len(self.items) + self.more

    def more_note(self, all_of_them: str) -> str | None:
        """The line saying how many older records the page leaves out, ending with how to list them all
        (`all_of_them`, in the caller's words: an option, an argument); None when none is left out."""
        if not self.more:
            return None
        return (
            f"… {self.more} more: the newest {len(self.items)} of {self.total} {self.kind}s are shown "
            f"(use {all_of_them} for all)"
        )

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Entry:
        return self.items[index]

    def ids(self) -> list[str]:
        """The ids of the records, in list order."""
        return [e.id for e in self.items]

    def to_list(self) -> list[dict[str, Any]]:
        """The records as JSON-ready dicts."""
        return [e.to_dict() for e in self.items]

    def to_dict(self) -> dict[str, Any]:
        """The listing as JSON-ready data: the records under their kind's plural (`{"decisions": [...]}`), how many
        matched (`total`) and how many older ones the page leaves out (`more`)."""
        return {f"{self.kind}s": self.to_list(), "total": self.total, "more": self.more}


def entry(ctx: Context, record: Record, **extra: Any) -> Entry:
    """An Entry for a record read from disk."""
    return Entry(record.kind, record.id, record.path, ctx.display(record.path), record.data, dict(extra))


def retried(ctx: Context, initiative: Initiative, kind: str, request_id: str | None) -> Record | None:
    """The record of `kind` an earlier call with this `request_id` made (a retry after a lost answer), or None.

    Call it inside the transaction that would create the record: the lock makes two retries of one call see each
    other. The key is kept in the record's `request_id` field, so the files stay the truth; records made more than
    RETRY_WINDOW ago are not read (their ids are time-ordered).
    """
    import time

    if request_id is None:
        return None
    for record in recordfiles.made_since(ctx, initiative, kind, time.time() - RETRY_WINDOW):
        if record.data.get("request_id") == request_id:
            return record
    return None


def retry_warning(kind: str, record: Record, request_id: str) -> str:
    """The warning of a retried create: the record it answers with, and that nothing was written."""
    return f"request_id {request_id!r} already made {kind} {record.id}; answering with it, nothing written"


def preload_templates(ctx: Context | None = None, kind: str | None = None) -> None:
    """Import the template engine before a transaction takes the lock: the import costs more than the write. Not
    when the body of `kind` is the built-in template rendered without it (render/builtin.py BODIES)."""
    if ctx is not None and kind is not None and _builtin_body(ctx, kind) is not None:
        return
    import jinja2  # noqa: F401


def body(ctx: Context, kind: str, context: dict[str, Any]) -> str:
    """The body of a new record, from its template (the user's in .planning/templates/ wins); user text is data."""
    from planstate.text import templates

    source = _builtin_body(ctx, kind)
    if source is not None:
        from planstate.render import builtin

        text = builtin.body(TEMPLATES[kind], source, context)
        if text is not None:
            return text
    return templates.render(TEMPLATES[kind], context, planning=ctx.root)


def _builtin_body(ctx: Context, kind: str) -> str | None:
    """The source of the template in effect for new records of `kind`, when it is not the user's and Python
    renders it (render/builtin.py BODIES); else None (Jinja renders it)."""
    from planstate.render.builtin import BODIES
    from planstate.text import templates

    name = TEMPLATES[kind]
    if name not in BODIES or templates.override_path(name, ctx.root) is not None:
        return None
    try:
        return templates.source(templates.find(name, ctx.root), ctx.root)
    except (OSError, PlanstateError):
        return None


def text(value: str | None, name: str) -> str:
    """A required piece of text, stripped; UsageError naming `name` when it is missing or blank."""
    if value is None or not str(value).strip():
        raise UsageError("must not be empty", field=name)
    return str(value).strip()


def optional_text(value: str | None, name: str) -> str | None:
    """Optional text, stripped; given but blank is refused (it is almost always a shell quoting slip)."""
    return None if value is None else text(value, name)


def texts(values: Sequence[str] | None, name: str) -> list[str]:
    """A list of non-blank strings, each stripped; UsageError naming the first blank one."""
    if isinstance(values, str):
        raise UsageError("must be a list of strings, not one string", field=name)
    return [text(v, f"{name}[{i}]") for i, v in enumerate(values or ())]


def short_title(value: str, width: int = TITLE_WIDTH) -> str:
    """A one-line title from longer text: its first line, cut at a word boundary to at most `width` characters."""
    line = next((ln.strip() for ln in value.splitlines() if ln.strip()), "")
    line = re.sub(r"\s+", " ", line)
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    space = cut.rfind(" ")
    if space >= width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def choice(value: str | None, allowed: Sequence[str], name: str) -> str | None:
    """`value` if it is one of `allowed` (or None); UsageError listing the allowed values otherwise."""
    if value is not None and value not in allowed:
        raise UsageError(f"{value!r} is not one of: {', '.join(allowed)}", field=name)
    return value


def since(value: str | date | datetime | None, now: datetime, name: str = "since") -> datetime | None:
    """The start of a `since` window (or another moment named `name`, such as `before`): an ISO date or timestamp,
    or a duration back from now (`2d`, `12h`)."""
    if value is None:
        return None
    if isinstance(value, datetime | date):
        found = parse_datetime(value)
        assert found is not None  # a date or datetime always converts
        return found
    raw = value.strip()
    if raw and raw[0].isdigit() and raw[-1].lower() in "smhdw" and not re.search(r"[-:T]", raw):
        try:
            return now - durations.parse(raw, name)
        except OverflowError:
            raise UsageError(
                f"{name} {value!r} reaches back before the year 1; give a date instead", argument=name
            ) from None
    found = parse_datetime(raw)
    if found is None:
        raise UsageError(
            f"{name} {value!r} is not a date (2026-11-20), a timestamp or a duration (2d, 12h)", argument=name
        )
    return found


def listing(
    ctx: Context,
    kind: str,
    *,
    status: str | None,
    after: str | date | datetime | None,
    statuses: Sequence[str],
    order: Callable[[Any], Any],
    shown: Callable[[Any], bool] = lambda _status: True,
    default_status: str | None = None,
    make: Callable[[Record], Entry] | None = None,
    archived: bool = False,
    limit: int | None = PAGE,
    textual: bool = False,
) -> Listing:
    """The records of `kind` in the target initiative for a list command (with `archived`, those in the kind's
    `archive/` folder too).

    Those with `status` when given, else those whose status `shown` keeps; with `after` (a `since`
    value), only those whose date field (recordfiles.ORDER: the one regions order by) is at or after
    it; sorted by `order` of that field's value, then file name; only the newest `limit` of them
    (0: all; None: `PAGE`), the number left out in `more`. The listing also carries the files that
    could not be read and the records that do not validate. Which records match is decided from
    their summaries (recordfiles.summaries), so only the page's records are read: a list of the
    newest 50 of 10,000 decisions reads 50: outside a transaction, and without archived records, they come from
    the columns the store keeps (store/folders.columns), else from every summary. `textual`: `order` of a date
    field's text is that text (decisions), so the store orders them and gives only the page (store/folders.newest).
    """
    from planstate.core.clock import now

    choice(status, statuses, "status")
    keep = page_size(limit)
    start = since(after, now())
    dated = recordfiles.ORDER[kind]
    folders_of = [ctx.target.folder(kind)] + ([ctx.target.archive(kind)] if archived else [])

    def judged(summary: recordfiles.Summary) -> tuple[Record | None, Any, Any]:
        """The record when its summary cannot say exactly what the list needs (read), its date and its status."""
        if summary.problem is None and summary.order != "None":
            return None, summary.order, summary.status if summary.status is not None else default_status
        record = _record(ctx, kind, summary.path)
        return record, record.data.get(dated), record.data.get("status", default_status)

    def matches(current: Any) -> bool:
        return (current == status) if status is not None else shown(current)

    def make_entry(record: Record) -> Entry:
        return make(record) if make is not None else entry(ctx, record)

    found: list[recordfiles.Summary] = []
    problems: list[PlanstateError] = []
    if not archived and not ctx.pending and not ctx.leaving:
        from planstate.store import folders

        # What a list decides from (file name, order text, status) as the store keeps it: no record is read but
        # those it shows and those it cannot say them of (they do not validate, or cannot be read).
        if textual and start is None:
            top = folders.newest(
                ctx, folders_of[0], kind, lambda now: matches(now if now is not None else default_status), keep or None
            )
            if top is not None:
                page = _newest_page(ctx, kind, top, keep, dated, order, matches, default_status, problems)
                items = [make_entry(_record(ctx, kind, folders_of[0] / name)) for name in page[0]]
                ctx.save_cache()
                return Listing(items, problems, page[2], kind, page[1])
        light = folders.columns(ctx, folders_of[0], kind)
        if light is not None:
            page = _light_page(ctx, kind, light, keep, start, dated, order, matches, default_status, problems)
            if page is not None:
                items = [make_entry(_record(ctx, kind, folders_of[0] / name)) for name in page[0]]
                ctx.save_cache()
                return Listing(items, problems, page[2], kind, page[1])
    for folder in folders_of:
        summaries, broken = recordfiles.folder_summaries(ctx, folder, kind)
        found += summaries
        problems += broken
    wrong: list[PlanstateError] = []
    matched: list[tuple[Any, str, recordfiles.Summary, Record | None]] = []
    for summary in found:
        record, value, current = judged(summary)
        if record is not None and summary.problem is not None:
            wrong.append(located_problem(ctx, kind, record))
        if not matches(current):
            continue
        if start is not None and not at_or_after(value, start):
            continue
        matched.append((order(value), summary.name, summary, record))
    matched.sort(key=lambda row: (row[0], row[1]))
    more = max(len(matched) - keep, 0) if keep else 0
    items = []
    for _key, _name, summary, record in matched[more:]:
        items.append(make_entry(record if record is not None else _record(ctx, kind, summary.path)))
    ctx.save_cache()
    return Listing(items, problems, wrong, kind, more)


def _newest_page(
    ctx: Context,
    kind: str,
    top: Any,
    keep: int,
    dated: str,
    order: Callable[[Any], Any],
    matches: Callable[[Any], bool],
    default_status: str | None,
    problems: list[PlanstateError],
) -> tuple[list[str], int, list[PlanstateError]]:
    """A list's page from the store's newest records (store/folders.Newest) and the records it cannot speak for,
    read as the full listing reads them: the names shown, oldest first, how many older ones match, and the records
    that do not validate (located)."""
    matched, wrong = _read_unsure(ctx, kind, top.unsure, None, dated, order, matches, default_status, problems)
    total = len(matched) + sum(
        n for now, n in top.counts.items() if matches(now if now is not None else default_status)
    )
    matched += [(order(text), name) for text, name in top.first]
    matched.sort()
    shown = matched[-keep:] if keep else matched
    return [name for _key, name in shown], (total - len(shown)) if keep else 0, wrong


def _read_unsure(
    ctx: Context,
    kind: str,
    names: list[str],
    start: datetime | None,
    dated: str,
    order: Callable[[Any], Any],
    matches: Callable[[Any], bool],
    default_status: str | None,
    problems: list[PlanstateError],
) -> tuple[list[tuple[Any, str]], list[PlanstateError]]:
    """The records the store cannot say enough of, read: the sort key and name of each that matches, and those that
    do not validate (located); the files that cannot be read go into `problems`."""
    matched: list[tuple[Any, str]] = []
    wrong: list[PlanstateError] = []
    folder = ctx.target.folder(kind)
    for name in sorted(names):
        path = folder / name
        data = recordfiles.mapping(ctx, path, problems)
        if data is None:
            continue
        record = Record(kind, path, data)
        if problems_for(kind, data):
            wrong.append(located_problem(ctx, kind, record))
        value, current = data.get(dated), data.get("status", default_status)
        if matches(current) and (start is None or at_or_after(value, start)):
            matched.append((order(value), name))
    return matched, wrong


def _light_page(
    ctx: Context,
    kind: str,
    light: Any,
    keep: int,
    start: datetime | None,
    dated: str,
    order: Callable[[Any], Any],
    matches: Callable[[Any], bool],
    default_status: str | None,
    problems: list[PlanstateError],
) -> tuple[list[str], int, list[PlanstateError]]:
    """A list's page from the store's columns of a folder (store/folders.Columns): the names of the records shown,
    oldest first, how many older ones match, and the records that do not validate (located); the files that cannot
    be read go into `problems`. The records the columns cannot say enough of are read, as the full listing reads
    them."""
    matched: list[tuple[Any, str]] = []
    for name, text, current in light.rows:
        if text == "None":  # no date: the list takes what the record holds
            light.unsure.append(name)
            continue
        if not matches(current if current is not None else default_status):
            continue
        if start is not None and not at_or_after(text, start):
            continue
        matched.append((order(text), name))
    unsure, wrong = _read_unsure(ctx, kind, light.unsure, start, dated, order, matches, default_status, problems)
    matched += unsure
    matched.sort()
    more = max(len(matched) - keep, 0) if keep else 0
    return [name for _key, name in matched[more:]], more, wrong


def page_size(limit: int | None) -> int:
    """The number of records a list shows for `limit` (None: the default page; 0: all); UsageError when negative."""
    if limit is None:
        return PAGE
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise UsageError(f"limit must be 0 or more, not {limit!r}", argument="limit")
    return limit


def _record(ctx: Context, kind: str, path: Path) -> Record:
    """A record file as a committing transaction will write it, else as read (through the store)."""
    pending = ctx.pending.get(path.absolute())
    return Record(kind, path, pending if pending is not None else ctx.cached_data(path))


def located_problem(ctx: Context, kind: str, record: Record) -> PlanstateError:
    """The first validation problem of a record that does not validate, located in its file: a list shows such a
    record as it is and warns, so a hand edit never makes a record vanish silently."""
    doc = ctx.read_document(record.path)
    return validation_located(doc, problems_for(kind, record.data)[:1])[0]


def at_or_after(value: Any, start: datetime) -> bool:
    """Whether a record's date or timestamp is at or after `start` (a date counts as its whole day)."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value >= start.astimezone(UTC).date()
    if isinstance(value, str) and len(value.strip()) == 10:
        try:
            return date.fromisoformat(value.strip()) >= start.astimezone(UTC).date()
        except ValueError:
            return False
    when = parse_datetime(value)
    return when is not None and when >= start


def refuse_read_only(ctx: Context, initiative: Initiative) -> None:
    """Refuse a new or changed record in an archived or completed initiative (read-only until reopened).

    Reads STATE.md through the store; an unreadable STATE.md does not stop a record (validate reports it)."""
    try:
        data = ctx.cached_data(initiative.state_path)
    except PlanstateError:
        return
    lifecycle = data.get("lifecycle") if isinstance(data, dict) else None
    state = lifecycle.get("state") if isinstance(lifecycle, dict) else None
    if state not in READ_ONLY_STATES:
        return
    doc = ctx.read_document(initiative.state_path)
    line, column = doc.locate(["lifecycle", "state"])
    raise UsageError(
        read_only_message(data.get("initiative"), state),
        file=doc.path,
        line=line,
        column=column,
        field="lifecycle.state",
    )


def editable(tx: Transaction, kind: str, path: Path) -> Any:
    """The working model of a record in `tx`, refusing a file that is invalid already: a command that
    changes a record must not silently replace a hand-written value it does not understand."""
    staged = tx.load(kind, path)
    found = problems_for(kind, staged.data)
    if found:
        raise ValidationError(validation_located(staged.doc, found))
    return tx.record(kind, path)


def located(tx: Transaction, kind: str, path: Path, name: str) -> dict[str, Any]:
    """Keyword arguments for an error about field `name` of a file in transaction `tx`: file, line, column, field."""
    doc = tx.load(kind, path).doc
    line, column = doc.locate([name])
    return {"file": doc.path, "line": line, "column": column, "field": name}


def known_phases(ctx: Context) -> range | None:
    """The phase numbers of the target initiative, when its STATE.md can be read (None otherwise: a record is
    still worth keeping, and validate and check report the broken STATE.md)."""
    from planstate.model.kinds import State, phase_numbers

    try:
        data = ctx.cached_data(ctx.target.state_path)
    except PlanstateError:
        return None
    if not isinstance(data, dict):
        return None
    try:
        return phase_numbers(State(data))
    except (TypeError, ValueError):
        return None


def check_phase(ctx: Context, phase: int) -> None:
    """Refuse what is no phase number (0 or more), and a phase number the initiative does not have (when its STATE.md
    can be read at all)."""
    if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
        raise UsageError(f"{phase!r} is not a phase number", field="phase")
    numbers = known_phases(ctx)
    if numbers is not None and len(numbers) and phase not in numbers:
        raise UsageError(
            f"{phase} is not a phase of this initiative; phases are numbered {numbers.start} to {numbers.stop - 1}",
            field="phase",
        )


def refuse_unknown_phases(ctx: Context, affects: Sequence[str]) -> None:
    """Refuse `affects` items that name a phase the initiative does not have (`phase 4` of three): check would
    report the record as a missing reference, and no command may leave the workspace failing check. A bare number
    (`2`) is refused too: it names no phase (`phase 2` does), and a blocker meant to block phase 2 would block
    nothing, silently."""
    from planstate.model.kinds import phase_reference

    for index, item in enumerate(affects):
        bare = item.strip()
        if bare.isascii() and bare.isdecimal():
            raise UsageError(
                f"{bare!r} is a bare number, which names no phase: write 'phase {bare}' for phase {bare}",
                field=f"affects[{index}]",
            )
    numbers = known_phases(ctx)
    if numbers is None or not len(numbers):
        return
    for item in affects:
        number = phase_reference(item)
        if number is not None and number not in numbers:
            raise UsageError(
                f"names phase {number}, but phases are numbered {numbers.start} to {numbers.stop - 1}",
                field="affects",
            )


def origin_key(origin: Any) -> tuple[str, str, str] | None:
    """The key an imported item is found by: its `imported_from` source, path and id (None when it has none)."""
    if not isinstance(origin, dict) or not origin.get("source"):
        return None
    return (str(origin.get("source")), str(origin.get("path")), str(origin.get("id")))


def imported_records(ctx: Context, initiative: Initiative, kind: str) -> dict[tuple[str, str, str], Record]:
    """The records of `kind` in an initiative that came from an import, by their origin key."""
    found, _problems = recordfiles.load_all(ctx, initiative, kind)
    return {key: record for record in found if (key := origin_key(record.data.get("imported_from"))) is not None}


def write_imported(
    tx: Transaction,
    initiative: Initiative,
    kind: str,
    data: dict[str, Any],
    body: str,
    existing: Record | None,
) -> str:
    """Create or update an imported record as the source has it: its id (a fresh one when the source has none),
    dates and status are kept, never stamped "now" or checked against the add commands' rules (the schema still
    applies at commit). `existing` is the record an earlier import made from the same origin: its fields take
    the source's values and keys people added stay. Returns `created`, `updated` or `unchanged`."""
    from planstate.core import ids
    from planstate.text.plaindata import same

    if existing is not None:
        staged = tx.load(kind, existing.path, initiative)
        before = dict(staged.data)
        staged.data.update({k: v for k, v in data.items() if k != "id"})
        return "unchanged" if same(before, staged.data) else "updated"
    title = str(data.get("agent" if kind == "session" else "title") or kind)
    record_id = data.get("id")
    if record_id is None:  # the same id on every import of the source: its date and where it came from
        from planstate.core.clock import parse_datetime

        when = parse_datetime(data.get({"decision": "date", "blocker": "identified"}.get(kind, "started")))
        record_id = ids.derived_id(kind, when.timestamp() if when else 0, repr(origin_key(data.get("imported_from"))))
    path = initiative.folder(kind) / ids.file_name(str(record_id), title)
    tx.create(kind, path, {"schema_version": data.get("schema_version", 1), "id": record_id, **data}, body)
    return "created"
