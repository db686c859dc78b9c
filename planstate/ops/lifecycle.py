"""The lifecycle of an initiative: the transition table (data) and the rule that applies it.

docs/lifecycle.md shows this table and its diagram; the test suite checks they agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from planstate.core.errors import UsageError
from planstate.model.kinds import FINISHED, LIFECYCLE_STATES, ErrorInfo

if TYPE_CHECKING:
    from datetime import datetime

    from planstate.model.kinds import Lifecycle, State
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction


class Transition(NamedTuple):
    """One allowed move: `command` takes an initiative from `source` to `target`."""

    source: str
    command: str
    target: str


# (from, command, to). A completed initiative can only be reopened or
# archived; archived is a soft delete that `reopen` undoes; failed and error are retried;
# paused, suspended and abandoned are resumed.
TABLE: tuple[Transition, ...] = tuple(
    Transition(*row)
    for row in (
        ("active", "pause", "paused"),
        ("active", "suspend", "suspended"),
        ("active", "error", "error"),
        ("active", "fail", "failed"),
        ("active", "complete", "completed"),
        ("active", "abandon", "abandoned"),
        ("active", "archive", "archived"),
        ("paused", "resume", "active"),
        ("paused", "fail", "failed"),
        ("paused", "abandon", "abandoned"),
        ("paused", "archive", "archived"),
        ("suspended", "resume", "active"),
        ("suspended", "pause", "paused"),
        ("suspended", "error", "error"),
        ("suspended", "fail", "failed"),
        ("suspended", "abandon", "abandoned"),
        ("suspended", "archive", "archived"),
        ("error", "retry", "active"),
        ("error", "fail", "failed"),
        ("error", "abandon", "abandoned"),
        ("error", "archive", "archived"),
        ("failed", "retry", "active"),
        ("failed", "archive", "archived"),
        ("completed", "reopen", "active"),
        ("completed", "archive", "archived"),
        ("abandoned", "resume", "active"),
        ("abandoned", "archive", "archived"),
        ("archived", "reopen", "active"),
    )
)

COMMANDS: tuple[str, ...] = tuple(dict.fromkeys(t.command for t in TABLE))

# Commands only planstate itself issues, never a person: they are history triggers, not CLI verbs.
# `phase complete` (or `phase skip`) of the last phase completes the initiative; `initiative switch`
# pauses and activates; `session reap --abandon-after` abandons; a phase command on a suspended initiative
# resumes it first (`auto-resume`); `phase remove` of the last unfinished phase completes it too.
INTERNAL_TRIGGERS = (
    "init",
    "create",
    "phase complete",
    "phase skip",
    "phase remove",
    "initiative switch",
    "session reap",
    "repair",
    "auto-resume",
)


def allowed(source: str) -> list[Transition]:
    """The transitions that leave `source`, in table order."""
    return [t for t in TABLE if t.source == source]


def target_of(source: str, command: str) -> str:
    """The state `command` leads to from `source`; UsageError naming the allowed commands if none."""
    if source not in LIFECYCLE_STATES:
        raise UsageError(f"lifecycle state {source!r} is not one of: {', '.join(LIFECYCLE_STATES)}")
    for t in TABLE:
        if t.source == source and t.command == command:
            return t.target
    moves = ", ".join(f"{t.command} (→ {t.target})" for t in allowed(source)) or "none"
    raise UsageError(f"cannot {command} an initiative that is {source}; allowed from {source}: {moves}")


def apply(
    tx: Transaction,
    initiative: Initiative,
    command: str,
    *,
    reason: str | None = None,
    actor: str | None = None,
    trigger: str | None = None,
    context: str | None = None,
) -> tuple[str, str]:
    """Move an initiative's lifecycle by `command` inside a transaction; return (from, to).

    Records when, why and by whom in `lifecycle` and appends the transition to the history.
    Raises UsageError (exit 2) naming the current state and the allowed commands when the
    table has no such move, and when `complete` is asked while phases are unfinished.
    """
    from planstate.core.clock import now
    from planstate.store import history

    state = tx.state(initiative)
    lifecycle = state.lifecycle
    source = lifecycle.state
    target = target_of(source, command)
    if command == "complete":
        _refuse_unfinished(tx, initiative, state)
    when = now()
    who = actor or tx.ctx.actor
    lifecycle.state = target
    lifecycle.since = when
    lifecycle.reason = reason
    lifecycle.by = who
    _keep_context(state, target, context)
    _completion(state, target, when)
    _error(lifecycle, source, command, target, reason, when)
    if command == "resume":
        lifecycle.resumed_at = when
        lifecycle.resume_count = lifecycle.resume_count + 1
    tx.log(initiative, history.entry(when, source, target, trigger or command, reason, who))
    return source, target


def _refuse_unfinished(tx: Transaction, initiative: Initiative, state: State) -> None:
    """An initiative completes only when every phase is completed or skipped: UsageError naming the others."""
    unfinished = [p.name for p in state.phases if p.status not in FINISHED]
    if not unfinished:
        return
    many = len(unfinished) > 1
    line, column = tx.load("state", initiative.state_path, initiative).doc.locate(["phases"])
    raise UsageError(
        f"cannot complete: {len(unfinished)} phase{'s are' if many else ' is'} not finished "
        f"({', '.join(unfinished)}); complete or skip {'them' if many else 'it'} first",
        file=tx.ctx.display(initiative.state_path),
        line=line,
        column=column,
        field="phases",
    )


def _keep_context(state: State, target: str, context: str | None) -> None:
    """A paused or suspended initiative keeps what was being worked on (`context`, else the current task), so
    resuming can say it; in any other state it has none."""
    lifecycle = state.lifecycle
    if target in ("paused", "suspended"):
        position = state.position
        lifecycle.context = context or (position.task if position.exists() else None)
    elif "context" in lifecycle._data():
        lifecycle.context = None


def _completion(state: State, target: str, when: datetime) -> None:
    """Completing records when, and how long the whole initiative took since it was created; any other move
    clears both, so a reopened initiative never shows a stale completion."""
    lifecycle = state.lifecycle
    if target != "completed":
        for key in ("completed_at", "total_duration_seconds"):
            if lifecycle._data().get(key) is not None:
                lifecycle._writable()[key] = None
        return
    lifecycle.completed_at = when
    if state.created is not None:
        seconds = max(0.0, (when - state.created).total_seconds())
        lifecycle.total_duration_seconds = int(seconds) if seconds == int(seconds) else seconds


def _error(lifecycle: Lifecycle, source: str, command: str, target: str, reason: str | None, when: datetime) -> None:
    """Entering `error` records the error (its retries carried over); retrying out of it counts one more retry."""
    if target == "error":
        previous = lifecycle.error
        retries = previous.retries if previous is not None else 0
        lifecycle.error = ErrorInfo({"message": reason or "no reason given", "at": when, "retries": retries})
    if command == "retry" and source == "error" and lifecycle.error is not None:
        lifecycle.error.retries = lifecycle.error.retries + 1
