"""Phase operations: start, complete, fail, retry and skip the phases of the structure snapshot.

Rules: at most one phase is active; `position.phase` is always a valid phase number and never
moves past the last one; completing (or skipping) the phase that leaves no unfinished phase
completes the initiative explicitly, through the lifecycle table, with `position.phase` kept.
Every phase command needs the initiative to be `active`. A phase that starts again keeps its
finished attempt in `previous` (append-only history); open blockers on a phase are warned
about, never enforced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planstate.core.clock import now
from planstate.core.errors import UsageError
from planstate.model.kinds import (
    FINISHED,
    Phase,
    State,
    phase_numbers,
    to_json,
)
from planstate.ops import lifecycle, phasedata
from planstate.ops.phaserules import (
    blocker_warnings,
    checked_state,
    generated_next_action,
    refusal,
    refuse_read_only,
    require_active,
)

if TYPE_CHECKING:
    from planstate.ops.structure import StructureResult
    from planstate.store.context import Context
    from planstate.store.transaction import Transaction


@dataclass
class PhaseResult:
    """What a phase command did: the phase afterwards, where the position is, and whether the initiative completed."""

    initiative: str
    action: str
    phase: int
    name: str
    previous: str
    status: str
    checkpoint: str
    attempts: int
    started: datetime | None
    completed: datetime | None
    duration_seconds: float | None
    evidence: dict[str, Any]
    failure: str | None
    current_phase: int
    next_phase: int | None = None
    next_phase_name: str | None = None
    initiative_completed: bool = False
    lifecycle: str = "active"
    unfinished: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    auto_resumed: bool = False  # the initiative was suspended and this command resumed it first

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data: the phase as an object, the status it moved `from` and `to`, where the
        position is now (`current_phase_number`), and the initiative's lifecycle (`warnings` go to the caller apart)."""
        next_phase = None if self.next_phase is None else {"number": self.next_phase, "name": self.next_phase_name}
        data: dict[str, Any] = to_json(
            {
                "initiative": self.initiative,
                "action": self.action,
                "phase": {
                    "number": self.phase,
                    "name": self.name,
                    "status": self.status,
                    "checkpoint": self.checkpoint,
                    "attempts": self.attempts,
                    "started": self.started,
                    "completed": self.completed,
                    "duration_seconds": self.duration_seconds,
                    "evidence": self.evidence,
                    "failure": self.failure,
                },
                "from": self.previous,
                "to": self.status,
                "current_phase_number": self.current_phase,
                "next_phase": next_phase,
                "initiative_completed": self.initiative_completed,
                "lifecycle": {"state": self.lifecycle},
                "unfinished_phase_numbers": self.unfinished,
                "auto_resumed": self.auto_resumed,
            }
        )
        return data


def _generated(state: State, text: str) -> bool:
    """Whether a next action is one planstate wrote itself for some phase (not someone's words)."""
    return any(text == generated_next_action(n, p.name) for n, p in phasedata.numbered(state).items())


class PhaseAPI:
    """`ws.phase`: the phase commands, each one transaction on the target initiative's STATE.md."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._auto_resumed = False

    def start(self, number: int) -> PhaseResult:
        """Start phase `number`: a pending phase, or the current one when no phase is active (after a reopen)."""
        with self.ctx.transaction() as tx:
            state, phase, index = self._prepare(tx, number, "start")
            current = phasedata.current(state)
            active = phasedata.active(state)
            if phase.status == "active":
                raise refusal(tx, ["phases", index, "status"], f"phase {number} is already active")
            if active is not None:
                other, other_phase = active
                raise refusal(
                    tx,
                    ["phases", other - phase_numbers(state).start, "status"],
                    f"cannot start phase {number}: phase {other} ({other_phase.name}) is active; "
                    f"complete, fail or skip it first",
                )
            if phase.status != "pending" and number != current:
                raise refusal(
                    tx,
                    ["phases", index, "status"],
                    f"cannot start phase {number}: it is {phase.status}; only a pending phase, or the current "
                    f"phase, can be started (make it current with `planstate position --phase {number}`)",
                )
            previous = phase.status
            phasedata.reset_rerun(phase)
            phasedata.activate(phase, now())
            if number != current:
                phasedata.move_to(state, number)
            warnings = blocker_warnings(self.ctx, self.ctx.target, state, [number])
        return self._result(state, "start", number, previous, warnings)

    def complete(
        self,
        number: int,
        *,
        checkpoint: str = "passed",
        evidence: dict[str, Any] | None = None,
        next_action: str | None = None,
    ) -> PhaseResult:
        """Complete the current phase with its checkpoint result; a failed checkpoint keeps it active to retry.

        `next_action` replaces the next action in the same write; without it, a next action someone wrote
        stays, with a warning that it was written before the phase completed."""
        from planstate.ops.records import text

        if checkpoint not in ("passed", "failed"):
            raise UsageError(f"checkpoint must be passed or failed, not {checkpoint!r}")
        if next_action is not None:
            next_action = text(next_action, "next_action")
        with self.ctx.transaction() as tx:
            state, phase, index = self._prepare(tx, number, "complete")
            self._require_current_active(tx, state, number, "complete")
            if phase.checkpoint == "failed":
                # passing it now would merge the failed attempt's evidence into the passed one
                raise refusal(
                    tx,
                    ["phases", index, "checkpoint"],
                    f"phase {number}'s checkpoint failed; `planstate phase retry {number}` first",
                )
            previous = phase.status
            if evidence:
                phase.evidence.update(evidence)
            phase.checkpoint = checkpoint
            started: list[int] = []
            notes: list[str] = []
            if checkpoint == "passed":
                phase.status = "completed"
                phase.completed = now()
                phasedata.clear(phase, "failure")
                before = state.next_action
                started = self._advance(tx, state, number, "phase complete")
                if next_action is not None:
                    state.next_action = next_action
                elif before and state.next_action == before and not _generated(state, before):
                    stale = f"the next action was written before phase {number} completed: {before.strip()!r}"
                    notes.append(f"{stale[:200]}; if it is done, set the next one (`planstate next TEXT`)")
            else:
                if next_action is not None:
                    state.next_action = next_action
                phase.failed_at = now()
            warnings = notes + blocker_warnings(self.ctx, self.ctx.target, state, [number, *started])
        return self._result(state, "complete", number, previous, warnings)

    def fail(self, number: int, *, reason: str) -> PhaseResult:
        """Mark the current, active phase failed, with why; `retry` starts it again."""
        if not reason or not reason.strip():
            raise UsageError("phase fail needs a reason (reason=R)", argument="reason")
        with self.ctx.transaction() as tx:
            state, phase, _index = self._prepare(tx, number, "fail")
            self._require_current_active(tx, state, number, "fail")
            previous = phase.status
            phase.status = "failed"
            phase.failure = reason
            if phase.failed_at is None:  # a failed checkpoint before this already ended the attempt
                phase.failed_at = now()
        return self._result(state, "fail", number, previous)

    def retry(self, number: int) -> PhaseResult:
        """Start the current phase again after it failed or its checkpoint failed."""
        with self.ctx.transaction() as tx:
            state, phase, index = self._prepare(tx, number, "retry")
            self._require_current(tx, state, number, "retry")
            if phase.status != "failed" and not (phase.status == "active" and phase.checkpoint == "failed"):
                raise refusal(
                    tx,
                    ["phases", index, "status"],
                    f"cannot retry phase {number}: it is {phase.status} with checkpoint {phase.checkpoint}; "
                    "only a failed phase or a failed checkpoint is retried",
                )
            previous = phase.status
            phasedata.reset_rerun(phase)
            phasedata.activate(phase, now())
            warnings = blocker_warnings(self.ctx, self.ctx.target, state, [number])
        return self._result(state, "retry", number, previous, warnings)

    def skip(self, number: int, *, reason: str | None = None) -> PhaseResult:
        """Skip the current phase (pending, active or failed) and move on as `complete` does."""
        with self.ctx.transaction() as tx:
            state, phase, index = self._prepare(tx, number, "skip")
            self._require_current(tx, state, number, "skip")
            if phase.status in FINISHED:
                raise refusal(tx, ["phases", index, "status"], f"cannot skip phase {number}: it is {phase.status}")
            previous = phase.status
            phase.status = "skipped"
            phase.checkpoint = "skipped"
            if reason is not None or "skip_reason" in phase._data():
                phase.skip_reason = reason
            started = self._advance(tx, state, number, "phase skip")
            warnings = blocker_warnings(self.ctx, self.ctx.target, state, started)
        return self._result(state, "skip", number, previous, warnings)

    # The structure commands live in ops/structure.py; these are their places on `ws.phase`.

    def add(self, name: str, *, after: int | None = None, before: int | None = None) -> StructureResult:
        """Add a pending phase at the end, right after phase `after` or right before phase `before`."""
        from planstate.ops import structure

        return structure.add(self.ctx, name, after=after, before=before)

    def rename(self, number: int, name: str) -> StructureResult:
        """Rename phase `number`."""
        from planstate.ops import structure

        return structure.rename(self.ctx, number, name)

    def remove(self, number: int) -> StructureResult:
        """Remove pending phase `number` (not the current one); later phases move up one number."""
        from planstate.ops import structure

        return structure.remove(self.ctx, number)

    def move(self, number: int, *, to: int) -> StructureResult:
        """Move pending phase `number` to become phase `to`."""
        from planstate.ops import structure

        return structure.move(self.ctx, number, to)

    # ------------------------------------------------------------------ rules shared by the commands

    def _prepare(self, tx: Transaction, number: int, verb: str) -> tuple[State, Phase, int]:
        """Load the state, require an active initiative and a valid phase number; return the state, phase, index."""
        state = checked_state(tx)
        refuse_read_only(tx, state)
        self._auto_resumed = require_active(tx, state, f"{verb} phase {number}", f"planstate phase {verb} {number}")
        numbers = phase_numbers(state)
        if not len(numbers):
            raise refusal(tx, ["phases"], f"cannot {verb} phase {number}: this initiative has no phases")
        if number not in numbers or number - numbers.start >= len(state.phases):
            raise refusal(
                tx,
                ["phases"],
                f"cannot {verb} phase {number}: phases are numbered {numbers.start} to {numbers.stop - 1}",
            )
        index = number - numbers.start
        return state, state.phases[index], index

    def _require_current(self, tx: Transaction, state: State, number: int, verb: str) -> None:
        current = phasedata.current(state)
        if current == number:
            return
        phases = phasedata.numbered(state)
        where = "no phase is current" if current is None else f"phase {current} is the current phase"
        raise refusal(
            tx,
            ["position", "phase"] if current is not None else ["phases"],
            f"cannot {verb} phase {number}: {where}; phase {number} is {phases[number].status}",
        )

    def _require_current_active(self, tx: Transaction, state: State, number: int, verb: str) -> None:
        self._require_current(tx, state, number, verb)
        phase = phasedata.numbered(state)[number]
        if phase.status == "active":
            return
        if phase.status == "failed" and verb == "complete":
            raise refusal(
                tx,
                ["phases", number - phase_numbers(state).start, "status"],
                f"phase {number} failed; `planstate phase retry {number}` first",
            )
        hint = {
            "pending": f"start it first with `planstate phase start {number}`",
            "failed": f"retry it first with `planstate phase retry {number}`",
        }.get(phase.status, "")
        raise refusal(
            tx,
            ["phases", number - phase_numbers(state).start, "status"],
            f"cannot {verb} phase {number}: it is {phase.status}" + (f"; {hint}" if hint else ""),
        )

    def _advance(self, tx: Transaction, state: State, number: int, trigger: str) -> list[int]:
        """After phase `number` finished: start the next pending phase, or complete the initiative when none is left.

        Returns the phase it started (none when it did not start one)."""
        phases = phasedata.numbered(state)
        finished_name = phases[number].name
        unfinished = [n for n, p in phases.items() if p.status not in FINISHED]
        following = [n for n in unfinished if n > number and phases[n].status == "pending"]
        if following:
            upcoming = following[0]
            phasedata.activate(phases[upcoming], now())
            phasedata.move_to(state, upcoming)
            if state.next_action == generated_next_action(number, finished_name):
                state.next_action = generated_next_action(upcoming, phases[upcoming].name)
            return [upcoming]
        if unfinished:
            return []  # an earlier phase is still open: the position stays here, never past the end
        if state.next_action == generated_next_action(number, finished_name):
            state.next_action = None
        lifecycle.apply(
            tx,
            self.ctx.target,
            "complete",
            trigger=trigger,
            reason=f"last phase finished: {number} ({finished_name})",
        )
        return []

    def _result(
        self, state: State, action: str, number: int, previous: str, warnings: list[str] | None = None
    ) -> PhaseResult:
        phases = phasedata.numbered(state)
        phase = phases[number]
        current = phasedata.current(state)
        moved = current if current is not None and current != number else None
        completed = state.lifecycle.state == "completed"
        return PhaseResult(
            initiative=state.initiative,
            action=action,
            phase=number,
            name=phase.name,
            previous=previous,
            status=phase.status,
            checkpoint=phase.checkpoint,
            attempts=phase.attempts,
            started=phase.started,
            completed=phase.completed,
            duration_seconds=phase.duration_seconds,
            evidence=dict(phase._data().get("evidence") or {}),
            failure=phase.failure,
            current_phase=current if current is not None else number,
            next_phase=moved,
            next_phase_name=phases[moved].name if moved is not None else None,
            initiative_completed=completed and action in ("complete", "skip"),
            lifecycle=state.lifecycle.state,
            unfinished=[n for n, p in phases.items() if p.status not in FINISHED],
            warnings=warnings or [],
            auto_resumed=self._auto_resumed,
        )
