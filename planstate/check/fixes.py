"""The safe fixes: one repair per fixable code, computed in memory, then shown (`check --diff`) or written (`--fix`).

Each fixable code has one repair (`REPAIRS`), a function that changes a `Draft`: an initiative's
STATE.md and history.jsonl as bytes and data, in memory. `preview` computes the drafts and writes
nothing; `fix` computes them again under the workspace lock and writes what changed, so what
`--diff` shows is what `--fix` writes. Fixes never touch a hand edit, a valid value a person
chose, a file that does not parse, or a region whose records cannot be read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.check.findings import Finding
from planstate.core.clock import parse_datetime
from planstate.core.errors import ConflictError, LockTimeout, PlanstateError
from planstate.core.files import read_bytes, refuse_while_open
from planstate.model.kinds import FINISHED, State, phase_numbers

if TYPE_CHECKING:
    from planstate.render.result import FileChange
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.text.document import Document

REPAIR_REASON = "history.jsonl lagged lifecycle.state (planstate check --fix)"


class Draft:
    """An initiative's STATE.md and history.jsonl as the repairs change them, in memory."""

    def __init__(self, ctx: Context, initiative: Initiative, when: datetime) -> None:
        self.ctx = ctx
        self.initiative = initiative
        self.now = when
        self.state_before = read_bytes(initiative.state_path, ctx.root, ctx.root.parent)
        self.text = self.state_before  # STATE.md's bytes, until its front matter is read (`doc`)
        self.touched: set[str] = set()  # regions a resolved conflict touched: rendered even if they look hand-edited
        self.log_before: bytes | None = None  # history.jsonl's bytes, read by the history repair (None: no file)
        self.appended: list[dict[str, Any]] = []  # history entries to append
        self.removed: list[Path] = []  # temp files killed writes left, to delete
        self._doc: Document | None = None
        self._data: dict[str, Any] | None = None

    @property
    def doc(self) -> Document:
        """STATE.md as a document, parsed from `text` on first use."""
        if self._doc is None:
            from planstate.text.document import Document

            self._doc = Document.from_bytes(self.text, self.ctx.display(self.initiative.state_path))
        return self._doc

    @property
    def data(self) -> dict[str, Any]:
        """STATE.md's front matter as the repairs change it; a file changed since the check into one without a
        front matter mapping is refused (UsageError or ValidationError), as a transaction refuses it."""
        if self._data is None:
            from planstate.core.errors import ValidationError
            from planstate.model.validation import located, problems_for

            self.doc.require_front_matter()
            data = self.doc.data
            if not isinstance(data, dict):
                raise ValidationError(located(self.doc, problems_for("state", data)))
            self._data = data
        return self._data

    def settle(self) -> bool:
        """Put the repaired front matter into STATE.md's text, with a new `updated` as every write gives it; tell
        whether it changed."""
        from planstate.text.plaindata import same

        if self._data is None or same(self._data, self.doc.data):
            return False
        self._data["updated"] = self.now
        self.doc.update(self._data)
        return True

    def changes(self) -> list[FileChange]:
        """The files the repairs change, with their bytes before and after: STATE.md, then history.jsonl."""
        from planstate.render.result import FileChange, Removal
        from planstate.store import history

        out: list[FileChange] = []
        path = self.initiative.state_path
        after = self.doc.check_writable() if self._doc is not None else self.text
        if after != self.state_before:
            out.append(FileChange(path, self.ctx.display(path), self.state_before, after))
        if self.appended:
            log = self.initiative.history_path
            old = self.log_before or b""
            new = (old if not old or old.endswith(b"\n") else old + b"\n") + "".join(
                history.line(item) for item in self.appended
            ).encode("utf-8")
            out.append(FileChange(log, self.ctx.display(log), old, new))
        for path in self.removed:
            before = _current(self.ctx, path)
            if before is not None:
                out.append(Removal(path, self.ctx.display(path), before))
        return out

    def write(self) -> None:
        """Write what changed, the caller holding the workspace lock: STATE.md (validated, as every write is), then
        history.jsonl, so a crash between them leaves a history that lags, which `check` reports. Nothing is written
        (ConflictError) when either file changed since the draft read it."""
        from planstate.model.validation import check

        self.doc.require_front_matter()
        check(self.doc, "state")
        changes = [change for change in self.changes() if not change.removed]
        expected = {self.initiative.state_path: self.state_before, self.initiative.history_path: self.log_before}
        for change in changes:
            if _current(self.ctx, change.path) != expected[change.path]:
                raise ConflictError(
                    "changed on disk while planstate was updating it (an editor saving?); nothing was written, "
                    "run the command again",
                    file=change.shown,
                )
        _replace(self.ctx, [(change, expected[change.path]) for change in changes])
        from planstate.check.workspacerules import left_by_killed_writes

        still = set(left_by_killed_writes(self.initiative))  # their processes are gone: nobody writes them now
        for path in self.removed:
            if path in still:
                os.unlink(path)


# ---------------------------------------------------------------------------- the repair of each fixable code

Repair = Callable[[Draft], None]


def resolve_conflicts(draft: Draft) -> None:
    """conflict-marker: keep our side of git conflicts that lie only inside generated regions; the regions they
    touched are rendered again from the merged files (`render_regions`). Runs before the front matter is read."""
    from planstate.render.bodies import conflicts_for_render

    assert draft._doc is None, "conflicts are resolved in the text, before it is parsed"
    draft.text, draft.touched, _refused = conflicts_for_render(draft.text)


def record_structure(draft: Draft) -> None:
    """structure-mismatch: count every listed phase in structure.phases_total, and record that structure change in
    the history (a `repair` line that leaves the lifecycle where it is), as `planstate phase add` would have."""
    from planstate.store import history

    data = draft.data
    state = State(data)
    listed = len(state.phases)
    if not state.structure.exists() or state.structure.phases_total >= listed:
        return
    before = state.structure.phases_total
    state.structure.phases_total = listed
    path = draft.initiative.history_path
    if draft.log_before is None:
        draft.log_before = _current(draft.ctx, path)
    if draft.log_before is None:
        return  # no history to record it in (a file from an older tool): the snapshot alone is repaired
    entries = history.parse(draft.log_before, draft.ctx.display(path))[0]
    lifecycle = state.lifecycle.state
    reason = f"structure.phases_total {before} → {listed}: phases added by hand (planstate check --fix)"
    when = repair_time(entries, draft.now)
    draft.appended.append(history.entry(when, lifecycle, lifecycle, "repair", reason, draft.ctx.actor))


def point_position(draft: Draft) -> None:
    """phase-out-of-range: point position.phase at the current phase (`position_target`); its name follows."""
    from planstate.model.derived import recompute

    state = State(draft.data)
    state.position.phase = position_target(draft.data)
    recompute(state)


def recompute_derived(draft: Draft) -> None:
    """derived-mismatch, phase-name-mismatch: recompute every derived copy from its source."""
    from planstate.model.derived import recompute

    recompute(State(draft.data))


def repair_history(draft: Draft) -> None:
    """history-mismatch: append a `repair` transition from the history's last state to lifecycle.state, when the
    lifecycle allows that move (`repair_allowed`)."""
    from planstate.store import history

    draft.log_before = _current(draft.ctx, draft.initiative.history_path)
    shown = draft.ctx.display(draft.initiative.history_path)
    entries = history.parse(draft.log_before or b"", shown)[0]
    last = history.last_transition(entries)
    source = last.get("to") if last is not None else None
    target = State(draft.data).lifecycle.state
    if repair_allowed(source, target, draft.data):
        when = repair_time(entries, draft.now)
        draft.appended.append(history.entry(when, source, target, "repair", REPAIR_REASON, draft.ctx.actor))


def render_regions(draft: Draft) -> None:
    """stale-region: render the generated regions again. Every fix ends with it, since the other repairs change
    what the regions show. A STATE.md whose data did not change is left alone while it holds git conflicts that
    reach outside its regions, as `planstate render` leaves it; one whose data changed is rendered, as every write
    renders it."""
    from planstate.render.bodies import conflicts_for_render
    from planstate.render.regions import refresh

    if not draft.settle() and conflicts_for_render(draft.text).refused:
        return
    refresh(draft.ctx, draft.doc, draft.initiative, force=draft.touched, warn=False)


def remove_temp_files(draft: Draft) -> None:
    """stale-temp-file: delete the temp files killed writes left in the initiative's folders."""
    from planstate.check.workspacerules import left_by_killed_writes

    draft.removed = left_by_killed_writes(draft.initiative)


# Each fixable code's repair, in the order they apply: git conflicts before the front matter is read, then the
# front matter, then the history (to the repaired lifecycle), and the regions last, which show all of it.
REPAIRS: dict[str, Repair] = {
    "conflict-marker": resolve_conflicts,
    "structure-mismatch": record_structure,
    "phase-out-of-range": point_position,
    "derived-mismatch": recompute_derived,
    "phase-name-mismatch": recompute_derived,
    "history-mismatch": repair_history,
    "stale-temp-file": remove_temp_files,
    "stale-region": render_regions,
}


def repaired(ctx: Context, initiative: Initiative, codes: set[str]) -> Draft:
    """An initiative's files with the repairs of `codes` applied, in memory."""
    from planstate.core.clock import now

    draft = Draft(ctx, initiative, now())
    chosen = [repair for code, repair in REPAIRS.items() if code in codes or repair is render_regions]
    for repair in dict.fromkeys(chosen):
        repair(draft)
    return draft


def preview(ctx: Context, findings: list[Finding]) -> list[FileChange]:
    """What `fix` would change, file by file (nothing is written)."""
    changes: list[FileChange] = []
    for folder, codes in _fixable(findings).items():
        changes.extend(repaired(ctx, _initiative_at(ctx, folder), codes).changes())
    return changes


def fix(ctx: Context, findings: list[Finding]) -> list[str]:
    """Apply the safe fixes for `findings`, all or nothing per initiative, each under the workspace lock; return the
    errors of fixes that failed, or were left because a file they write is open in an editor."""
    failures: list[str] = []
    for folder, codes in _fixable(findings).items():
        try:
            initiative = _initiative_at(ctx, folder)
            _refuse_open(ctx, initiative)
            with ctx.locked():
                repaired(ctx, initiative, codes).write()
        except (LockTimeout, ConflictError):
            raise  # exit 3: nothing of this initiative was written, and running again may well work
        except PlanstateError as exc:
            failures.append(str(exc))
    return failures


def _refuse_open(ctx: Context, initiative: Initiative) -> None:
    """Refuse to fix files an editor has open (core/files.refuse_while_open, the rule `next` follows too)."""
    for path in (initiative.state_path, initiative.history_path):
        refuse_while_open(path, ctx.display(path), done="fixed", undone="the fix", then="check again")


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


def _current(ctx: Context, path: Path) -> bytes | None:
    """The bytes of a planning file on disk now (None when it is gone)."""
    return read_bytes(path, ctx.root, ctx.root.parent) if os.path.lexists(path) else None


def _replace(ctx: Context, writes: list[tuple[FileChange, bytes | None]]) -> None:
    """Write each change atomically over the bytes it expects; an error after a write names what was written."""
    from planstate.core.files import atomic_write, real_target, remove_stale_temp_files
    from planstate.store.transaction import written_in_part

    done: list[str] = []
    try:
        for change, expected in writes:
            target = change.path
            if os.path.lexists(target):
                target = real_target(target, ctx.root, ctx.root.parent)
            remove_stale_temp_files(target.parent)
            atomic_write(target, change.after, expected=expected, shown=change.shown, guard=ctx.lock.verify)
            done.append(change.shown)
    except PlanstateError as exc:
        if not done:
            raise
        raise written_in_part(exc, done, [change.shown for change, _ in writes[len(done) :]]) from None
