"""Rules about one planning file on its own: reading, parsing, git conflicts, schema values and unknown keys.

These findings depend only on a file's bytes, so a check computes them once per content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planstate.check.findings import Finding
from planstate.check.fixes import position_target
from planstate.check.reader import CLEAN, FileRead
from planstate.core.errors import ParseError, PlanstateError
from planstate.core.suggest import closest
from planstate.model.kinds import KINDS, State, phase_numbers
from planstate.model.validation import unknown_keys
from planstate.text.conflicts import Conflict, describe
from planstate.text.paths import shown_path

if TYPE_CHECKING:
    from planstate.store.context import Context


def judge(ctx: Context, found: FileRead) -> None:
    """Run these rules on a record read (once per content); note a clean one in the store (under `CLEAN`, their
    version), so that the next check or validate need not read it."""
    if found.findings is None:
        found.findings = file_findings(found)
    if not found.findings:
        ctx.mark_clean(found.path, found.identity, CLEAN)


def file_findings(found: FileRead) -> list[Finding]:
    """What is wrong with a file on its own; a file with git conflicts gets no parse finding (the conflict is the
    cause, and its finding says what to do)."""
    if found.read_failed and found.error is not None:
        return [Finding.from_error("parse-error", found.error, _read_hint(found))]
    out = [conflict(found, block) for block in found.conflicts]
    if found.kind == "history":
        return out if found.conflicts else history_lines(found)
    if found.error is not None:
        return out if found.conflicts else [*out, _parse_error(found.error)]
    return [*out, *schema(found), *unknown(found)]


def conflict(found: FileRead, block: Conflict) -> Finding:
    """A git conflict block: in STATE.md, fixable when every conflict of the file lies inside regions; one that
    planstate's merge driver wrote about a field says which, and how to settle it."""
    first, _last, name = block
    confined = False
    if found.kind == "state" and found.raw is not None and name is None:
        from planstate.render.bodies import resolve_region_conflicts

        confined = resolve_region_conflicts(found.raw) is not None
    message, hint = _conflict_words(found, block, confined)
    return Finding(
        "conflict-marker",
        found.shown,
        first,
        None,
        message,
        hint,
        field=name,
        initiative=found.path.parent if confined else None,
        can_fix=True if confined else None,
    )


def _conflict_words(found: FileRead, block: Conflict, confined: bool) -> tuple[str, str]:
    """The message and hint of a conflict-marker finding."""
    name = block.field
    message = describe(block)
    if name is not None:
        # STATE.md's regions show the field: rendering them from the value kept is the safe fix that follows
        then = "`planstate check`"
        if found.kind == "state":
            then = "`planstate check --fix` (it renders the regions again)"
        hint = f"keep one side's lines for {name}, delete the three marker lines, run {then}, then "
        return message, hint + f"`git add {found.shown}`"
    if confined:
        message += ", only inside generated regions"
        hint = "run `planstate check --fix` (or `planstate render`): the regions are rendered again from the "
        return message, hint + "merged files"
    return message, "keep the right side, delete the <<<<<<<, ======= and >>>>>>> lines, then run `planstate check`"


def history_lines(found: FileRead) -> list[Finding]:
    """history.jsonl lines that do not parse or are no valid entry."""
    hint = "fix or remove that line; lines are only ever appended"
    problems: list[PlanstateError] = found.data or []
    return [
        Finding.from_error("parse-error" if isinstance(problem, ParseError) else "schema-error", problem, hint)
        for problem in problems
    ]


def _parse_error(error: PlanstateError) -> Finding:
    return Finding.from_error("parse-error", error, "fix the YAML at that line; docs/format.md describes the file")


def schema(found: FileRead) -> list[Finding]:
    """Values that do not match the format; in STATE.md, a position.phase that is no phase has its own code."""
    if not found.problems:
        return []
    from planstate.model.validation import located

    return [_schema_finding(found, error) for error in located(found.doc(), found.problems)]


def _schema_finding(found: FileRead, error: PlanstateError) -> Finding:
    if found.kind == "state" and error.field == "position.phase" and out_of_range(found.data):
        target = position_target(found.data)
        hint = f"`planstate check --fix` points it at phase {target}, the current phase"
        where = found.path.parent  # the initiative folder, whose fix repairs it
        shown = error.file or found.shown
        return Finding("phase-out-of-range", shown, error.line, error.column, error.message, hint, error.field, where)
    hint = f"correct the value; `planstate schema {found.kind}` lists the fields"
    return Finding.from_error("schema-error", error, hint)


def unknown(found: FileRead) -> list[Finding]:
    """Keys the format does not define (kept, but maybe a typo)."""
    if found.mapping is None:
        return []
    out: list[Finding] = []
    free: dict[tuple[Any, ...], list[str]] = {}  # per mapping: the fields it lacks, made once however many keys
    for segments, model in unknown_keys(KINDS[found.kind], found.data):
        name = shown_path(segments, found.data)
        message = f"{name} is not a field of the format; planstate keeps it"
        parent = segments[:-1]
        if parent not in free:
            present = _present(found.data, parent)
            free[parent] = [f for f in model.fields if f not in present]
        typo = closest(str(segments[-1]), free[parent])
        if typo is not None:
            hint = f"did you mean {shown_path((*segments[:-1], typo), found.data)}? rename it if it is a typo"
        else:
            hint = f"check the spelling against `planstate schema {found.kind}`; remove it if it is a typo"
        out.append(found.finding("unknown-key", list(segments), message, hint))
    return out


def _present(data: Any, path: tuple[Any, ...]) -> set[str]:
    """The keys of the mapping at `path` in `data` (none when there is no mapping there)."""
    for segment in path:
        data = data[segment] if isinstance(data, dict | list) else None
    return {str(k) for k in data} if isinstance(data, dict) else set()


def out_of_range(data: Any) -> bool:
    """Tell whether position.phase is an integer outside the phase numbers."""
    position = data.get("position") if isinstance(data, dict) else None
    number = position.get("phase") if isinstance(position, dict) else None
    if not isinstance(number, int) or isinstance(number, bool):
        return False
    try:
        return number not in phase_numbers(State(data))
    except (TypeError, ValueError):
        return False


def _read_hint(found: FileRead) -> str:
    """How to fix a file that cannot be read."""
    if found.kind == "state" and found.error is not None and "not found" in found.error.message:
        return "restore it (`git checkout -- FILE`), or run `planstate init` to start a new workspace"
    return "make it a readable regular file inside .planning/, or remove it"
