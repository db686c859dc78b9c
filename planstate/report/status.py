"""The status summary: where an initiative is, in one screen (`planstate status`)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.model import verdicts
from planstate.model.derived import progress_bar, recompute
from planstate.model.kinds import State, is_complete, phase_at, to_json
from planstate.model.validation import check, problems_for

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.recordfiles import Summary


class Status(NamedTuple):  # not a dataclass: importing dataclasses (and inspect) costs a `status` 6 ms
    """Where the target initiative is: lifecycle, current phase, progress, position and what is next.

    `status["percent"]` reads a field by its name, as in `to_dict()`.
    """

    file: str | None
    initiative: str
    title: str
    status: str  # the one-word verdict resume gives too (model/verdicts.status)
    lifecycle: str
    lifecycle_since: Any
    lifecycle_reason: str | None
    lifecycle_by: str | None
    lifecycle_context: str | None
    complete: bool
    completed_at: Any
    error: Any
    current_phase: int | None
    current_phase_name: str | None
    current_phase_status: str | None
    current_phase_started: Any
    current_phase_checkpoint: str | None
    blockers: list[dict[str, Any]]  # the open blockers of the current phase: id and title
    possibly_stalled: bool
    phases_total: int
    phases_completed: int
    percent: int
    bar: str
    position: Any
    next_action: str | None
    open_questions: list[str]
    updated: Any

    def __getitem__(self, name: str) -> Any:  # type: ignore[override]  # by name, never by position
        return getattr(self, name)

    def to_dict(self) -> dict[str, Any]:
        """Return the summary as JSON-ready data: the file's `path`, the `lifecycle` and the `current_phase` as
        objects (docs/json.md), then progress, position and what is next."""
        current = None
        if self.current_phase is not None:
            current = {
                "number": self.current_phase,
                "name": self.current_phase_name,
                "status": self.current_phase_status,
                "started": self.current_phase_started,
                "checkpoint": self.current_phase_checkpoint,
            }
        lifecycle = {
            "state": self.lifecycle,
            "since": self.lifecycle_since,
            "reason": self.lifecycle_reason,
            "by": self.lifecycle_by,
            "context": self.lifecycle_context,
            "completed_at": self.completed_at,
            "error": self.error,
        }
        objects = {"lifecycle": lifecycle, "current_phase": current}
        out: dict[str, Any] = {"path": self.file}
        for name, value in self.flat().items():
            if name in objects:
                out[name] = objects[name]
            elif name not in _NESTED:
                out[name] = value
        return out

    def flat(self) -> dict[str, Any]:
        """Every field by its name, as `planstate status` prints them."""
        return self._asdict()


# The fields `to_dict()` shows inside the objects `lifecycle` and `current_phase`, or as `path`.
_NESTED = {"file", "lifecycle_since", "lifecycle_reason", "lifecycle_by", "lifecycle_context"}
_NESTED |= {"completed_at", "error"} | {f"current_phase_{s}" for s in ("name", "status", "started", "checkpoint")}


def status(ctx: Context) -> Status:
    """The status of the initiative acted on, with derived values recomputed (true even if the file's are stale).

    Its verdicts (status, checkpoint, blockers, possibly stalled) come from model/verdicts.py, as resume's do."""
    from planstate.core.clock import now
    from planstate.store import folders, history

    data = ctx.cached_data(ctx.state_path)  # a warm read parses nothing (and imports no YAML parser)
    if not isinstance(data, dict) or problems_for("state", data):
        check(ctx.state_document(), "state")  # located in a round-trip parse; raises
    state = State(copy.deepcopy(data))
    recompute(state)  # on a private copy of the data
    position = state.position
    current = phase_at(state, position.phase) if position.exists() else None
    initiative = ctx.target
    found = folders.blocking_data(ctx, initiative)

    def whole(known: tuple[str, dict[str, Any], Summary]) -> tuple[str, dict[str, Any]] | None:
        read = folders.data_of(ctx, [known[2]], {})  # a file gone or broken since it was summarized is left out
        return (read[0][0], read[0][1]) if read else None

    blocked = verdicts.blocked_by_facts(state, found, whole)
    entries, _problems = history.read(initiative.history_path, ctx.display(initiative.history_path), ctx.root)
    stalled = verdicts.stalled(verdicts.running_seconds(state, now(), entries), verdicts.completed_durations(state))
    progress = state.progress
    lifecycle = state.lifecycle
    return Status(
        file=ctx.display(ctx.state_path),
        initiative=state.initiative,
        title=state.title,
        status=verdicts.status(state, blocked, stalled),
        lifecycle=lifecycle.state,
        lifecycle_since=to_json(lifecycle.since),
        lifecycle_reason=lifecycle.reason,
        lifecycle_by=lifecycle.by,
        lifecycle_context=lifecycle.context,
        complete=is_complete(state),
        completed_at=to_json(lifecycle.completed_at),
        error=to_json(lifecycle.error._data()) if lifecycle.error is not None else None,
        current_phase=position.phase if position.exists() else None,
        current_phase_name=current.name if current else None,
        current_phase_status=current.status if current else None,
        current_phase_started=to_json(current.started) if current else None,
        current_phase_checkpoint=verdicts.checkpoint(current) if current else None,
        blockers=next((item["blockers"] for item in blocked if item["current"]), []),
        possibly_stalled=stalled,
        phases_total=progress.phases_total if progress.exists() else 0,
        phases_completed=progress.phases_completed if progress.exists() else 0,
        percent=progress.percent if progress.exists() else 0,
        bar=progress.bar if progress.exists() else progress_bar(0),
        position=to_json(position._data()) if position.exists() else None,
        next_action=state.next_action,
        open_questions=list(state.resume_context.open_questions),
        updated=to_json(state.updated),
    )
