"""Rules about a valid STATE.md: derived copies, completion, the history's last transition, the resume files."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.check.findings import Finding
from planstate.check.fixes import repair_allowed
from planstate.check.reader import FileRead
from planstate.model.kinds import FINISHED, State
from planstate.text.paths import shown_path

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

_RECOMPUTED = "run `planstate check --fix`; derived values are recomputed on every write, never set them"


def derived(initiative: Initiative, state: FileRead, data: dict[str, Any]) -> list[Finding]:
    """Derived copies (progress, durations, phase name) that disagree with what the phases say."""
    from planstate.model.derived import recompute
    from planstate.text.paths import get_in

    expected = copy.deepcopy(data)
    recompute(State(expected))
    out: list[Finding] = []
    for segments in _derived_paths(data):
        found, value = get_in(data, segments)
        _, want = get_in(expected, segments)
        if found and value != want:
            out.append(_mismatch(initiative, state, segments, value, want))
    return out


def _derived_paths(data: dict[str, Any]) -> list[list[Any]]:
    """The paths of STATE.md's derived copies."""
    paths: list[list[Any]] = [["progress", k] for k in ("phases_total", "phases_completed", "percent", "bar")]
    paths += [["phases", i, "duration_seconds"] for i in range(len(data.get("phases") or []))]
    paths.append(["position", "phase_name"])
    return paths


def _mismatch(initiative: Initiative, state: FileRead, segments: list[Any], value: Any, want: Any) -> Finding:
    """The finding of a derived copy that is `value` where its source makes it `want`."""
    name = shown_path(segments, state.data)
    code = "phase-name-mismatch" if name == "position.phase_name" else "derived-mismatch"
    source = "the current phase is named" if code == "phase-name-mismatch" else "the phases make it"
    message = f"{name} is {_show(value)} but {source} {_show(want)}"
    return state.finding(code, segments, message, _RECOMPUTED, initiative=initiative.dir)


def structure(initiative: Initiative, state: FileRead, data: dict[str, Any]) -> list[Finding]:
    """A structure snapshot that counts fewer phases than are listed: a phase added by hand, not yet recorded.
    (Fewer phases listed than counted is a validation error: see model/validation.py.)"""
    total, listed = _snapshot_total(data), len(_phases(data))
    if total is None or total >= listed:
        return []
    message = f"structure.phases_total is {total} but {listed} phases are listed"
    hint = f"run `planstate check --fix` or set it to {listed} by hand; `planstate phase add NAME` adds a phase in step"
    return [
        state.finding("structure-mismatch", ["structure", "phases_total"], message, hint, initiative=initiative.dir)
    ]


def _snapshot_total(data: dict[str, Any]) -> int | None:
    """`structure.phases_total`, when the file has a snapshot that gives one."""
    snapshot = data.get("structure")
    total = snapshot.get("phases_total") if isinstance(snapshot, dict) else None
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def completion(state: FileRead, data: dict[str, Any]) -> list[Finding]:
    """A completed initiative with unfinished phases; an active one whose phases are all finished."""
    phases = _phases(data)
    lifecycle_state = (data.get("lifecycle") or {}).get("state")
    unfinished = _unfinished(phases)
    if lifecycle_state == "completed" and unfinished:
        are = "s are" if len(unfinished) > 1 else " is"
        message = (
            f"lifecycle.state is completed but {len(unfinished)} phase{are} not finished: "
            f"{', '.join(str(n) for n in unfinished)}"
        )
        hint = "finish or skip those phases, or `planstate reopen` the initiative"
        return [state.finding("completion-mismatch", ["lifecycle", "state"], message, hint)]
    if lifecycle_state == "active" and phases and not unfinished:
        message = "every phase is completed or skipped but lifecycle.state is still active"
        hint = (
            "complete the initiative with `planstate complete`, or add the work that remains with `planstate phase add`"
        )
        return [state.finding("completion-pending", ["lifecycle", "state"], message, hint)]
    return []


def _phases(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The phases that are mappings."""
    return [p for p in data.get("phases") or [] if isinstance(p, dict)]


def _unfinished(phases: list[dict[str, Any]]) -> list[Any]:
    """The names of the phases neither completed nor skipped."""
    return [p.get("name") for p in phases if p.get("status") not in FINISHED]


def history(initiative: Initiative, log: FileRead | None, shown: str, data: dict[str, Any] | None) -> list[Finding]:
    """A last transition in history.jsonl (`log`, None when there is no file; `shown` its path) that does not lead
    to lifecycle.state, or no transition at all. Unreadable or conflicted histories have their own findings."""
    if data is None or (log is not None and (log.read_failed or log.conflicts)):
        return []
    from planstate.store.history import last_transition

    last = last_transition(log.entries) if log is not None else None
    target = data["lifecycle"]["state"]
    if last is None:
        source, line = None, None
    else:
        source, line = last.get("to"), last.get("_line")
        if source == target:
            return []
    message, hint, fixable = _history_words(source, target, last is None, data)
    can_fix = None if fixable else False
    return [Finding("history-mismatch", shown, line, None, message, hint, None, initiative.dir, can_fix)]


def _history_words(source: Any, target: Any, empty: bool, data: dict[str, Any]) -> tuple[str, str, bool]:
    """The message and hint of a history-mismatch finding, and whether `check --fix` repairs it."""
    if empty:
        message = f"has no transitions; the last one should lead to {target!r}"
    else:
        message = f"the last transition leads to {source!r} but lifecycle.state is {target!r}"
    if repair_allowed(source, target, data):
        return message, "run `planstate check --fix` to append a `repair` transition, or correct lifecycle.state", True
    message += f"; the lifecycle allows no move from {source or 'nothing'} to {target}"
    if target == "completed" and source is not None:
        message += " while phases are unfinished"
    hint = (
        "correct lifecycle.state by hand (or restore STATE.md from git), then make the move with its "
        "command (docs/lifecycle.md lists them)"
    )
    return message, hint, False


def resume_files(ctx: Context, state: FileRead, data: dict[str, Any]) -> list[Finding]:
    """Files named in resume_context.files_modified that do not exist (relative to the project folder)."""
    context = data.get("resume_context")
    items = context.get("files_modified") if isinstance(context, dict) else None
    if not isinstance(items, list):
        return []
    project = ctx.root.parent
    out: list[Finding] = []
    for index, item in enumerate(items):
        if isinstance(item, str) and item.strip() and not (project / Path(item)).exists():
            out.append(
                state.finding(
                    "missing-file",
                    ["resume_context", "files_modified", index],
                    f"{item} does not exist (paths are relative to the folder that holds .planning/)",
                    "verify the resume context: correct the path or `planstate unset resume_context.files_modified."
                    f"{index}`",
                )
            )
    return out


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)
