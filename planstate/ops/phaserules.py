"""The rules the state-changing operations share: a valid state to act on, refusals located in STATE.md, no
change to a read-only initiative, work moving only while the initiative is active, warnings of open blockers, the
next action planstate writes for a phase, and `KEY=VALUE` items read as values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planstate.core.errors import UsageError, ValidationError
from planstate.model.kinds import (
    READ_ONLY_STATES,
    State,
    legacy_first_phase,
    phases_affected,
    read_only_message,
)
from planstate.model.validation import located, problems_for
from planstate.ops import lifecycle
from planstate.text.paths import format_path, shown_path

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction


def checked_state(tx: Transaction, initiative: Initiative | None = None, *, repairs: tuple[str, ...] = ()) -> State:
    """Load an initiative's STATE.md into the transaction and refuse to act on it when it is not valid.

    `repairs` names fields the caller is about to set: their problems are left to the commit's validation.
    """
    target = initiative or tx.ctx.target
    staged = tx.load("state", target.state_path, target)
    _pin_legacy_numbering(staged.data)
    problems = [p for p in problems_for("state", staged.data) if format_path(p.path) not in repairs]
    if problems:
        raise ValidationError(located(staged.doc, problems))
    return State(staged.data)


def _pin_legacy_numbering(data: dict[str, Any]) -> None:
    """Give a file without a structure snapshot that is numbered from 0 its snapshot before a command moves
    its position: the base is inferred from the position (`legacy_first_phase`), which the command is about
    to change. A file numbered from 1, the default reading, is left without one."""
    if "structure" in data or not isinstance(data.get("phases"), list):
        return
    if legacy_first_phase(State(data)) != 0:
        return
    data["structure"] = {"phases_total": len(data["phases"]), "first_phase": 0}


def refusal(
    tx: Transaction,
    path: list[Any],
    message: str,
    initiative: Initiative | None = None,
    *,
    argument: str | None = None,
) -> UsageError:
    """A UsageError located at `path` of the initiative's STATE.md (file, line, column and field), about
    `argument` when the message names one (see UsageError)."""
    target = initiative or tx.ctx.target
    staged = tx.load("state", target.state_path, target)
    line, column = staged.doc.locate(list(path))
    return UsageError(
        message, argument=argument, file=staged.doc.path, line=line, column=column, field=shown_path(path, staged.data)
    )


def refuse_read_only(tx: Transaction, state: State, initiative: Initiative | None = None) -> None:
    """Refuse to change an archived or completed initiative, saying how to make it writable."""
    source = state.lifecycle.state
    if source in READ_ONLY_STATES:
        raise refusal(
            tx,
            ["lifecycle", "state"],
            read_only_message(state.initiative, source),
            initiative,
        )


def blocker_warnings(ctx: Context, initiative: Initiative, state: State, numbers: list[int]) -> list[str]:
    """One warning per open blocker (new or active) that affects one of the phases `numbers` (see affected_phases)."""
    from planstate.store import folders

    if not numbers:
        return []
    # The blockers status judges phases by (a query, and the facts the store keeps of each), so the cost follows
    # the blockers changed since, not the thousands resolved. Unreadable files are left out: `planstate check`
    # reports them.
    phases_of = phases_affected(state)
    affected = [
        (blocker, set(phases_of(data.get("affects")))) for blocker, data, _ in folders.blocking_data(ctx, initiative)
    ]
    return [
        f"blocker {blocker} still affects phase {number}: resolve or bypass it"
        for number in numbers  # phase by phase, then blockers in file-name (id) order
        for blocker, named in affected
        if number in named
    ]


def parse_pairs(items: list[str] | tuple[str, ...], what: str = "evidence") -> dict[str, Any]:
    """Read `KEY=VALUE` items into a mapping; values are YAML scalars (`coverage=65` is 65, `tests=42/45` text)."""
    from planstate.model.coerce import read_yaml_value

    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"{what} {item!r} must be KEY=VALUE, e.g. tests=42/45")
        value = read_yaml_value(text)
        if isinstance(value, dict | list):
            raise UsageError(f"{what} {key}: {text!r} is not a single value (quote it to keep it as text)")
        out[key] = value
    return out


def require_active(tx: Transaction, state: State, doing: str, command: str) -> bool:
    """The one rule of work: the phase and task commands move work only while the initiative is active.

    A suspended initiative (a technical pause) resumes by itself when work goes on, with a history line; any
    other state (paused, error and the rest: decisions or failures someone resumes explicitly) refuses, naming
    the commands that make it active. Returns whether it resumed a suspended initiative. Recording intent and
    notes (`next`, `context`, decisions, blockers) is not work moving and stays allowed: a paused initiative's
    next action is what the person who resumes it reads first."""
    source = state.lifecycle.state
    resumed = False
    if source == "suspended":
        reason = f"work went on: {command}"
        lifecycle.apply(tx, tx.ctx.target, "resume", reason=reason, trigger="auto-resume")
        resumed = True
        source = state.lifecycle.state
    if source != "active":
        moves = [t.command for t in lifecycle.allowed(source) if t.target == "active"]
        commands = " or ".join(f"`planstate {'resume --activate' if m == 'resume' else m}`" for m in moves)
        raise refusal(
            tx,
            ["lifecycle", "state"],
            f"cannot {doing}: the initiative is {source}; work moves only while it is active ({commands} makes it "
            "active)",
        )
    return resumed


def generated_next_action(number: int, name: str) -> str:
    """The next action planstate writes for a phase when nobody wrote one (`init` writes it for the first)."""
    return f"Start phase {number}: {name}"
