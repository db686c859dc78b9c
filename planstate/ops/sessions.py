"""Work sessions: start, heartbeat, end, list and show them; `reap` is reaping.py's.

A session's file in `sessions/` is committed; its heartbeat is the modification time of a machine-local
file that is never committed (heartbeats.py), so liveness never churns git. No session command ever
completes an initiative: ending or losing an agent is not finishing the work.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from planstate.core.clock import now, parse_datetime
from planstate.core.errors import UsageError
from planstate.model.kinds import SCHEMA_VERSION, SESSION_STATUSES
from planstate.ops import heartbeats, reaping, records
from planstate.ops.heartbeats import Beat
from planstate.ops.heartbeats import last_heartbeat as last_heartbeat  # report/brief.py imports it from here
from planstate.ops.reaping import Reaped
from planstate.ops.records import Entry, Listing
from planstate.store import recordfiles
from planstate.text.yamltext import format_datetime

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

KIND = "session"
ENV = "PLANSTATE_SESSION"


class SessionAPI:
    """`ws.session`: the `planstate session` commands as methods with the same names."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ one session

    def start(
        self,
        *,
        agent: str | None = None,
        working_on: str | None = None,
        exclusive: bool = False,
        request_id: str | None = None,
    ) -> Entry:
        """Start a session of `agent` (default: the actor) on the initiative; warn (or with `exclusive`, refuse)
        when another session of the initiative is active. Creates its heartbeat."""
        ctx = self.ctx
        who = records.text(agent if agent is not None else ctx.actor, "agent")
        doing = records.optional_text(working_on, "working_on")
        key = records.optional_text(request_id, "request_id")
        initiative = ctx.target
        records.preload_templates(ctx, KIND)
        with ctx.transaction(state=False) as tx:
            records.refuse_read_only(ctx, initiative)  # no new work there; `end` and `reap` still close sessions
            made = records.retried(ctx, initiative, KIND, key)
            if made is not None and key is not None:
                return self._entry(made).warned(records.retry_warning(KIND, made, key))
            found, problems = recordfiles.load_all(ctx, initiative, KIND)
            active = [r for r in found if r.data.get("status") == "active"]
            if active and exclusive:
                raise UsageError(
                    f"{_others(ctx, active)}; refusing to start another (exclusive=True). End a finished one with "
                    "`planstate session end --session ID`; `planstate session reap` marks stale ones crashed",
                    argument="exclusive",
                )
            previous = _previous(found)
            record_id, path = recordfiles.new_path(initiative, KIND, who, names=tx.names(initiative.folder(KIND), KIND))
            when = now()
            data = _new_session(record_id, who, when, doing, previous)
            if key is not None:
                data["request_id"] = key
            context = {**data, "resumed_status": previous.data.get("status") if previous else None}
            tx.create(KIND, path, data, records.body(ctx, KIND, context))
        ctx.save_cache()
        warnings = [f"{_others(ctx, active)}; started {record_id} anyway"] if active else []
        warnings.extend(f"skipped {problem}" for problem in problems)  # it may be an active session
        beat: str | None = format_datetime(when)
        try:
            heartbeats.beat(ctx, record_id, who, when)
        except UsageError as exc:  # the session exists; without a heartbeat, reap goes by its start time
            warnings.append(f"no heartbeat: {exc}")
            beat = None
        return Entry(KIND, record_id, path, ctx.display(path), data, {"heartbeat": beat}, warnings)

    def heartbeat(self, session: str | None = None) -> Beat:
        """Mark an active session alive now: touch its heartbeat file (never the committed session file)."""
        ctx = self.ctx
        with ctx.transaction(state=False) as tx:  # the lock only: a reap in between cannot miss this beat
            record = self._resolve(session)
            status = record.data.get("status")
            if status != "active":
                ended = parse_datetime(record.data.get("ended"))
                raise UsageError(
                    f"session {record.id} is {status}"
                    + (f" since {format_datetime(ended)}" if ended else "")
                    + "; start a new one with `planstate session start`",
                    **records.located(tx, KIND, record.path, "status"),
                )
            when = now()
            path = heartbeats.beat(ctx, record.id, str(record.data.get("agent")), when)
        return Beat(record.id, when, path, ctx.display(path))

    def end(
        self,
        session: str | None = None,
        *,
        completed: Sequence[str] = (),
        issues: Sequence[str] = (),
        handoff_reason: str | None = None,
        notes: str | None = None,
        context_usage: float | str | None = None,
    ) -> Entry:
        """End a session: status ended, `ended` now, what was completed and the issues met, handoff and notes.

        A session that `reap` marked crashed may still be ended by its agent; its reap note stays in `issues`.
        """
        ctx = self.ctx
        done = records.texts(completed, "completed")
        met = records.texts(issues, "issues")
        handoff = records.optional_text(handoff_reason, "handoff_reason")
        note = records.optional_text(notes, "notes")
        usage = _usage(context_usage)
        warnings: list[str] = []
        with ctx.transaction(state=False) as tx:
            record = self._resolve(session)
            current = records.editable(tx, KIND, record.path)
            if current.status == "ended":
                raise UsageError(
                    f"session {record.id} already ended"
                    + (f" at {format_datetime(current.ended)}" if current.ended else ""),
                    **records.located(tx, KIND, record.path, "status"),
                )
            if current.status == "crashed":
                warnings.append(f"session {record.id} had been marked crashed; it is ended now")
            current.status = "ended"
            current.ended = now()
            current.completed.extend(done)
            current.issues.extend(met)
            if handoff is not None:
                current.handoff_reason = handoff
            if note is not None:
                current.notes = note
            if usage is not None:
                current.context_usage = usage
            data = current.to_data()
        heartbeats.forget(ctx, record.id)
        ctx.save_cache()
        return Entry(KIND, record.id, record.path, ctx.display(record.path), data, warnings=warnings)

    def list(
        self,
        *,
        status: str | None = None,
        since: str | date | datetime | None = None,
        all: bool = False,
        limit: int | None = records.PAGE,
    ) -> Listing:
        """The sessions of the initiative by start time, each with its last heartbeat on this machine; archived ones
        only with `all`; the newest `limit` of them (0: all)."""
        return records.listing(
            self.ctx,
            KIND,
            status=status,
            after=since,
            statuses=SESSION_STATUSES,
            order=_timestamp,
            make=self._entry,
            archived=all,
            limit=limit,
        )

    def show(self, id: str) -> Entry:
        """One session (by id or unique id prefix) with its body and last heartbeat."""
        record = recordfiles.find(self.ctx, self.ctx.target, KIND, id, archived=True)
        doc = self.ctx.read_document(record.path)
        self.ctx.save_cache()
        entry = self._entry(record)
        entry.extra["body"] = doc.body
        return entry

    # ------------------------------------------------------------------ reaping

    def reap(
        self,
        *,
        stale_after: str | timedelta = "30m",
        abandon_after: str | timedelta | None = None,
        dry_run: bool = False,
    ) -> Reaped:
        """Mark active sessions without a sign of life for `stale_after` crashed; with `abandon_after`, move
        active initiatives without any activity for that long to abandoned. Every initiative unless the
        workspace was opened on one (`initiative`). Idempotent; with `dry_run` nothing is written."""
        return reaping.reap(self.ctx, stale_after=stale_after, abandon_after=abandon_after, dry_run=dry_run)

    # ------------------------------------------------------------------ helpers

    def _entry(self, record: recordfiles.Record) -> Entry:
        """An Entry for a session, with its last heartbeat on this machine."""
        beat = last_heartbeat(self.ctx, record.id)
        return records.entry(self.ctx, record, heartbeat=format_datetime(beat) if beat else None)

    def _resolve(self, ref: str | None) -> recordfiles.Record:
        """The session a command means: `ref`, else $PLANSTATE_SESSION, else the only active one of this agent,
        else the only active one of the initiative."""
        ctx = self.ctx
        initiative = ctx.target
        if ref is not None:
            return recordfiles.find(ctx, initiative, KIND, ref)
        named = os.environ.get(ENV, "").strip()
        if named:
            try:
                return recordfiles.find(ctx, initiative, KIND, named)
            except UsageError as exc:
                raise UsageError(f"{ENV}={named}: {exc.message}") from None
        return _the_active_one(ctx, initiative)


def _the_active_one(ctx: Context, initiative: Initiative) -> recordfiles.Record:
    """The only active session of this agent, else the only active one of the initiative; UsageError when there
    are several (name one) or none (start one)."""
    found, _problems = recordfiles.load_all(ctx, initiative, KIND)
    active = [r for r in found if r.data.get("status") == "active"]
    mine = [r for r in active if r.data.get("agent") == ctx.actor]
    for candidates in (mine, active):
        if len(candidates) == 1:
            return candidates[0]
        if len(candidates) > 1:
            listed = ", ".join(f"{r.id} ({r.data.get('agent')})" for r in candidates)
            raise UsageError(
                f"{len(candidates)} sessions are active ({listed}); name one with session=ID or {ENV}",
                argument="session",
            )
    raise UsageError(
        f"no active session in {ctx.display(initiative.folder(KIND))}/; start one with `planstate session start`"
    )


def _new_session(
    record_id: str, agent: str, when: datetime, working_on: str | None, previous: recordfiles.Record | None
) -> dict[str, Any]:
    """A new session's front matter, every field present; it continues `previous` when there is one."""
    return {
        "schema_version": SCHEMA_VERSION,
        "id": record_id,
        "agent": agent,
        "status": "active",
        "started": when,
        "ended": None,
        "working_on": working_on,
        "completed": [],
        "issues": [],
        "handoff_reason": None,
        "notes": None,
        "context_usage": None,
        "resumed_from": previous.id if previous else None,
    }


def _others(ctx: Context, active: list[recordfiles.Record]) -> str:
    """`session X of AGENT is active (last heartbeat …)` for one or more active sessions."""
    parts = []
    for r in active:
        beat = last_heartbeat(ctx, r.id)
        seen = f"last heartbeat {format_datetime(beat)}" if beat else "no heartbeat on this machine"
        parts.append(f"{r.id} of {r.data.get('agent')} ({seen})")
    verb = "is" if len(parts) == 1 else "are"
    return f"session{'s' if len(parts) > 1 else ''} {', '.join(parts)} {verb} active on this initiative"


def _previous(found: list[recordfiles.Record]) -> recordfiles.Record | None:
    """The most recent session that ended or crashed: the one a new session continues from (its handoff)."""
    done = [r for r in found if r.data.get("status") in ("ended", "crashed")]
    if not done:
        return None
    return max(done, key=lambda r: (_timestamp(r.data.get("ended") or r.data.get("started")), r.path.name))


def _timestamp(value: Any) -> float:
    """A sort key for a timestamp that may be missing or hand-written (missing ones first)."""
    when = parse_datetime(value)
    return when.timestamp() if when is not None else float("-inf")


def _usage(value: float | str | None) -> float | str | None:
    """Context usage as given: a number stays a number, `62%` stays text; blank is refused."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    text = records.text(str(value), "context_usage")
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number
