"""Structure operations: add, rename, remove and move phases, keeping the snapshot, position and references in step.

A phase's number is its place in the list (counted from `structure.first_phase`), so a change that
shifts places renumbers phases, and everything that names a phase by number follows it in the same
transaction: `position.phase`, a `next_action` planstate wrote itself, blockers' `affects` items
(`phase 3`, see `model/kinds.affected_phases`) and decisions' `phase`. Only a pending phase is
removed (never the current one) or moved, and a new or moved phase never lands before a phase that
has started, so the work that ran stays ahead of the work still to do. `structure.phases_total`
counts the phases listed. Each change appends a history line whose `from` and `to` are the lifecycle
state, unchanged: a structure change, not a transition (`store/history.is_transition`). Removing the
last unfinished phase completes the initiative, as finishing it would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planstate.core.errors import PlanstateError, UsageError
from planstate.model.kinds import (
    FINISHED,
    Phase,
    State,
    affected_phases,
    phase_numbers,
    phase_reference,
    to_json,
    with_phase_number,
)
from planstate.ops.phaserules import checked_state, generated_next_action, refusal, refuse_read_only

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.transaction import Transaction

# The history triggers of structure changes: the command that made each one.
STRUCTURE_TRIGGERS = ("phase add", "phase rename", "phase remove", "phase move")


@dataclass
class StructureResult:
    """What a structure command did: the phase it acted on, the phases renumbered and the references rewritten."""

    initiative: str
    action: str
    phase: int | None  # the phase's number now (None once removed)
    name: str
    from_phase: int | None  # its number before (None for a new phase)
    from_name: str | None  # its name before a rename
    phases_total: int
    current_phase: int | None
    renumbered: list[tuple[int, int]] = field(default_factory=list)  # (number before, number now)
    references: list[str] = field(default_factory=list)  # record files whose phase references were rewritten
    initiative_completed: bool = False
    lifecycle: str = "active"
    changed: bool = True
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data in the one vocabulary of the `--json` answers: the phase as an object
        (`number` null once removed), its number and name before (`from_number`, `from_name`), where the position
        is now (`current_phase_number`) and the initiative's lifecycle (`warnings` go to the caller apart)."""
        data: dict[str, Any] = to_json(
            {
                "initiative": self.initiative,
                "action": self.action,
                "phase": {"number": self.phase, "name": self.name},
                "from_number": self.from_phase,
                "from_name": self.from_name,
                "phases_total": self.phases_total,
                "current_phase_number": self.current_phase,
                "renumbered": [{"from": old, "to": new} for old, new in self.renumbered],
                "references": self.references,
                "initiative_completed": self.initiative_completed,
                "lifecycle": {"state": self.lifecycle},
                "changed": self.changed,
            }
        )
        return data


def add(ctx: Context, name: str, *, after: int | None = None, before: int | None = None) -> StructureResult:
    """Add a pending phase named `name` at the end, right after phase `after`, or right before phase `before`."""
    name = _name(name)
    if after is not None and before is not None:
        raise UsageError("give after=N or before=N, not both")
    with ctx.transaction() as tx:
        state = _state(tx)
        numbers = phase_numbers(state)
        anchor = after if after is not None else before
        if anchor is None:
            slot = len(state.phases)
        else:
            _require_phase(tx, state, anchor, f"add a phase {'after' if after is not None else 'before'}")
            slot = anchor - numbers.start + (1 if after is not None else 0)
        _refuse_before_started(tx, state, slot, "add a phase", len(state.phases))
        order: list[int | None] = [*numbers[:slot], None, *numbers[slot:]]
        number = numbers.start + slot
        change = _Change(tx, state, order)
        where = "" if anchor is None else f" {'after' if after is not None else 'before'} {_named(state, anchor)}"
        new = Phase({"name": name, "status": "pending", "checkpoint": "pending"})
        change.commit("phase add", f"added phase {number} ({name}){where}", lambda: state.phases.insert(slot, new))
    return change.result("add", number, name, None, None)


def rename(ctx: Context, number: int, name: str) -> StructureResult:
    """Rename phase `number`; blockers' `affects` items that name it by its old name follow."""
    name = _name(name)
    with ctx.transaction() as tx:
        state = _state(tx)
        phase = _require_phase(tx, state, number, "rename phase")
        old = phase.name
        numbers = phase_numbers(state)
        change = _Change(tx, state, list(numbers), renamed=(number, name))
        if old != name:

            def edit() -> None:
                phase.name = name

            change.commit("phase rename", f"renamed phase {number}: {old} → {name}", edit)
    return change.result("rename", number, name, number, old, changed=old != name)


def remove(ctx: Context, number: int) -> StructureResult:
    """Remove pending phase `number` (never the current one); later phases move up one number."""
    with ctx.transaction() as tx:
        state = _state(tx)
        phase = _require_phase(tx, state, number, "remove phase")
        numbers = phase_numbers(state)
        index = number - numbers.start
        what = f"cannot remove {_named(state, number)}"
        if phase.status != "pending":
            raise refusal(
                tx, ["phases", index, "status"], f"{what}: it is {phase.status}; only a pending phase is removed"
            )
        if _current(state) == number:
            raise refusal(
                tx,
                ["position", "phase"],
                f"{what}: it is the current phase; make another phase current first (`planstate position --phase N`)",
            )
        name = phase.name
        order: list[int | None] = [n for n in numbers if n != number]
        change = _Change(tx, state, order)

        def edit() -> None:
            del state.phases[index]

        change.commit("phase remove", f"removed phase {number} ({name})", edit)
        change.complete_if_finished(number, name)
    return change.result("remove", None, name, number, None)


def move(ctx: Context, number: int, to: int) -> StructureResult:
    """Move pending phase `number` so that it becomes phase `to`; the phases between shift by one."""
    with ctx.transaction() as tx:
        state = _state(tx)
        phase = _require_phase(tx, state, number, "move phase")
        numbers = phase_numbers(state)
        what = f"cannot move {_named(state, number)}"
        if phase.status != "pending":
            raise refusal(
                tx,
                ["phases", number - numbers.start, "status"],
                f"{what}: it is {phase.status}; only a pending phase moves",
            )
        if to not in numbers:
            raise refusal(tx, ["phases"], f"{what} to {to}: phases are numbered {numbers.start} to {numbers.stop - 1}")
        others = [n for n in numbers if n != number]
        slot = to - numbers.start
        if to != number:
            kept = [n - numbers.start for n in others]  # the other phases' indexes, in order
            _refuse_before_started(tx, state, slot, f"move {_named(state, number)} to {to}", len(others), kept)
        order: list[int | None] = [*others[:slot], number, *others[slot:]]
        change = _Change(tx, state, order)
        if to != number:
            raw = state.phases.raw()

            def edit() -> None:
                item = raw[number - numbers.start]
                del state.phases[number - numbers.start]
                state.phases.insert(slot, Phase(item))

            change.commit("phase move", f"moved phase {number} ({phase.name}) to {to}", edit)
    return change.result("move", to, phase.name, number, None, changed=to != number)


# ---------------------------------------------------------------------------- the change and its references


class _Change:
    """One structure change inside a transaction: the phases in their new order, and everything that follows."""

    def __init__(
        self,
        tx: Transaction,
        state: State,
        order: list[int | None],
        *,
        renamed: tuple[int, str] | None = None,
    ) -> None:
        self.tx = tx
        self.state = state
        numbers = phase_numbers(state)
        self.first = numbers.start
        self.total_before = len(state.phases)
        self.renamed = renamed  # (number, new name)
        # number before → number after, for every phase that stays; a phase left out is removed
        self.mapping = {old: self.first + i for i, old in enumerate(order) if old is not None}
        self.removed = [n for n in numbers if n not in self.mapping and n - self.first < len(state.phases)]
        self.names = {n: str(p.name) for n, p in zip(numbers, state.phases, strict=False)}
        self.references: list[str] = []
        self.warnings: list[str] = []
        self.completed = False

    @property
    def shifted(self) -> list[tuple[int, int]]:
        """The phases whose numbers change, as (before, after)."""
        return [(old, new) for old, new in self.mapping.items() if old != new]

    def commit(self, trigger: str, reason: str, edit: Callable[[], None]) -> None:
        """Change the phases (`edit`, which puts them in the order this change was made with), then update the
        snapshot, the position, the references and the history."""
        from planstate.core.clock import now
        from planstate.store import history

        self._references()  # first: they are resolved against the phases as they were
        edit()
        state = self.state
        total = len(state.phases)
        if state.structure.exists() and state.structure.phases_total != total:
            reason += f"; phases_total {state.structure.phases_total} → {total}"
            state.structure.phases_total = total
        if self.shifted:
            reason += "; renumbered " + ", ".join(f"{old} → {new}" for old, new in self.shifted)
        current = _current(state)
        if current is not None and current in self.mapping and self.mapping[current] != current:
            state.position.phase = self.mapping[current]
        self._next_action()
        lifecycle = state.lifecycle.state
        self.tx.log(self.tx.ctx.target, history.entry(now(), lifecycle, lifecycle, trigger, reason, self.tx.ctx.actor))

    def complete_if_finished(self, number: int, name: str) -> None:
        """Complete an active initiative whose phases are now all finished, as finishing the last one would."""
        from planstate.ops import lifecycle

        state = self.state
        if state.lifecycle.state != "active" or not state.phases:
            return
        if any(p.status not in FINISHED for p in state.phases):
            return
        if any(state.next_action == generated_next_action(n, name) for n, name in self.names.items()):
            state.next_action = None  # planstate's own "Start phase N: NAME": no phase is left to start
        reason = f"last unfinished phase removed: {number} ({name})"
        lifecycle.apply(self.tx, self.tx.ctx.target, "complete", trigger="phase remove", reason=reason)
        self.completed = True

    def _next_action(self) -> None:
        """A next action planstate wrote itself (`Start phase N: NAME`) follows its phase's number and name."""
        state = self.state
        for old, name in self.names.items():
            if state.next_action != generated_next_action(old, name):
                continue
            if old in self.mapping:
                renamed = self.renamed[1] if self.renamed is not None and self.renamed[0] == old else name
                state.next_action = generated_next_action(self.mapping[old], renamed)
            return

    def _references(self) -> None:
        """Rewrite the phase references of blockers (`affects`), decisions and tasks (`phase`) that this change
        moves."""
        if not (self.shifted or self.removed or self.renamed):
            return
        from planstate.model.kinds import Blocker
        from planstate.store import recordfiles

        ctx, target = self.tx.ctx, self.tx.ctx.target
        kinds = ("blocker", "decision", "task") if (self.shifted or self.removed) else ("blocker",)
        for kind in kinds:
            found, problems = recordfiles.load_all(ctx, target, kind)
            if problems:
                raise _unreadable(problems[0])
            for record in found:
                if kind == "blocker":
                    items = self._affects(record.data.get("affects"))
                    if items is None:
                        continue
                    blocker: Blocker = self.tx.record("blocker", record.path)
                    for index, item in items.items():
                        blocker.affects[index] = item
                else:
                    phase = record.data.get("phase")
                    if not isinstance(phase, int) or isinstance(phase, bool):
                        continue
                    if phase in self.removed:
                        self.tx.record(kind, record.path).phase = None
                        was = "was made in" if kind == "decision" else "belonged to"
                        self.warnings.append(
                            f"{kind} {record.id} {was} phase {phase} ({self.names[phase]}), now removed: "
                            "its phase is now null"
                        )
                    elif phase in self.mapping and self.mapping[phase] != phase:
                        self.tx.record(kind, record.path).phase = self.mapping[phase]
                    else:
                        continue
                self.references.append(ctx.display(record.path))

    def _affects(self, affects: Any) -> dict[int, str] | None:
        """The `affects` items this change rewrites, by index (None when none is): `phase N` items renumbered,
        items naming a removed phase marked as such, and items naming a renamed phase by name renamed."""
        if not isinstance(affects, list):
            return None
        out: dict[int, str] = {}
        for index, item in enumerate(affects):
            if not isinstance(item, str):
                continue
            named = affected_phases(self.state, [item])
            if not named:
                continue
            number = named[0]
            by_number = phase_reference(item) is not None
            if number in self.removed:
                out[index] = f"removed phase: {item.strip() if not by_number else self.names[number]}"
            elif by_number and self.mapping.get(number, number) != number:
                out[index] = with_phase_number(item, self.mapping[number])
            elif not by_number and self.renamed is not None and self.renamed[0] == number:
                out[index] = self.renamed[1]
        return out or None

    def result(
        self,
        action: str,
        number: int | None,
        name: str,
        from_phase: int | None,
        from_name: str | None,
        *,
        changed: bool = True,
    ) -> StructureResult:
        """The result of the change, read from the state as committed."""
        state = self.state
        return StructureResult(
            initiative=state.initiative,
            action=action,
            phase=number,
            name=name,
            from_phase=from_phase,
            from_name=from_name,
            phases_total=len(phase_numbers(state)),
            current_phase=_current(state),
            renumbered=self.shifted if changed else [],
            references=self.references if changed else [],
            initiative_completed=self.completed,
            lifecycle=state.lifecycle.state,
            changed=changed,
            warnings=self.warnings,
        )


# ---------------------------------------------------------------------------- rules and helpers


def _state(tx: Transaction) -> State:
    """The target initiative's state, valid and writable."""
    state = checked_state(tx)
    refuse_read_only(tx, state)
    return state


def _name(name: str) -> str:
    """A phase name as given; an empty one is refused."""
    if not isinstance(name, str) or not name.strip():
        raise UsageError("a phase needs a name (not empty)")
    return name


def _require_phase(tx: Transaction, state: State, number: int, verb: str) -> Phase:
    """Phase `number`, or a refusal naming the range."""
    numbers = phase_numbers(state)
    if not len(state.phases):
        raise refusal(tx, ["phases"], f"cannot {verb} {number}: this initiative has no phases")
    if number not in numbers or number - numbers.start >= len(state.phases):
        raise refusal(
            tx, ["phases"], f"cannot {verb} {number}: phases are numbered {numbers.start} to {numbers.stop - 1}"
        )
    return state.phases[number - numbers.start]


def _refuse_before_started(
    tx: Transaction, state: State, slot: int, verb: str, count: int, indexes: list[int] | None = None
) -> None:
    """Refuse to put a pending phase at `slot` of a list of `count` others (their indexes in `state.phases`, in
    order, default all) when one that would come after it has started: work that ran stays ahead of work to do."""
    numbers = phase_numbers(state)
    others = indexes if indexes is not None else list(range(count))
    started = [i for i in others if state.phases[i].status != "pending"]
    later = [i for i in others[slot:] if state.phases[i].status != "pending"]
    if not later:
        return
    blocking = later[0]
    earliest = numbers.start + started[-1]
    raise refusal(
        tx,
        ["phases", blocking, "status"],
        f"cannot {verb} before {_named(state, numbers.start + blocking)}: it is {state.phases[blocking].status}, "
        f"and pending phases come after the phases that have started (after phase {earliest} at the earliest)",
    )


def _named(state: State, number: int) -> str:
    """`phase N (NAME)`."""
    numbers = phase_numbers(state)
    return f"phase {number} ({state.phases[number - numbers.start].name})"


def _current(state: State) -> int | None:
    """The current phase number (position.phase), or None when there is no position."""
    value = state.position._data().get("phase") if state.position.exists() else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _unreadable(problem: PlanstateError) -> UsageError:
    """The refusal of a change that would renumber references while a record cannot be read to renumber them."""
    return UsageError(
        f"phase references cannot be renumbered while this record cannot be read ({problem.message}); repair it first",
        file=problem.file,
        line=problem.line,
        column=problem.column,
        field=problem.field,
    )
