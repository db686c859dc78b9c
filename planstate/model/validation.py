"""Validation of planning files: schema problems and cross-field rules, located by file, line, column."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from typing import Any

from planstate.core.errors import PlanstateError, ValidationError
from planstate.model.kinds import KINDS, SCHEMA_VERSION, State, phase_numbers
from planstate.model.schema import ListOf, Model, Nested
from planstate.model.types import Nullable, Problem
from planstate.text.document import Document
from planstate.text.paths import shown_path


def state_rules(data: Any) -> list[Problem]:
    """Cross-field rules of STATE.md that a per-field schema cannot express."""
    if not isinstance(data, dict):
        return []
    state = State(data)
    return [problem for rule in STATE_RULES for problem in rule(data, state)]


def _phases_total(data: dict[str, Any], state: State) -> list[Problem]:
    """`structure.phases_total` phases are listed: a phase is removed with `planstate phase remove`, which keeps the
    snapshot and every reference in step. More phases than the snapshot counts (one added by hand) are read, and
    `planstate check` warns (`structure-mismatch`)."""
    structure, phases = data.get("structure"), data.get("phases")
    if not (isinstance(structure, dict) and isinstance(phases, list)):
        return []
    total = structure.get("phases_total")
    if isinstance(total, int) and total > len(phases):
        message = (
            f"lists {len(phases)} phases but structure.phases_total is {total}: put the missing phase back "
            f"(`planstate phase remove N` removes a pending phase), or set structure.phases_total to {len(phases)} "
            "by hand"
        )
        return [Problem(("phases",), message)]
    return []


def _position_is_a_phase(data: dict[str, Any], state: State) -> list[Problem]:
    """`position.phase` is the number of a listed phase."""
    current = _current(data)
    if current is None:
        return []
    numbers = _numbers(state)
    if not isinstance(data.get("phases"), list) or not len(numbers) or current in numbers:
        return []
    message = f"{current} is not a phase; phases are numbered {numbers.start} to {numbers.stop - 1}"
    return [Problem(("position", "phase"), message)]


def _one_active_phase(data: dict[str, Any], state: State) -> list[Problem]:
    """At most one phase is active."""
    active = _active(data)
    return [Problem(("phases", active[1], "status"), "more than one phase is active")] if len(active) > 1 else []


def _active_is_current(data: dict[str, Any], state: State) -> list[Problem]:
    """The active phase must be the current one: a hand edit that moves only one of them leaves no command
    able to finish either phase."""
    active, current = _active(data), _current(data)
    if len(active) != 1 or current is None:
        return []
    numbers = _numbers(state)
    if active[0] >= len(numbers) or current not in numbers:
        return []  # a position out of range is its own problem
    number = numbers[active[0]]
    if number == current:
        return []
    name = data["phases"][active[0]].get("name")
    named = f" ({name})" if isinstance(name, str) else ""
    return [
        Problem(
            ("position", "phase"),
            f"is {current} but phase {number}{named} is active; the active phase is always the current one "
            f"(fix: `planstate position --phase {number}`)",
        )
    ]


def _ends_after_start(data: dict[str, Any], state: State) -> list[Problem]:
    """A phase cannot complete before it started: its duration, the average and every estimate built on it
    would be negative."""
    from planstate.core.clock import parse_datetime

    phases = data.get("phases")
    out: list[Problem] = []
    for index, phase in enumerate(phases if isinstance(phases, list) else []):
        if not isinstance(phase, dict):
            continue
        started, completed = parse_datetime(phase.get("started")), parse_datetime(phase.get("completed"))
        if started is not None and completed is not None and completed < started:
            shown = started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.append(Problem(("phases", index, "completed"), f"is before the phase started ({shown})"))
    return out


# What a phase's status rules out: fields that must be empty and checkpoint results it cannot have. The phase
# commands never leave these together (ops/phases.py); a hand edit, or a merge that mixed two outcomes, can.
CONTRADICTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pending": (("completed", "failure", "failed_at"), ("passed", "failed")),
    "active": (("completed",), ("passed",)),
    "completed": (("failure", "failed_at"), ("failed",)),
    "failed": (("completed",), ("passed",)),
    "skipped": (("completed",), ("passed",)),
}


def _phase_coherent(data: dict[str, Any], state: State) -> list[Problem]:
    """A phase's fields agree with its status: a completed phase has no failure, a failed one no completion."""
    phases = data.get("phases")
    out: list[Problem] = []
    for index, phase in enumerate(phases if isinstance(phases, list) else []):
        if not isinstance(phase, dict) or phase.get("status") not in CONTRADICTIONS:
            continue
        status = phase["status"]
        empty, results = CONTRADICTIONS[status]
        for field in empty:
            if phase.get(field) is not None:
                out.append(Problem(("phases", index, field), f"is set, but the phase is {status}"))
        if phase.get("checkpoint") in results:
            out.append(Problem(("phases", index, "checkpoint"), f"is {phase['checkpoint']}, but the phase is {status}"))
    return out


def _completed_when(data: dict[str, Any], state: State) -> list[Problem]:
    """A completed initiative says when it completed."""
    lifecycle = data.get("lifecycle")
    if isinstance(lifecycle, dict) and lifecycle.get("state") == "completed" and not lifecycle.get("completed_at"):
        return [Problem(("lifecycle", "completed_at"), "is required when the state is completed")]
    return []


# In the order their problems are reported.
STATE_RULES: tuple[Callable[[dict[str, Any], State], list[Problem]], ...] = (
    _phases_total,
    _position_is_a_phase,
    _one_active_phase,
    _active_is_current,
    _ends_after_start,
    _phase_coherent,
    _completed_when,
)


def _current(data: dict[str, Any]) -> int | None:
    """The current phase's number, when `position.phase` gives one."""
    position = data.get("position")
    phase = position.get("phase") if isinstance(position, dict) else None
    return phase if isinstance(phase, int) else None


def _active(data: dict[str, Any]) -> list[int]:
    """The indexes of the active phases."""
    phases = data.get("phases")
    if not isinstance(phases, list):
        return []
    return [i for i, p in enumerate(phases) if isinstance(p, dict) and p.get("status") == "active"]


def _numbers(state: State) -> range:
    """The phases' numbers (none when the phases cannot be numbered)."""
    try:
        return phase_numbers(state)
    except (TypeError, ValueError):
        return range(0)


def problems_for(kind: str, data: Any) -> list[Problem]:
    """All problems of `data` as a file of `kind` (state, decision, blocker, session)."""
    model: type[Model] = KINDS[kind]
    if data is None:
        return [Problem((), "front matter is empty")]
    problems = model.check_data(data)
    if isinstance(data, dict):
        version = data.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            problems.append(
                Problem(
                    ("schema_version",),
                    f"{version} is newer than this planstate understands ({SCHEMA_VERSION}); upgrade planstate",
                )
            )
    if kind == "state":
        problems.extend(state_rules(data))
    return problems


def located(doc: Document, problems: list[Problem]) -> list[PlanstateError]:
    """Turn problems into errors carrying the file, line and column of each field."""
    out: list[PlanstateError] = []
    data = doc.data if any(p.path for p in problems) else None
    for problem in problems:
        line, col = doc.locate(list(problem.path))
        field = shown_path(problem.path, data) or None
        where = PlanstateError(problem.message, file=doc.path, line=line, column=col, field=field)
        out.append(ValidationError([where]))  # one problem each; its class says what kind of error it is
    return out


def check(doc: Document, kind: str, data: Any = None) -> None:
    """Raise ValidationError listing every problem of `data` (default: the document's data)."""
    problems = problems_for(kind, doc.data if data is None else data)
    if problems:
        raise ValidationError(located(doc, problems))


def unknown_keys(
    model: type[Model], data: Any, path: tuple[Any, ...] = ()
) -> list[tuple[tuple[Any, ...], type[Model]]]:
    """The paths of keys in `data` that `model` (and its nested models) do not declare, each with the model of the
    mapping that holds it."""
    out: list[tuple[tuple[Any, ...], type[Model]]] = []
    if not isinstance(data, dict):
        return out
    for key, value in data.items():
        declared = model.fields.get(str(key))
        if declared is None:
            out.append(((*path, key), model))
            continue
        kind: Any = declared.kind
        while isinstance(kind, Nullable):
            kind = kind.inner
        if isinstance(kind, Nested):
            out.extend(unknown_keys(kind.model, value, (*path, key)))
        elif isinstance(kind, ListOf) and isinstance(kind.item, Nested) and isinstance(value, list):
            for index, item in enumerate(value):
                out.extend(unknown_keys(kind.item.model, item, (*path, key, index)))
    return out
