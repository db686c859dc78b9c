"""Blockers: record, list, show, and move through their states (the TABLE below); one file per blocker.

Blocker commands write blocker files and, in the same transaction, only the regions of STATE.md
that show records, so two clones recording blockers merge cleanly (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.clock import now, parse_datetime
from planstate.core.errors import UsageError
from planstate.model.kinds import BLOCKER_STATUSES, OPEN_BLOCKERS, SCHEMA_VERSION
from planstate.ops import records
from planstate.ops.records import Entry, Listing
from planstate.store import recordfiles
from planstate.text.yamltext import format_datetime

if TYPE_CHECKING:
    from planstate.store.context import Context

KIND = "blocker"


class Move(NamedTuple):
    """One allowed move: `command` takes a blocker from `source` to `target`."""

    source: str
    command: str
    target: str


# [new] ─identify→ [active] ─resolve→ [resolved], and an active blocker with a
# workaround is [bypassed]. A bypassed blocker whose workaround stops working is active again;
# any unresolved blocker may be resolved. Resolved is final: a blocker that comes back is a new one.
TABLE: tuple[Move, ...] = tuple(
    Move(*row)
    for row in (
        ("new", "activate", "active"),
        ("new", "resolve", "resolved"),
        ("active", "bypass", "bypassed"),
        ("active", "resolve", "resolved"),
        ("bypassed", "activate", "active"),
        ("bypassed", "resolve", "resolved"),
    )
)


def allowed(source: str) -> list[Move]:
    """The moves that leave `source`, in table order."""
    return [m for m in TABLE if m.source == source]


def target_of(source: str, command: str) -> str:
    """The status `command` leads to from `source`; UsageError naming the allowed commands otherwise."""
    for move in TABLE:
        if move.source == source and move.command == command:
            return move.target
    moves = ", ".join(f"`blocker {m.command}` (→ {m.target})" for m in allowed(source)) or "none, it is final"
    raise UsageError(f"cannot {command} a blocker that is {source}; allowed from {source}: {moves}")


class BlockerAPI:
    """`ws.blocker`: the `planstate blocker` commands as methods with the same names."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def add(
        self,
        *,
        description: str,
        affects: Sequence[str] = (),
        title: str | None = None,
        active: bool = False,
        blocked_tasks: Sequence[str] = (),
        request_id: str | None = None,
    ) -> Entry:
        """Record a blocker in a new file, status `new` (or `active` when it already blocks work).

        With `request_id`, a retry of a call that already made its blocker answers with that blocker (and a
        warning) instead of recording it twice."""
        ctx = self.ctx
        key = records.optional_text(request_id, "request_id")
        text = records.text(description, "description")
        name = records.text(title, "title") if title is not None else records.short_title(text)
        data_affects = records.texts(affects, "affects")
        records.refuse_unknown_phases(ctx, data_affects)
        tasks = records.texts(blocked_tasks, "blocked_tasks")
        initiative = ctx.target
        records.preload_templates(ctx, KIND)
        with ctx.transaction(state=False) as tx:
            records.refuse_read_only(ctx, initiative)
            made = records.retried(ctx, initiative, KIND, key)
            if made is not None and key is not None:
                return records.entry(ctx, made).warned(records.retry_warning(KIND, made, key))
            record_id, path = recordfiles.new_path(
                initiative, KIND, name, names=tx.names(initiative.folder(KIND), KIND)
            )
            data: dict[str, Any] = {
                "schema_version": SCHEMA_VERSION,
                "id": record_id,
                "title": name,
                "status": "active" if active else "new",
                "description": text,
                "identified": now(),
                "affects": data_affects,
                "blocked_tasks": tasks,
                "workaround": None,
                "resolution": None,
                "resolved": None,
                "by": ctx.actor,
                **({"request_id": key} if key is not None else {}),
            }
            tx.create(KIND, path, data, records.body(ctx, KIND, data))
        ctx.save_cache()
        return Entry(KIND, record_id, path, ctx.display(path), data)

    def list(
        self,
        *,
        status: str | None = None,
        all: bool = False,
        since: str | date | datetime | None = None,
        limit: int | None = records.PAGE,
    ) -> Listing:
        """The blockers of the initiative by time identified; resolved ones only with `all` or `status`, archived ones
        only with `all`; the newest `limit` of them (0: all)."""
        return records.listing(
            self.ctx,
            KIND,
            status=status,
            after=since,
            statuses=BLOCKER_STATUSES,
            order=_sortable,
            shown=lambda current: all or current not in BLOCKER_STATUSES or current in OPEN_BLOCKERS,
            archived=all,
            limit=limit,
        )

    def show(self, id: str) -> Entry:
        """One blocker (by id or unique id prefix) with its body."""
        record = recordfiles.find(self.ctx, self.ctx.target, KIND, id, archived=True)
        doc = self.ctx.read_document(record.path)
        self.ctx.save_cache()
        return records.entry(self.ctx, record, body=doc.body)

    def activate(self, id: str, *, reason: str | None = None) -> Entry:
        """Mark a new blocker active (it blocks work), or a bypassed one active again (its workaround failed)."""
        return self._move(id, "activate", reason=records.optional_text(reason, "reason"))

    def bypass(self, id: str, *, workaround: str) -> Entry:
        """Mark an active blocker bypassed: work proceeds around it with `workaround`."""
        return self._move(id, "bypass", workaround=records.text(workaround, "workaround"))

    def resolve(self, id: str, *, resolution: str) -> Entry:
        """Mark a blocker resolved with how it was resolved; sets its `resolved` time."""
        return self._move(id, "resolve", resolution=records.text(resolution, "resolution"))

    def _move(
        self,
        ref: str,
        command: str,
        *,
        reason: str | None = None,
        workaround: str | None = None,
        resolution: str | None = None,
    ) -> Entry:
        """Apply one move of the TABLE to a blocker and note it in the blocker's `log`."""
        ctx = self.ctx
        with ctx.transaction(state=False) as tx:
            records.refuse_read_only(ctx, ctx.target)
            record = recordfiles.find(ctx, ctx.target, KIND, ref)
            blocker = records.editable(tx, KIND, record.path)
            source = blocker._data().get("status")
            try:
                target = target_of(str(source), command)
            except UsageError as exc:
                where = records.located(tx, KIND, record.path, "status")
                raise UsageError(f"{blocker.id}: {exc.message}", **where) from None
            when = now()
            blocker.status = target
            note = _record_move(blocker, command, source, when, reason, workaround, resolution)
            blocker.log.append(f"{format_datetime(when)} {source} → {target}" + (f": {note}" if note else ""))
            data = blocker.to_data()
        ctx.save_cache()
        return Entry(KIND, str(data["id"]), record.path, ctx.display(record.path), data)


def _record_move(
    blocker: Any,
    command: str,
    source: Any,
    when: datetime,
    reason: str | None,
    workaround: str | None,
    resolution: str | None,
) -> str:
    """Set the fields a move records on the blocker's model (workaround, resolution, when); return its log note."""
    if command == "bypass":
        blocker.workaround = workaround
        return workaround or ""
    if command == "resolve":
        blocker.resolution = resolution
        blocker.resolved = when
        return resolution or ""
    if command == "activate" and source == "bypassed":
        blocker.workaround = None  # it no longer works; the log keeps what it was
        return reason or "the workaround stopped working"
    return reason or ""


def _sortable(value: Any) -> float:
    """A sort key for a timestamp field that may be missing or hand-written (missing ones first)."""
    when = parse_datetime(value)
    return when.timestamp() if when is not None else float("-inf")
