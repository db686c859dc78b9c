"""The lifecycle of an initiative: the transition table (data) and the rule that applies it.

docs/lifecycle.md shows this table and its diagram; the test suite checks they agree.
"""

from __future__ import annotations

from typing import NamedTuple

from planstate.errors import UsageError
from planstate.models import LIFECYCLE_STATES


class Transition(NamedTuple):
    """One allowed move: `command` takes an initiative from `source` to `target`."""

    source: str
    command: str
    target: str


# (from, command, to). Seeds 002 and 004: a completed initiative can only be reopened or
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
# `phase complete` of the last phase completes the initiative; `initiative switch` pauses and
# activates; `session reap --abandon-after` abandons.
INTERNAL_TRIGGERS = ("init", "create", "phase complete", "initiative switch", "session reap", "repair")


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
