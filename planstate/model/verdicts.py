"""The verdicts every view gives, each from one function: a phase's checkpoint, blocked phases, a stalled phase,
a silent session, and the one-word status that sums them up.

`planstate status`, `planstate resume`, `planstate check`, `session reap` and the MCP tools call these and
nothing else, so two views of the same files cannot disagree. They are pure: the files are read by the
callers, and the time is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from math import fsum
from typing import Any, TypeVar

from planstate.core.clock import parse_datetime
from planstate.model.kinds import (
    BLOCKING,
    FINISHED,
    Phase,
    State,
    affected_phases,
    is_complete,
    phase_at,
    phase_numbers,
)

STALL_FACTOR = 2  # a phase running longer than this many times the average completed phase is possibly stalled
# ... and never before it has run this long (seconds): one quick phase of 38 s must not make a 1-minute phase
# "stalled"; agent work is measured in hours.
STALL_FLOOR = 3600


def checkpoint(phase: Phase) -> str:
    """A phase's checkpoint as every view states it: `failed` when the phase or its checkpoint failed, else the
    checkpoint (`pending`, `passed`, `skipped`)."""
    return "failed" if phase.status == "failed" or phase.checkpoint == "failed" else str(phase.checkpoint)


def completed_durations(state: State) -> list[float]:
    """Seconds each completed phase took (those with both times)."""
    return [
        (p.completed - p.started).total_seconds()
        for p in state.phases
        if p.status == "completed" and p.started is not None and p.completed is not None
    ]


def average(durations: list[float]) -> float | None:
    """The mean of phase durations in seconds (None for none); `statistics` is not imported for it (4 ms a start)."""
    return fsum(durations) / len(durations) if durations else None


def stalled(running_seconds: float | None, durations: list[float]) -> bool:
    """Whether a phase that has run `running_seconds` is possibly stalled, given how long completed phases took."""
    mean = average(durations)
    if running_seconds is None or mean is None:
        return False
    return running_seconds > max(STALL_FACTOR * mean, STALL_FLOOR)


def running_seconds(state: State, when: datetime, entries: list[dict[str, Any]]) -> int | None:
    """How long the current phase has run while the initiative was active (None when it is not running)."""
    if not state.position.exists():
        return None
    phase = phase_at(state, state.position.phase)
    if phase is None or phase.status not in ("active", "failed") or phase.started is None or phase.completed:
        return None
    return active_seconds(phase.started, when, entries, state)


def active_seconds(start: datetime, end: datetime, entries: list[dict[str, Any]], state: State) -> int:
    """Whole seconds between `start` and `end` during which the initiative was active, from history.jsonl's
    transitions: time paused, suspended or otherwise stopped does not count as time spent in a phase.
    Without a history, the lifecycle's own `since` tells when a stopped initiative stopped."""
    timeline = sorted(
        (at, str(entry.get("to")))
        for entry in entries
        if (at := parse_datetime(entry.get("at"))) is not None and entry.get("to") is not None
    )
    if not timeline:
        lifecycle = state.lifecycle
        if lifecycle.state != "active" and lifecycle.since is not None and lifecycle.since > start:
            end = min(end, lifecycle.since)
        return max(0, int((end - start).total_seconds()))
    current = "active"  # before the first transition the initiative was being created: count it as active
    total = 0.0
    cursor = start
    for at, target in timeline:
        if at <= start:
            current = target
            continue
        if at >= end:
            break
        if current == "active":
            total += (at - cursor).total_seconds()
        cursor, current = at, target
    if current == "active" and end > cursor:
        total += (end - cursor).total_seconds()
    return max(0, int(total))


def blocked(state: State, blockers: Iterable[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Unfinished phases that an open (new or active) blocker names, each with those blockers (id and title),
    oldest first; `current` marks the phase the position is on."""
    found: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for record_id, data in sorted(blockers, key=lambda r: (str(r[1].get("identified")), r[0])):
        if data.get("status") in BLOCKING:
            for number in affected_phases(state, data.get("affects")):
                found.setdefault(number, []).append((record_id, data))
    out = []
    for number in sorted(found):
        phase = phase_at(state, number)
        if phase is None or phase.status in FINISHED:
            continue
        items = [{"id": i, "title": str(d.get("title") or d.get("description") or "")} for i, d in found[number]]
        current = state.position.exists() and state.position.phase == number
        out.append({"number": number, "name": phase.name, "current": current, "blockers": items})
    return out


Known = TypeVar("Known", bound=tuple[Any, ...])  # a blocker as a caller knows it: (id, its facts or data, ...)


def blocked_by_facts(
    state: State, blockers: Sequence[Known], whole: Callable[[Known], tuple[str, dict[str, Any]] | None]
) -> list[dict[str, Any]]:
    """`blocked` of blockers known by their facts (status, affects: what says which phases they block), each made
    `whole` (its id and whole front matter, None when it can no longer be read) only when it blocks a phase, for
    its title: a phase's blockers are all those that name it, so judging those alone again gives the same phases."""
    named = {b["id"] for item in blocked(state, [(r[0], r[1]) for r in blockers]) for b in item["blockers"]}
    made = (whole(r) for r in blockers if r[0] in named)
    return blocked(state, [r for r in made if r is not None])


def escalate(state: State, blocked_phases: list[dict[str, Any]]) -> bool:
    """Whether every unfinished phase is blocked: no agent can go on, so a person must resolve or bypass a blocker."""
    if is_complete(state) or state.lifecycle.state in ("completed", "archived"):
        return False
    numbered = zip(phase_numbers(state), state.phases, strict=False)
    unfinished = [n for n, phase in numbered if phase.status not in FINISHED]
    return bool(unfinished) and set(unfinished) <= {item["number"] for item in blocked_phases}


def status(state: State, blocked_phases: list[dict[str, Any]], possibly_stalled: bool) -> str:
    """The one-word status, first that applies: completed, paused or another stopped state, checkpoint failed
    (the current phase or its checkpoint failed), blocked (the current phase waits on an open blocker), possibly
    stalled, active."""
    if is_complete(state):
        return "completed"
    lifecycle_state = state.lifecycle.state
    if lifecycle_state != "active":
        return str(lifecycle_state)  # paused, suspended, error, failed, abandoned, archived: why comes first
    current = phase_at(state, state.position.phase) if state.position.exists() else None
    if current is not None and checkpoint(current) == "failed":
        return "checkpoint_failed"
    if any(item["current"] for item in blocked_phases):
        return "blocked"
    if possibly_stalled:
        return "possibly_stalled"
    return "active"


def last_seen(heartbeat: datetime | None, started: Any) -> datetime | None:
    """A session's last sign of life: its heartbeat on this machine or its start, whichever is later."""
    times = [t for t in (heartbeat, parse_datetime(started)) if t is not None]
    return max(times, default=None)


def silent(seen: datetime | None, when: datetime, stale_after: float) -> bool:
    """Whether an active session last seen at `seen` has been silent for longer than `stale_after` seconds (its
    agent probably crashed): `check` calls it stale, `resume` lists it as over, `session reap` marks it crashed."""
    return seen is not None and (when - seen).total_seconds() > stale_after
