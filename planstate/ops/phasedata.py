"""Plain phase data, read and changed in place: the phases by number, the current and the active phase, a phase
made active or reset for a rerun (keeping the attempt before), the position moved to a phase."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from planstate.model.kinds import Attempt, Phase, State, phase_numbers


def numbered(state: State) -> dict[int, Phase]:
    """The phases by number."""
    return dict(zip(phase_numbers(state), state.phases, strict=False))


def current(state: State) -> int | None:
    """The current phase number (position.phase), or None when there is no position."""
    value = state.position._data().get("phase") if state.position.exists() else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def active(state: State) -> tuple[int, Phase] | None:
    """The active phase with its number, if any."""
    for number, phase in numbered(state).items():
        if phase.status == "active":
            return number, phase
    return None


def activate(phase: Phase, when: datetime) -> None:
    """Make a phase active, started now, one more attempt."""
    phase.status = "active"
    phase.started = when
    phase.attempts = phase.attempts + 1


def reset_rerun(phase: Phase) -> None:
    """Keep the previous run of the phase in `previous`, then clear what it left: timing, checkpoint,
    evidence, failure (timing and checkpoints are history, never overwritten)."""
    data = phase._data()
    if phase.status == "pending" and data.get("started") is None:
        return  # a first start: nothing ran yet, and evidence written beforehand belongs to this attempt
    attempt: dict[str, Any] = {
        "started": phase.started,
        "ended": phase.completed or phase.failed_at,
        "checkpoint": phase.checkpoint,
        "evidence": dict(data.get("evidence") or {}),
        "failure": phase.failure,
    }
    phase.previous.append(Attempt(attempt))
    clear(phase, "completed")
    clear(phase, "failed_at")
    clear(phase, "failure")
    clear(phase, "skip_reason")
    if "evidence" in data:
        del phase._writable()["evidence"]
    if phase.checkpoint != "pending":
        phase.checkpoint = "pending"


def move_to(state: State, number: int) -> None:
    """Make `number` the current phase and reset the task-level position (a new phase starts fresh)."""
    position = state.position
    position.phase = number
    data = position._data()
    for key in ("task", "plan", "plan_name", "wave", "step"):
        clear(position, key)
    if data.get("status", "pending") != "pending":
        position.status = "pending"
    if state.progress.exists():
        progress = state.progress
        clear(progress, "current_phase_tasks")
        if progress._data().get("current_phase_completed") not in (None, 0):
            progress.current_phase_completed = 0


def clear(model: Any, key: str) -> None:
    """Set a key to null only when it holds a value, so an absent key stays absent (no new lines in the file)."""
    if model._data().get(key) is not None:
        model._writable()[key] = None
