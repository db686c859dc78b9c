"""Lifecycle transitions in a semantic diff: the history lines one side has and the other not, and how one reads."""

from __future__ import annotations

from typing import Any

from planstate.vcs.difftext import Part, Plain, always, code, raw, render
from planstate.vcs.fieldchanges import entry_key


def _none_shown(f: Plain, value: Any) -> str:
    return str(value or "(none)")


TRANSITION = (
    Part(": {}", "from", _none_shown, always),
    Part(" → {}", "to", raw, always),
    Part(" ({})", "trigger", code),
    Part(" by {}", "by"),
    Part(" at {}", "at"),
    Part(": {}", "reason"),
)


def transition(source: Any, target: Any, at: Any, trigger: Any, reason: Any, by: Any) -> dict[str, Any]:
    """A lifecycle transition as an entry of the `lifecycle` section."""
    return {"from": source, "to": target, "at": at, "trigger": trigger, "reason": reason, "by": by}


def transitions(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history entries the newer side has and the older does not, oldest first, as transitions."""
    seen: dict[str, int] = {}
    for entry in old:
        seen[entry_key(entry)] = seen.get(entry_key(entry), 0) + 1
    out = []
    for entry in new:
        k = entry_key(entry)
        if seen.get(k):
            seen[k] -= 1
            continue
        get = entry.get
        out.append(transition(get("from"), get("to"), get("at"), get("trigger"), get("reason"), get("by")))
    return out


def state_transition(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The transition a change of `lifecycle.state` shows, from the lifecycle blocks of two states (when the
    history says nothing): no entry when the state stayed."""
    if old.get("state") == new.get("state"):
        return []
    return [transition(old.get("state"), new.get("state"), new.get("since"), None, new.get("reason"), new.get("by"))]


# A history line of a command that left the lifecycle state as it was (`phase add`, `phase rename`): what was done,
# not a transition from a state to itself.
STEP = (
    Part(": {}", "trigger", code),
    Part(" by {}", "by"),
    Part(" at {}", "at"),
    Part(": {}", "reason"),
)


def transition_line(entry: dict[str, Any], f: Plain) -> str:
    """One lifecycle transition as a line, written by `f`; a history entry that kept the state reads as a step."""
    if entry.get("trigger") and entry.get("from") == entry.get("to"):
        return f.strong("history") + render(STEP, entry, f)
    return f.strong("lifecycle") + render(TRANSITION, entry, f)
