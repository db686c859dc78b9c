"""Work sessions: start, heartbeat, end, list, show, and reap the ones that stopped without ending.

A session's file in `sessions/` is committed; its heartbeat is the modification time of
`.planning/.local/heartbeats/<id>`, which is machine-local and never committed, so liveness
never churns git. `reap` marks sessions whose last sign of life is too old as crashed, and
with `abandon_after` moves initiatives without any activity to `abandoned` (stale work is
marked, never kept active forever). No session command ever completes an initiative: ending or
losing an agent is not finishing the work.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core import durations
from planstate.core.clock import now, parse_datetime
from planstate.core.errors import LockTimeout, PlanstateError, UsageError
from planstate.core.layout import LOCAL
from planstate.model.kinds import SCHEMA_VERSION, SESSION_STATUSES
from planstate.model.validation import located, problems_for
from planstate.ops import records
from planstate.ops.records import Entry, Listing
from planstate.store import recordfiles
from planstate.text.yamltext import format_datetime

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction

KIND = "session"
HEARTBEATS = Path(LOCAL, "heartbeats")  # under .planning/, gitignored with the rest of LOCAL
ENV = "PLANSTATE_SESSION"
REAP_TRIGGER = "session reap"


@dataclass
class Beat:
    """What `session heartbeat` did: which session beat, when, and where the heartbeat file is."""

    id: str
    at: datetime
    heartbeat: Path

    def to_dict(self) -> dict[str, Any]:
        """The beat as JSON-ready data."""
        return {"id": self.id, "at": format_datetime(self.at), "heartbeat": str(self.heartbeat)}


@dataclass
class Crash:
    """A session `reap` found without a sign of life for too long."""

    id: str
    path: str
    initiative: str
    agent: str
    last_seen: datetime
    heartbeat: bool  # whether the last sign of life was a heartbeat (else only the start time was known)

    def to_dict(self) -> dict[str, Any]:
        """The crash as JSON-ready data."""
        return {
            "id": self.id,
            "path": self.path,
            "initiative": self.initiative,
            "agent": self.agent,
            "last_seen": format_datetime(self.last_seen),
            "heartbeat": self.heartbeat,
        }


@dataclass
class Abandon:
    """An active initiative `reap` found without any activity for too long."""

    initiative: str
    path: str
    last_activity: datetime | None

    def to_dict(self) -> dict[str, Any]:
        """The abandonment as JSON-ready data."""
        last = format_datetime(self.last_activity) if self.last_activity else None
        return {"initiative": self.initiative, "path": self.path, "last_activity": last}


@dataclass
class Reaped:
    """What `session reap` did (or, with `dry_run`, would do)."""

    crashed: list[Crash] = field(default_factory=list)
    abandoned: list[Abandon] = field(default_factory=list)
    dry_run: bool = False
    problems: list[PlanstateError] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.crashed or self.abandoned)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        return {
            "dry_run": self.dry_run,
            "crashed": [c.to_dict() for c in self.crashed],
            "abandoned": [a.to_dict() for a in self.abandoned],
        }


class SessionAPI:
    """`ws.session`: the `planstate session` commands as methods with the same names."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ one session

    def start(self, *, agent: str | None = None, working_on: str | None = None, exclusive: bool = False) -> Entry:
        """Start a session of `agent` (default: the actor) on the initiative; warn (or with `exclusive`, refuse)
        when another session of the initiative is active. Creates its heartbeat."""
        ctx = self.ctx
        who = records.text(agent if agent is not None else ctx.actor, "agent")
        doing = records.optional_text(working_on, "working_on")
        initiative = ctx.target
        records.preload_templates()
        with ctx.transaction() as tx:
            records.refuse_read_only(ctx, initiative)  # no new work there; `end` and `reap` still close sessions
            found, problems = recordfiles.load_all(ctx, initiative, KIND)
            active = [r for r in found if r.data.get("status") == "active"]
            if active and exclusive:
                raise UsageError(
                    f"{_others(ctx, active)}; refusing to start another (exclusive=True). End a finished one with "
                    "`planstate session end --session ID`; `planstate session reap` marks stale ones crashed",
                    argument="exclusive",
                )
            previous = _previous(found)
            record_id, path = recordfiles.new_path(initiative, KIND, who)
            when = now()
            data = _new_session(record_id, who, when, doing, previous)
            context = {**data, "resumed_status": previous.data.get("status") if previous else None}
            tx.create(KIND, path, data, records.body(ctx, KIND, context))
        ctx.save_cache()
        warnings = [f"{_others(ctx, active)}; started {record_id} anyway"] if active else []
        warnings.extend(f"skipped {problem}" for problem in problems)  # it may be an active session
        beat: str | None = format_datetime(when)
        try:
            _beat(ctx, record_id, who, when)
        except UsageError as exc:  # the session exists; without a heartbeat, reap goes by its start time
            warnings.append(f"no heartbeat: {exc}")
            beat = None
        return Entry(KIND, record_id, path, ctx.display(path), data, {"heartbeat": beat}, warnings)

    def heartbeat(self, session: str | None = None) -> Beat:
        """Mark an active session alive now: touch its heartbeat file (never the committed session file)."""
        ctx = self.ctx
        with ctx.transaction() as tx:  # the lock only: a reap in between cannot miss this beat
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
            path = _beat(ctx, record.id, str(record.data.get("agent")), when)
        return Beat(record.id, when, path)

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
        with ctx.transaction() as tx:
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
        _forget(ctx, record.id)
        ctx.save_cache()
        return Entry(KIND, record.id, record.path, ctx.display(record.path), data, warnings=warnings)

    def list(self, *, status: str | None = None, since: str | date | datetime | None = None) -> Listing:
        """The sessions of the initiative by start time, each with its last heartbeat on this machine."""
        return records.listing(
            self.ctx,
            KIND,
            status=status,
            after=since,
            statuses=SESSION_STATUSES,
            dated="started",
            order=lambda e: (_timestamp(e.data.get("started")), e.path.name),
            make=self._entry,
        )

    def show(self, id: str) -> Entry:
        """One session (by id or unique id prefix) with its body and last heartbeat."""
        record = recordfiles.find(self.ctx, self.ctx.target, KIND, id)
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
        ctx = self.ctx
        stale = _duration(stale_after, "stale_after")
        idle = _duration(abandon_after, "abandon_after") if abandon_after is not None else None
        from planstate.store.initiatives import discover

        scope = [ctx.target] if ctx.initiative_slug else discover(ctx.root)
        result = Reaped(dry_run=dry_run)
        for initiative in scope:
            # One transaction per initiative: a broken file in one initiative does not stop the others.
            found = Reaped(dry_run=dry_run)
            try:
                with ctx.transaction() as tx:
                    self._reap_one(tx, initiative, now(), stale, idle, found)
            except LockTimeout:
                raise
            except PlanstateError as exc:
                result.problems.append(exc)
                continue
            result.crashed.extend(found.crashed)
            result.abandoned.extend(found.abandoned)
            result.problems.extend(found.problems)
        if not dry_run:
            for crash in result.crashed:
                _forget(ctx, crash.id)
        ctx.save_cache()
        return result

    def _reap_one(
        self,
        tx: Transaction,
        initiative: Initiative,
        when: datetime,
        stale: timedelta,
        idle: timedelta | None,
        result: Reaped,
    ) -> None:
        """Reap one initiative inside the reap's transaction."""
        ctx = self.ctx
        found, problems = recordfiles.load_all(ctx, initiative, KIND)
        result.problems.extend(problems)
        slug = _slug(ctx, initiative)
        latest: list[datetime] = []  # every session's last sign of life, for the initiative's activity
        for record in found:
            beat = last_heartbeat(ctx, record.id)
            started = parse_datetime(record.data.get("started"))
            seen = max((t for t in (beat, started) if t is not None), default=None)
            latest.extend(t for t in (seen, parse_datetime(record.data.get("ended"))) if t is not None)
            if record.data.get("status") == "active" and seen is not None and when - seen > stale:
                self._crash(tx, record, slug, seen, beat is not None, stale, result)
        if idle is not None:
            self._abandon_if_idle(tx, initiative, slug, when, idle, latest, result)

    def _crash(
        self,
        tx: Transaction,
        record: recordfiles.Record,
        slug: str,
        seen: datetime,
        beat: bool,
        stale: timedelta,
        result: Reaped,
    ) -> None:
        """Mark a stale active session crashed, noting its last sign of life in its issues."""
        ctx = self.ctx
        invalid = problems_for(KIND, record.data)
        if invalid:  # reap what it can; a hand-broken file is reported, not rewritten
            result.problems.extend(located(ctx.read_document(record.path), invalid))
            return
        agent = str(record.data.get("agent"))
        result.crashed.append(Crash(record.id, ctx.display(record.path), slug, agent, seen, beat))
        if result.dry_run:
            return
        session = tx.record(KIND, record.path)
        session.status = "crashed"
        session.ended = seen
        since = "no heartbeat since" if beat else "no heartbeat on this machine since it started"
        session.issues.append(
            f"{since} {format_datetime(seen)} (stale after {durations.show(stale)}); "
            "marked crashed by `planstate session reap`"
        )

    def _abandon_if_idle(
        self,
        tx: Transaction,
        initiative: Initiative,
        slug: str,
        when: datetime,
        idle: timedelta,
        latest: Sequence[datetime],
        result: Reaped,
    ) -> None:
        """Move an active initiative without any activity for `idle` (sessions' included, `latest`) to abandoned."""
        ctx = self.ctx
        state = _state_data(ctx, initiative)
        lifecycle = state.get("lifecycle") if isinstance(state.get("lifecycle"), dict) else {}
        if not isinstance(lifecycle, dict) or lifecycle.get("state") != "active":
            return
        last = max([*latest, *_activity(ctx, initiative, state)], default=None)
        if last is not None and when - last <= idle:
            return
        result.abandoned.append(Abandon(slug, ctx.display(initiative.state_path), last))
        if result.dry_run:
            return
        from planstate.ops import lifecycle as transitions

        quiet = f"no activity since {format_datetime(last)}" if last else "no activity found"
        transitions.apply(
            tx, initiative, "abandon", reason=f"{quiet} (abandon after {durations.show(idle)})", trigger=REAP_TRIGGER
        )

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


def heartbeat_path(ctx: Context, session_id: str) -> Path:
    """Where a session's heartbeat file is (it may not exist)."""
    return ctx.root / HEARTBEATS / session_id


def last_heartbeat(ctx: Context, session_id: str) -> datetime | None:
    """When a session last beat on this machine (its heartbeat file's modification time), or None."""
    try:
        mtime = heartbeat_path(ctx, session_id).stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(int(mtime), UTC)


def _beat(ctx: Context, session_id: str, agent: str, when: datetime) -> Path:
    """Create or touch a heartbeat file, setting its modification time to `when` (planstate's clock)."""
    path = heartbeat_path(ctx, session_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            # The content is for people looking at the folder; only the modification time counts.
            path.write_text(f"session {session_id}\nagent {agent}\nhost {os.uname().nodename}\n", encoding="utf-8")
        stamp = when.timestamp()
        os.utime(path, (stamp, stamp))
    except OSError as exc:
        raise UsageError(f"cannot write the heartbeat: {exc.strerror}", file=ctx.display(path)) from None
    return path


def _forget(ctx: Context, session_id: str) -> None:
    """Remove the heartbeat of a session that is over; a leftover one is harmless (only active sessions beat)."""
    with contextlib.suppress(OSError):
        heartbeat_path(ctx, session_id).unlink(missing_ok=True)


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


def _duration(value: str | timedelta, argument: str) -> timedelta:
    """A duration from text (`30m`) or a timedelta, which must be positive; errors are about `argument`."""
    if isinstance(value, timedelta):
        if value.total_seconds() <= 0:
            raise UsageError(f"{argument} must be longer than zero", argument=argument)
        return value
    return durations.parse(value, argument)


def _slug(ctx: Context, initiative: Initiative) -> str:
    """The initiative's slug, for messages."""
    from planstate.store.initiatives import summarize

    return summarize(ctx, initiative).slug


def _state_data(ctx: Context, initiative: Initiative) -> dict[str, Any]:
    """An initiative's STATE.md front matter (empty when unreadable: such an initiative is never abandoned)."""
    try:
        data = ctx.cached_data(initiative.state_path)
    except PlanstateError:
        return {}
    return data if isinstance(data, dict) else {}


def _activity(ctx: Context, initiative: Initiative, state: dict[str, Any]) -> list[datetime]:
    """Every sign of activity of an initiative apart from its sessions: STATE.md, history, decisions, blockers."""
    from planstate.store import history

    lifecycle = state.get("lifecycle") if isinstance(state.get("lifecycle"), dict) else {}
    values: list[Any] = [state.get("updated"), lifecycle.get("since") if isinstance(lifecycle, dict) else None]
    entries, _problems = history.read(initiative.history_path, ctx.display(initiative.history_path))
    values.extend(e.get("at") for e in entries[-1:])
    for kind, keys in (("decision", ("date",)), ("blocker", ("identified", "resolved"))):
        found, _problems = recordfiles.load_all(ctx, initiative, kind)
        values.extend(r.data.get(k) for r in found for k in keys)
    return [t for t in (parse_datetime(v) for v in values) if t is not None]
