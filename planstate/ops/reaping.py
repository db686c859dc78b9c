"""Reaping: mark sessions that stopped without ending crashed, and move initiatives idle for too long to abandoned.

A session's last sign of life is its heartbeat on this machine, else its start time (heartbeats.py). Stale work
is marked, never kept active forever; reaping never completes an initiative: losing an agent is not finishing
the work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from planstate.core import durations
from planstate.core.clock import now, parse_datetime
from planstate.core.errors import LockTimeout, PlanstateError, UsageError
from planstate.model import verdicts
from planstate.model.validation import located, problems_for
from planstate.ops.heartbeats import forget, last_heartbeat
from planstate.store import recordfiles
from planstate.text.yamltext import format_datetime

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction

KIND = "session"
REAP_TRIGGER = "session reap"


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
            "seen_by_heartbeat": self.heartbeat,
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


def reap(
    ctx: Context,
    *,
    stale_after: str | timedelta = "30m",
    abandon_after: str | timedelta | None = None,
    dry_run: bool = False,
) -> Reaped:
    """Mark active sessions without a sign of life for `stale_after` crashed; with `abandon_after`, move active
    initiatives without any activity for that long to abandoned. Every initiative unless the context was opened on
    one. Idempotent; with `dry_run` nothing is written."""
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
                _reap_one(ctx, tx, initiative, now(), stale, idle, found)
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
            forget(ctx, crash.id)
    ctx.save_cache()
    return result


def _reap_one(
    ctx: Context,
    tx: Transaction,
    initiative: Initiative,
    when: datetime,
    stale: timedelta,
    idle: timedelta | None,
    result: Reaped,
) -> None:
    """Reap one initiative inside the reap's transaction."""
    found, problems = recordfiles.load_all(ctx, initiative, KIND)
    result.problems.extend(problems)
    slug = _slug(ctx, initiative)
    latest: list[datetime] = []  # every session's last sign of life, for the initiative's activity
    for record in found:
        beat = last_heartbeat(ctx, record.id)
        seen = verdicts.last_seen(beat, record.data.get("started"))
        latest.extend(t for t in (seen, parse_datetime(record.data.get("ended"))) if t is not None)
        if (
            seen is not None
            and record.data.get("status") == "active"
            and verdicts.silent(seen, when, stale.total_seconds())
        ):
            _crash(ctx, tx, record, slug, seen, beat is not None, stale, result)
    if idle is not None:
        _abandon_if_idle(ctx, tx, initiative, slug, when, idle, latest, result)


def _crash(
    ctx: Context,
    tx: Transaction,
    record: recordfiles.Record,
    slug: str,
    seen: datetime,
    beat: bool,
    stale: timedelta,
    result: Reaped,
) -> None:
    """Mark a stale active session crashed, noting its last sign of life in its issues."""
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
    ctx: Context,
    tx: Transaction,
    initiative: Initiative,
    slug: str,
    when: datetime,
    idle: timedelta,
    latest: Sequence[datetime],
    result: Reaped,
) -> None:
    """Move an active initiative without any activity for `idle` (sessions' included, `latest`) to abandoned."""
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
