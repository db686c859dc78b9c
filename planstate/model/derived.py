"""Derived values: progress counts, percent, bar, phase names and durations, recomputed from the truth."""

from __future__ import annotations

from typing import Any

from planstate.model.kinds import Phase, State, phase_at, phase_numbers
from planstate.model.schema import ListOf, Model, Nested
from planstate.model.types import Kind, Nullable

BAR_WIDTH = 20


def progress_bar(percent: int, width: int = BAR_WIDTH) -> str:
    """Return a text bar such as `█████░░░░░░░░░░░░░░░ 25%`."""
    filled = round(width * percent / 100)
    return "█" * filled + "░" * (width - filled) + f" {percent}%"


def percent_of(done: int, total: int) -> int:
    """Completed share as a whole percentage, rounded down (100 only when all are done)."""
    return 100 * done // total if total else 0


def phase_duration(phase: Phase) -> float | None:
    """Seconds from a phase's start to its completion, when both are known."""
    if phase.started is None or phase.completed is None:
        return None
    return (phase.completed - phase.started).total_seconds()


def recompute(state: State) -> None:
    """Refresh every derived copy in `state` from its sources; leaves unchanged values alone."""
    _progress(state)
    _durations(state)
    _phase_name(state)


def _progress(state: State) -> None:
    """`progress`: phases completed of the total, the percent and its bar (when there are phases or a block)."""
    if not (state.phases or state.progress.exists() or state.structure.exists()):
        return
    total = len(phase_numbers(state))
    done = sum(1 for p in state.phases if p.status == "completed")
    progress = state.progress
    percent = percent_of(done, total)
    _put(progress, "phases_total", total)
    _put(progress, "phases_completed", done)
    _put(progress, "percent", percent)
    _put(progress, "bar", progress_bar(percent))


def _durations(state: State) -> None:
    """Each phase's `duration_seconds` (whole seconds as an int); null where it can no longer be computed."""
    for phase in state.phases:
        seconds = phase_duration(phase)
        if seconds is not None:
            _put(phase, "duration_seconds", int(seconds) if seconds == int(seconds) else seconds)
        elif "duration_seconds" in phase._data():
            _put(phase, "duration_seconds", None)


def _phase_name(state: State) -> None:
    """`position.phase_name`: the name of the phase the position points at, when it points at one."""
    position = state.position
    if not position.exists() or not isinstance(position._data().get("phase"), int):
        return
    current = phase_at(state, position.phase)
    if current is not None:
        _put(position, "phase_name", current.name)


def _put(model: object, key: str, value: object) -> None:
    """Set a raw key only when its value differs, so an unchanged derived value is never rewritten."""
    data = model._data()  # type: ignore[attr-defined]
    if key not in data or data[key] != value or type(data[key]) is not type(value):
        model._writable()[key] = value  # type: ignore[attr-defined]


def without_derived(data: dict[str, Any], model: type[Model]) -> dict[str, Any]:
    """A copy of `data` without the derived fields of `model` and of its nested models."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        field = model.fields.get(key) if isinstance(key, str) else None
        if field is None:
            out[key] = value
        elif not field.derived:
            out[key] = _innerwithout_derived(value, _nested_model(field.kind))
    return out


def _innerwithout_derived(value: Any, model: type[Model] | None) -> Any:
    """A field's value without the derived fields of its model: a nested mapping, or each mapping of a list."""
    if model is None:
        return value
    if isinstance(value, dict):
        return without_derived(value, model)
    if isinstance(value, list):
        return [without_derived(v, model) if isinstance(v, dict) else v for v in value]
    return value


def _nested_model(kind: Kind[Any]) -> type[Model] | None:
    """The model of a nested mapping, or of the items of a list of them (through Nullable)."""
    while isinstance(kind, Nullable | ListOf):
        kind = kind.inner if isinstance(kind, Nullable) else kind.item
    return kind.model if isinstance(kind, Nested) else None
