"""Position, next action, resume context and tasks: the small, frequent STATE.md updates of ongoing work.

Each operation is one transaction on the target initiative's STATE.md and returns the fields it
changed. Phase statuses are not touched here (that is phases.py); `position --phase` only moves
the pointer, and refuses while another phase is active.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from planstate.core.errors import UsageError
from planstate.core.files import refuse_while_open
from planstate.model.kinds import TASK_STATUSES, UNSET, State, Unset, phase_numbers
from planstate.ops.fields import Change, Edited
from planstate.ops.phaserules import checked_state, refusal, refuse_read_only, require_active
from planstate.text.paths import get_in, parse_path
from planstate.text.plaindata import same

if TYPE_CHECKING:
    from planstate.ops.records import Entry, Listing
    from planstate.store.context import Context
    from planstate.store.transaction import Transaction


POSITION_FIELDS = ("phase", "plan", "plan_name", "task", "wave", "status", "step")
CONTEXT_LISTS = {
    "files": "files_modified",
    "implementations": "key_implementations",
    "questions": "open_questions",
}


class _Tracker:
    """Remembers the values at some paths before an edit, to report which of them changed."""

    def __init__(self, state: State, paths: list[str]) -> None:
        self._state = state
        self._before = {p: copy.deepcopy(self._value(p)) for p in paths}

    def _value(self, path: str) -> Any:
        return get_in(self._state._data(), parse_path(path))[1]

    def result(self, ctx: Context) -> Edited:
        changes = []
        for path, old in self._before.items():
            new = self._value(path)
            if not same(old, new):
                changes.append(Change(path, old, copy.deepcopy(new)))
        return Edited(ctx.display(ctx.state_path), changes)


def _positioned(tx: Transaction, state: State, what: str, hint: str, argument: str | None = None) -> None:
    """Refuse position edits on a STATE.md that has no position (a position needs a phase to point at); `hint` says
    how to give it one, naming `argument` when the call could have."""
    if state.position.exists():
        return
    if not len(phase_numbers(state)):
        raise refusal(tx, ["phases"], f"cannot set {what}: this initiative has no phases, so it has no position")
    message = f"cannot set {what}: STATE.md has no position yet; {hint}"
    raise refusal(tx, ["position"], message, argument=argument)


def _text(tx: Transaction, path: list[Any], value: Any, *, empty_is_null: bool = True) -> str | None:
    """Check a text value for a field: a string, or None; an empty string clears the field."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise refusal(tx, path, f"expected text, got {value!r}")
    if not value.strip():
        if empty_is_null:
            return None
        raise refusal(tx, path, "must not be empty")
    return value


def set_position(
    ctx: Context,
    *,
    phase: int | Unset = UNSET,
    plan: int | str | Unset | None = UNSET,
    plan_name: str | Unset | None = UNSET,
    task: str | Unset | None = UNSET,
    wave: int | Unset | None = UNSET,
    status: str | Unset = UNSET,
    step: str | Unset | None = UNSET,
) -> Edited:
    """Set any of the position fields in one transaction; None clears a field, an omitted one stays."""
    given = {
        "phase": phase,
        "plan": plan,
        "plan_name": plan_name,
        "task": task,
        "wave": wave,
        "status": status,
        "step": step,
    }
    given = {k: v for k, v in given.items() if v is not UNSET}
    with ctx.transaction() as tx:
        # `phase` is how a hand-edited pointer is put right, so a problem at position.phase does not stop it
        state = checked_state(tx, repairs=("position.phase",) if "phase" in given else ())
        refuse_read_only(tx, state)
        tracker = _Tracker(state, [f"position.{k}" for k in POSITION_FIELDS])
        if "phase" not in given:
            _positioned(tx, state, "the position", "give the phase too: phase=N", argument="phase")
        values = {name: _position_value(tx, state, name, value) for name, value in given.items()}
        position = state.position
        for name, value in values.items():  # phase first (dict order above): a new position starts with it
            if position._data().get(name, UNSET) is UNSET and value is None:
                continue  # clearing an absent field adds nothing
            position._writable()[name] = value
    return tracker.result(ctx)


def _position_value(tx: Transaction, state: State, name: str, value: Any) -> Any:
    """Check one position value; return it as it is written."""
    check = _POSITION_CHECKS.get(name, _text_value)
    return check(tx, state, ["position", name], value)


def _phase_value(tx: Transaction, state: State, path: list[Any], value: Any) -> Any:
    """A phase number among the phases; refused while another phase is active (finish that one first)."""
    numbers = phase_numbers(state)
    if not isinstance(value, int) or isinstance(value, bool):
        raise refusal(tx, path, f"expected a phase number, got {value!r}")
    if not len(numbers):
        raise refusal(tx, ["phases"], f"phase {value} is not a phase: this initiative has no phases")
    if value not in numbers:
        raise refusal(tx, path, f"{value} is not a phase; phases are numbered {numbers.start} to {numbers.stop - 1}")
    for number, other in zip(numbers, state.phases, strict=False):
        if other.status == "active" and number != value:
            raise refusal(
                tx,
                ["phases", number - numbers.start, "status"],
                f"cannot move to phase {value}: phase {number} ({other.name}) is active; "
                "complete, fail or skip it first",
            )
    return value


def _status_value(tx: Transaction, state: State, path: list[Any], value: Any) -> Any:
    """A task status."""
    if value not in TASK_STATUSES:
        raise refusal(tx, path, f"{value!r} is not one of: {', '.join(TASK_STATUSES)}")
    return value


def _wave_value(tx: Transaction, state: State, path: list[Any], value: Any) -> Any:
    """A whole number >= 0, or None."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise refusal(tx, path, f"expected a whole number >= 0, got {value!r}")
    return value


def _plan_value(tx: Transaction, state: State, path: list[Any], value: Any) -> Any:
    """A plan number >= 0, or a plan's name (text)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return _text(tx, path, value)
    if value < 0:
        raise refusal(tx, path, f"expected a plan number >= 0 or a name, got {value!r}")
    return value


def _text_value(tx: Transaction, state: State, path: list[Any], value: Any) -> Any:
    """Text, or None (an empty text clears the field)."""
    return _text(tx, path, value)


# How each position field is checked; the others are text.
_POSITION_CHECKS: dict[str, Callable[[Transaction, State, list[Any], Any], Any]] = {
    "phase": _phase_value,
    "status": _status_value,
    "wave": _wave_value,
    "plan": _plan_value,
}


def set_next(ctx: Context, text: str) -> Edited:
    """Set the next action (multi-line text is kept as written)."""
    with ctx.transaction() as tx:
        state = checked_state(tx)
        refuse_read_only(tx, state)
        path = ctx.target.state_path
        refuse_while_open(path, ctx.display(path), done="written", undone="this change", then="run it again")
        tracker = _Tracker(state, ["next_action"])
        state.next_action = _text(tx, ["next_action"], text, empty_is_null=False)
    return tracker.result(ctx)


def update_context(
    ctx: Context,
    *,
    files: list[str] | tuple[str, ...] = (),
    implementations: list[str] | tuple[str, ...] = (),
    questions: list[str] | tuple[str, ...] = (),
    answered: list[str] | tuple[str, ...] = (),
    clear_files: bool = False,
    clear_implementations: bool = False,
    clear_questions: bool = False,
) -> Edited:
    """Change the resume context: clear lists, remove answered questions, then append new items (no duplicates)."""
    added = {"files": files, "implementations": implementations, "questions": questions}
    clears = {"files": clear_files, "implementations": clear_implementations, "questions": clear_questions}
    with ctx.transaction() as tx:
        state = checked_state(tx)
        refuse_read_only(tx, state)
        tracker = _Tracker(state, [f"resume_context.{key}" for key in CONTEXT_LISTS.values()])
        context = state.resume_context
        for option, key in CONTEXT_LISTS.items():
            path: list[Any] = ["resume_context", key]
            items = [_text(tx, path, item, empty_is_null=False) for item in added[option]]
            if clears[option] and len(getattr(context, key)):
                del getattr(context, key)[:]
            if option == "questions":
                _answer(tx, context.open_questions, answered)
            current = getattr(context, key)
            for item in items:
                if item not in list(current):
                    current.append(item)
    return tracker.result(ctx)


def _answer(tx: Transaction, questions: Any, answered: list[str] | tuple[str, ...]) -> None:
    """Remove answered questions (matched exactly, ignoring surrounding spaces) from the open questions."""
    for answer in answered:
        open_now = [str(q) for q in questions]
        matches = [i for i, q in enumerate(open_now) if q.strip() == answer.strip()]
        if not matches:
            listed = "; ".join(open_now) if open_now else "none"
            raise refusal(
                tx,
                ["resume_context", "open_questions"],
                f"{answer!r} is not an open question (open questions: {listed})",
            )
        del questions[matches[0]]


class TaskAPI:
    """`ws.task`: start and finish the single worker's task of the current phase (position.task, position.status,
    progress), and add and list task records (tasks/<id>-<slug>.md, ops/tasks.py)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def add(self, title: str, *, phase: int | None = None, after: Sequence[str] = (), wave: int | None = None) -> Entry:
        """Add a pending task record; `after`: the tasks that must be done first (ops/tasks.TaskRecords.add)."""
        from planstate.ops.tasks import TaskRecords

        return TaskRecords(self.ctx).add(title, phase=phase, after=after, wave=wave)

    def list(self, *, all: bool = False, status: str | None = None, phase: int | None = None) -> Listing:
        """The task records, oldest first, done and dropped ones only with `all` (ops/tasks.TaskRecords.list)."""
        from planstate.ops.tasks import TaskRecords

        return TaskRecords(self.ctx).list(all=all, status=status, phase=phase)

    def start(self, text: str, *, plan: int | str | None = None, wave: int | None = None) -> Edited:
        """Start a task: position.task = text, status in_progress (and the plan or wave when given)."""
        paths = [f"position.{k}" for k in ("task", "status", "plan", "wave")]
        with self.ctx.transaction() as tx:
            state = checked_state(tx)
            refuse_read_only(tx, state)
            require_active(tx, state, "start a task", "planstate task start")
            tracker = _Tracker(state, paths)
            _positioned(tx, state, "a task", "set the phase first (`planstate position --phase N`)")
            position = state.position
            position.task = _text(tx, ["position", "task"], text, empty_is_null=False)
            position.status = "in_progress"
            if plan is not None:
                position._writable()["plan"] = _position_value(tx, state, "plan", plan)
            if wave is not None:
                position._writable()["wave"] = _position_value(tx, state, "wave", wave)
        return tracker.result(self.ctx)

    def done(self, *, next: str | None = None) -> Edited:
        """Finish the task in progress: count it in progress.current_phase_completed; `next` starts the next one."""
        paths = ["position.task", "position.status", "progress.current_phase_completed"]
        with self.ctx.transaction() as tx:
            state = checked_state(tx)
            refuse_read_only(tx, state)
            require_active(tx, state, "finish a task", "planstate task done")
            tracker = _Tracker(state, paths)
            position = state.position
            if not position.exists() or position.task is None:
                raise refusal(
                    tx, ["position", "task"], "no task is in progress; start one with `planstate task start TEXT`"
                )
            if position.status == "done":
                # refusing a second `done` keeps a retried command from counting the task twice
                raise refusal(
                    tx,
                    ["position", "status"],
                    f"task {position.task!r} is already done; start the next one with `planstate task start TEXT`",
                )
            following = _text(tx, ["position", "task"], next, empty_is_null=False) if next is not None else None
            progress = state.progress
            progress.current_phase_completed = (progress.current_phase_completed or 0) + 1
            if following is not None:
                position.task = following
                position.status = "in_progress"
            else:
                position.status = "done"
        return tracker.result(self.ctx)


def parse_plan(text: str) -> int | str | None:
    """A plan given on the command line: a number when it is digits, else its name; empty clears it."""
    text = text.strip()
    if not text:
        return None
    return int(text) if text.isdigit() else text


def parse_whole(text: str, what: str) -> int | None:
    """A whole number given on the command line; empty clears it."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what}: expected a whole number, got {text!r}") from None
