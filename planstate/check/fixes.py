"""The safe fixes of `check --fix`, and what `check --diff` shows of them.

They re-render stale regions, recompute derived copies, point a position that is no phase at the
current phase, repair a history that lags the lifecycle, and resolve git conflicts confined to
regions. `preview` says what `fix` would change; `fix` applies the fixes through transactions.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.check.findings import Finding
from planstate.core.clock import parse_datetime
from planstate.core.errors import ConflictError, LockTimeout, PlanstateError
from planstate.model.kinds import FINISHED, State, phase_numbers

if TYPE_CHECKING:
    from planstate.render.result import FileChange
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

REPAIR_REASON = "history.jsonl lagged lifecycle.state (planstate check --fix)"


def preview(ctx: Context, findings: list[Finding]) -> list[FileChange]:
    """What `fix` would change, file by file (nothing is written)."""
    from planstate.core.clock import now
    from planstate.model.derived import recompute
    from planstate.model.kinds import State
    from planstate.render import regions
    from planstate.render.result import FileChange
    from planstate.store import history
    from planstate.text.document import Document

    changes: list[FileChange] = []
    for folder, codes in _fixable(findings).items():
        initiative = _initiative_at(ctx, folder)
        path = initiative.state_path
        before = path.read_bytes()
        text, touched = before, set[str]()
        if "conflict-marker" in codes:
            resolved = regions.resolve_region_conflicts(before)
            if resolved is not None:
                text, touched = resolved
        doc = Document.from_bytes(text, ctx.display(path))
        data = doc.data
        if codes & {"derived-mismatch", "phase-name-mismatch", "phase-out-of-range"}:
            if "phase-out-of-range" in codes:
                data["position"]["phase"] = position_target(data)
            recompute(State(data))
            if data != doc.data:
                data["updated"] = now()
                doc.update(data)
        regions.refresh(ctx, doc, initiative, force=touched, warn=False)
        after = doc.to_bytes()
        if after != before:
            changes.append(FileChange(path, ctx.display(path), before, after))
        if "history-mismatch" in codes:
            log = initiative.history_path
            old = log.read_bytes() if log.exists() else b""
            entries = history.parse(old, ctx.display(log))[0]
            source = entries[-1].get("to") if entries else None
            target = data["lifecycle"]["state"]
            if repair_allowed(source, target, data):
                when = repair_time(entries, now())
                item = history.entry(when, source, target, "repair", REPAIR_REASON, ctx.actor)
                new = (old if not old or old.endswith(b"\n") else old + b"\n") + history.line(item).encode("utf-8")
                changes.append(FileChange(log, ctx.display(log), old, new))
    return changes


def fix(ctx: Context, findings: list[Finding]) -> list[str]:
    """Apply the safe fixes for `findings` through transactions; return the errors of fixes that failed.

    Writes made here do not warn about regions they leave unrendered: the check that follows reports them.
    """
    from planstate.core.clock import now
    from planstate.model.derived import recompute
    from planstate.render import regions
    from planstate.render.result import render_initiative
    from planstate.store import history

    failures: list[str] = []
    with regions.quiet():
        for folder, codes in _fixable(findings).items():
            try:
                initiative = _initiative_at(ctx, folder)
                if "conflict-marker" in codes:
                    render_initiative(ctx, initiative)  # resolve the conflict first: the data fixes need a clean file
                if codes & {"derived-mismatch", "phase-name-mismatch", "phase-out-of-range", "history-mismatch"}:
                    with ctx.transaction() as tx:
                        state = tx.state(initiative)
                        if "phase-out-of-range" in codes:
                            tx.repair(initiative)
                            state.position.phase = position_target(state.to_data())
                        if codes & {"derived-mismatch", "phase-name-mismatch", "phase-out-of-range"}:
                            recompute(state)
                        if "history-mismatch" in codes:
                            shown = ctx.display(initiative.history_path)
                            entries = history.read(initiative.history_path, shown)[0]
                            source = entries[-1].get("to") if entries else None
                            target = state.lifecycle.state
                            if repair_allowed(source, target, state.to_data()):
                                when = repair_time(entries, now())
                                item = history.entry(when, source, target, "repair", REPAIR_REASON, ctx.actor)
                                tx.log(initiative, item)
                render_initiative(ctx, initiative)  # a data fix above re-rendered already; this catches record regions
            except (LockTimeout, ConflictError):
                raise  # exit 3: nothing of this initiative was written, and running again may well work
            except PlanstateError as exc:
                failures.append(str(exc))
    return failures


# ---------------------------------------------------------------------------- what the rules ask of the fixes


def repair_allowed(source: Any, target: Any, data: dict[str, Any]) -> bool:
    """Whether `check --fix` may append a `repair` history line from `source` (the history's last state; None
    when it has none) to `target` (lifecycle.state): a move the lifecycle table allows, under the same rules
    as its command (completing needs every phase finished); from nothing, only to `active`, as `init` does."""
    from planstate.ops.lifecycle import TABLE

    if source == target:
        return False
    if source is None:
        return bool(target == "active")
    if not any(t.source == source and t.target == target for t in TABLE):
        return False
    return target != "completed" or _all_finished(data)


def _all_finished(data: dict[str, Any]) -> bool:
    """Tell whether every phase is completed or skipped."""
    phases = [p for p in data.get("phases") or [] if isinstance(p, dict)]
    return all(p.get("status") in FINISHED for p in phases)


def repair_time(entries: list[dict[str, Any]], current: datetime) -> datetime:
    """When a repair line happens: now, or the last line's time when that is later (another machine's clock ran
    ahead), so the repair sorts last as readers order lines by time."""
    last = parse_datetime(entries[-1].get("at")) if entries else None
    return last if last is not None and last > current else current


def position_target(data: dict[str, Any]) -> int:
    """The phase an out-of-range position belongs on: the active phase, else the first unfinished one, else the
    last (where completing the last phase leaves it)."""
    numbers = phase_numbers(State(data))
    numbered = list(zip(numbers, _statuses(data), strict=False))
    active = [n for n, status in numbered if status == "active"]
    unfinished = [n for n, status in numbered if status not in FINISHED]
    return (active or unfinished or [numbers[-1] if numbers else numbers.start])[0]


def _statuses(data: dict[str, Any]) -> list[Any]:
    """The status of each phase, in order (None for a phase that is not a mapping)."""
    return [p.get("status") if isinstance(p, dict) else None for p in data.get("phases") or []]


# ---------------------------------------------------------------------------- helpers


def _fixable(findings: Iterable[Finding]) -> dict[Path, set[str]]:
    """The initiatives (by folder) with fixable findings, and the codes to fix in each."""
    out: dict[Path, set[str]] = {}
    for finding in findings:
        if finding.fixable and finding.initiative is not None:
            out.setdefault(finding.initiative, set()).add(finding.code)
    return out


def _initiative_at(ctx: Context, folder: Path) -> Initiative:
    from planstate.store.initiatives import discover

    for initiative in discover(ctx.root):
        if initiative.dir == folder:
            return initiative
    raise PlanstateError(f"initiative folder {ctx.display(folder)} is gone")
