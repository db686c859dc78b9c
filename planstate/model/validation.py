"""Validation of planning files: schema problems and cross-field rules, located by file, line, column."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from planstate.core.errors import PlanstateError, ValidationError
from planstate.model.kinds import KINDS, SCHEMA_VERSION, State, phase_numbers
from planstate.model.schema import Model, Problem
from planstate.text.document import Document
from planstate.text.paths import format_path


def state_rules(data: Any) -> list[Problem]:
    """Cross-field rules of STATE.md that a per-field schema cannot express."""
    problems: list[Problem] = []
    if not isinstance(data, dict):
        return problems
    state = State(data)
    structure = data.get("structure")
    phases = data.get("phases")
    if isinstance(structure, dict) and isinstance(phases, list):
        total = structure.get("phases_total")
        if isinstance(total, int) and total != len(phases):
            problems.append(Problem(("phases",), f"lists {len(phases)} phases but structure.phases_total is {total}"))
    position = data.get("position")
    if isinstance(position, dict) and isinstance(position.get("phase"), int):
        try:
            numbers = phase_numbers(state)
        except (TypeError, ValueError):
            numbers = range(0)
        if isinstance(phases, list) and len(numbers) and position["phase"] not in numbers:
            problems.append(
                Problem(
                    ("position", "phase"),
                    f"{position['phase']} is not a phase; phases are numbered {numbers.start} to {numbers.stop - 1}",
                )
            )
    if isinstance(phases, list):
        active = [i for i, p in enumerate(phases) if isinstance(p, dict) and p.get("status") == "active"]
        if len(active) > 1:
            problems.append(Problem(("phases", active[1], "status"), "more than one phase is active"))
        elif active and isinstance(position, dict) and isinstance(position.get("phase"), int):
            problems.extend(_active_is_current(state, active[0], position["phase"], phases[active[0]]))
    if isinstance(phases, list):
        problems.extend(_ends_after_start(phases))
    lifecycle = data.get("lifecycle")
    if isinstance(lifecycle, dict) and lifecycle.get("state") == "completed" and not lifecycle.get("completed_at"):
        problems.append(Problem(("lifecycle", "completed_at"), "is required when the state is completed"))
    return problems


def _ends_after_start(phases: list[Any]) -> list[Problem]:
    """A phase cannot complete before it started: its duration, the average and every estimate built on it
    would be negative."""
    from planstate.core.clock import parse_datetime

    out: list[Problem] = []
    for index, phase in enumerate(phases):
        if not isinstance(phase, dict):
            continue
        started, completed = parse_datetime(phase.get("started")), parse_datetime(phase.get("completed"))
        if started is not None and completed is not None and completed < started:
            shown = started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.append(Problem(("phases", index, "completed"), f"is before the phase started ({shown})"))
    return out


def _active_is_current(state: State, index: int, current: int, phase: dict[str, Any]) -> list[Problem]:
    """The active phase must be the current one: a hand edit that moves only one of them leaves no command
    able to finish either phase."""
    try:
        numbers = phase_numbers(state)
    except (TypeError, ValueError):
        return []
    if index >= len(numbers) or current not in numbers:
        return []  # a position out of range is its own problem
    number = numbers[index]
    if number == current:
        return []
    name = phase.get("name")
    named = f" ({name})" if isinstance(name, str) else ""
    return [
        Problem(
            ("position", "phase"),
            f"is {current} but phase {number}{named} is active; the active phase is always the current one "
            f"(fix: `planstate position --phase {number}`)",
        )
    ]


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
    for problem in problems:
        line, col = doc.locate(list(problem.path))
        field = format_path(problem.path) or None
        where = PlanstateError(problem.message, file=doc.path, line=line, column=col, field=field)
        out.append(ValidationError([where]))  # one problem each; its class says what kind of error it is
    return out


def check(doc: Document, kind: str, data: Any = None) -> None:
    """Raise ValidationError listing every problem of `data` (default: the document's data)."""
    problems = problems_for(kind, doc.data if data is None else data)
    if problems:
        raise ValidationError(located(doc, problems))
