"""What to verify before resuming: the doubts the brief flags about a state that reads as valid.

The resume context is checked against the working tree (files listed as modified that are gone, files git says
changed that the state does not mention), the blockers against the phases, and the keys that look misspelt. One
flag per doubt, in the order of `VERIFICATIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from planstate.check.findings import Finding
from planstate.core.clock import parse_datetime
from planstate.model.kinds import OPEN_BLOCKERS, State, affected_phases, phase_at

if TYPE_CHECKING:
    from planstate.store.context import Context


class Recorded(Protocol):
    """A record as the doubts read it: its id and its data (a `recordfiles.Record`, or the brief's item)."""

    @property
    def id(self) -> str:
        """The record's id."""

    @property
    def data(self) -> dict[str, Any]:
        """Its front matter (or only its facts)."""


SHOWN_FILES = 10
SHOWN_GIT_FILES = 10


def missing(ctx: Context, state: State) -> list[str]:
    """The files the resume context lists as modified that no longer exist (relative to the project folder)."""
    project = ctx.root.parent
    return [name for name in state.resume_context.files_modified if not (project / name).exists()]


def verify(
    ctx: Context, state: State, blockers: Sequence[Recorded], sessions: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Verify the state before resuming from it: the resume context against the working tree, and the blockers
    against the phases; one flag per doubt, in the order of `VERIFICATIONS`."""
    return [flag for doubt in VERIFICATIONS for flag in doubt(ctx, state, blockers, sessions)]


def typos(findings: list[Finding]) -> list[dict[str, Any]]:
    """Keys that look like a misspelt field (check's `unknown-key` with a "did you mean"): what they hold is not
    read, so the brief may say "none recorded" of a value that is there under another name."""
    return [
        {"kind": "unknown_key", "message": f"{f.location()}: {f.message} ({f.hint})"}
        for f in findings
        if f.code == "unknown-key" and f.hint.startswith("did you mean")
    ]


def _legacy_format(
    ctx: Context, state: State, blockers: Sequence[Recorded], sessions: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A STATE.md without a structure snapshot: completion is only inferred."""
    if state.structure.exists():
        return []
    message = "legacy format: no structure snapshot; completion is inferred from completed phases"
    return [{"kind": "legacy_format", "message": message}]


def _missing_files(
    ctx: Context, state: State, blockers: Sequence[Recorded], sessions: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Files the resume context lists as modified that no longer exist."""
    gone = missing(ctx, state)
    if not gone:
        return []
    return [
        {
            "kind": "missing_files",
            "files": gone[:SHOWN_FILES],
            "count": len(gone),
            "message": f"{len(gone)} file{'s are' if len(gone) != 1 else ' is'} listed as modified "
            f"but no longer exist{'s' if len(gone) == 1 else ''}",
        }
    ]


def _unrecorded_changes(
    ctx: Context, state: State, blockers: Sequence[Recorded], sessions: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Files git says changed since the state's last news (see `_changes_since`) that the resume context does not
    mention (planning files aside: git is told to leave the planning folder out)."""
    from planstate.core import git

    since, event = _changes_since(state, sessions)
    changed = git.changed_since(ctx.root.parent, since, leave_out=ctx.root.name)
    if changed is None:
        return []
    mentioned = {_norm(n) for n in state.resume_context.files_modified}
    unmentioned = [c for c in changed if _norm(c) not in mentioned]
    if not unmentioned:
        return []
    count = len(unmentioned)
    files = f"{count} file{'s' if count != 1 else ''}"
    changed_text = f"changed in git since {SINCE_TEXT[event]}" if event else "with uncommitted changes"
    return [
        {
            "kind": "unrecorded_changes",
            "files": unmentioned[:SHOWN_GIT_FILES],
            "count": count,
            "since": since,
            "since_event": event,
            "message": f"{files} {changed_text} that the state does not mention",
        }
    ]


def _blockers_on_completed_phases(
    ctx: Context, state: State, blockers: Sequence[Recorded], sessions: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Open blockers that still affect a completed phase: the blocker or what it affects is out of date."""
    flags = []
    for blocker in blockers:
        if blocker.data.get("status") not in OPEN_BLOCKERS:
            continue
        for number in affected_phases(state, blocker.data.get("affects")):
            phase = phase_at(state, number)
            if phase is not None and phase.status == "completed":
                flags.append(
                    {
                        "kind": "blocker_on_completed_phase",
                        "blocker": blocker.id,
                        "phase_number": number,
                        "message": f"blocker {blocker.id} still affects phase {number} ({phase.name}), "
                        "which is already completed: resolve the blocker or correct what it affects",
                    }
                )
    return flags


VERIFICATIONS: tuple[
    Callable[[Context, State, Sequence[Recorded], Sequence[dict[str, Any]]], list[dict[str, Any]]], ...
] = (
    _legacy_format,
    _missing_files,
    _unrecorded_changes,
    _blockers_on_completed_phases,
)


# What `since` of an unrecorded_changes flag is, in the words of its message.
SINCE_TEXT = {
    "session_ended": "the last session ended",
    "session_started": "the oldest active session started (no session has ended)",
    "lifecycle_changed": "the last lifecycle change (no session yet)",
    "created": "the initiative was created (no session yet)",
}


def _changes_since(state: State, sessions: Sequence[dict[str, Any]]) -> tuple[datetime | None, str | None]:
    """From when git changes are work the state may not know of: the end of the last session that ended; when none
    has, the start of the oldest active one (a crashed agent's work is all unrecorded); with no session at all, the
    last lifecycle change or the creation. Uncommitted changes count whatever this is."""
    ends = [e for s in sessions if (e := parse_datetime(s.get("ended"))) is not None]
    if ends:
        return max(ends), "session_ended"
    starts = [t for s in sessions if s.get("status") == "active" and (t := parse_datetime(s.get("started")))]
    if starts:
        return min(starts), "session_started"
    if state.lifecycle.exists() and state.lifecycle.since is not None:
        return state.lifecycle.since, "lifecycle_changed"
    return (state.created, "created") if state.created is not None else (None, None)


def _norm(name: str) -> str:
    """A listed file name as git prints it: POSIX separators, no leading `./`."""
    return Path(name).as_posix().removeprefix("./")
