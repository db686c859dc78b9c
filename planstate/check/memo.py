"""The findings memo of `check` and `validate`: what a run found, answered again while none of its inputs changed.

The memo and its key are store/memo.py's: the stat identity of every file under `.planning/` (but
`.local/`) and of planstate's own files. A hit answers without reading a record, a cache row or a
template. What a rule finds from the clock, from files outside `.planning/` or from this clone's git
config is never memoized (`FRESH`): the memo keeps the few inputs those rules need (the active sessions,
the files each STATE.md names as modified, the files checked) and runs the rules themselves again on
every call, so a session going stale as the clock moves, a deleted project file or a git driver installed
are seen at once. `check --fix` never uses the memo.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.check.findings import Finding, ordered
from planstate.core import errors

if TYPE_CHECKING:
    from planstate.check.checks import Checker
    from planstate.check.validate import Validation
    from planstate.store.context import Context
    from planstate.store.memo import Inputs

# The codes whose rules read the clock (stale sessions), files outside .planning/ (the resume files) or this
# clone's git config (the drivers): computed afresh on every call, never memoized.
FRESH = frozenset({"stale-session", "missing-file", "merge-driver-missing", "diff-driver-missing"})
# The error classes a memoized validation may hold (any other: the validation is not memoized).
_ERRORS: dict[str, type[errors.PlanstateError]] = {
    cls.__name__: cls
    for cls in (errors.PlanstateError, errors.ParseError, errors.ValidationError, errors.UsageError, errors.EditError)
}


def checked(ctx: Context, stale_after: float, now: datetime | None = None) -> tuple[int, list[Finding]]:
    """What `checks.run` finds (how many files were checked, and the findings, sorted), from the memo when none of
    the workspace's files changed since it was kept, with the clock's findings computed as of `now`."""
    from planstate.check.checks import Checker

    key, kept = _recall(ctx, "check")
    if kept is not None:
        answer = _answered(ctx, kept, stale_after, now)
        if answer is not None:
            return answer
    checker = Checker(ctx, stale_after)
    findings = checker.run(now)
    if key is not None:
        _remember(ctx, "check", key, lambda: _check_memo(ctx, checker, findings))
    return checker.files, findings


def validated(ctx: Context, run: Callable[[Context], Validation]) -> Validation:
    """What `run` (the validation of every file) finds, from the memo when none of the workspace's files changed
    since it was kept."""
    from planstate.check.validate import Validation

    key, kept = _recall(ctx, "validate")
    if kept is not None:
        try:
            return Validation(int(kept["files"]), [_error(item) for item in kept["problems"]])
        except (KeyError, TypeError, ValueError):
            pass  # a memo of another shape: validate in full
    result = run(ctx)
    if key is not None:
        _remember(ctx, "validate", key, lambda: _validation_memo(result))
    return result


def _recall(ctx: Context, name: str) -> tuple[Inputs | None, Any]:
    """The key of the workspace's inputs now (None when it has none), and what the memo `name` holds under it
    (None when it holds nothing that can be trusted)."""
    from planstate.store import memo

    key = memo.inputs(ctx.root, name)
    if key is None:
        return None, None
    kept = memo.recall(ctx.root, name, key)
    return key, (None if kept is memo.MISS or not isinstance(kept, dict) else kept)


def _remember(ctx: Context, name: str, key: Inputs, value: Callable[[], dict[str, Any] | None]) -> None:
    """Keep what a run found as the memo `name` under the key taken before the run (when it can be kept)."""
    from planstate.store import memo

    data = value()
    if data is not None:
        memo.remember(ctx.root, name, key, data)


# ---------------------------------------------------------------------------- check


def _check_memo(ctx: Context, checker: Checker, findings: list[Finding]) -> dict[str, Any]:
    """What a check's memo keeps: the findings that depend on the files alone, and the inputs of the others."""
    resume: list[list[Any]] = []
    for path, read in checker.reads.items():
        data = read.mapping if read.kind == "state" and read.valid else None
        if data is None:
            continue  # the rules of a valid STATE.md (the resume files among them) did not run on it
        context = data.get("resume_context")
        items = context.get("files_modified") if isinstance(context, dict) else None
        if isinstance(items, list):
            named = [item if isinstance(item, str) else None for item in items]  # the rule skips the others
            resume.append([ctx.cache_key(path), read.shown, named])
    active = [
        [ctx.cache_key(s.read.folder), s.read.name, s.read.shown, s.id, s.started.isoformat() if s.started else None]
        for s in checker.active
    ]
    return {
        "files": checker.files,
        "findings": [_finding_data(f) for f in findings if f.code not in FRESH],
        "active": active,
        "resume": resume,
        "names": checker.names(),
    }


def _answered(
    ctx: Context, kept: dict[str, Any], stale_after: float, now: datetime | None
) -> tuple[int, list[Finding]] | None:
    """A check's files and findings from its memo, the fresh ones computed now; None for a memo of another shape."""
    from planstate.check import recordrules, staterules, workspacerules
    from planstate.check.reader import Reader
    from planstate.core.clock import now as clock_now

    when = now or clock_now()
    reader = Reader(ctx)
    try:
        found = [_finding(item) for item in kept["findings"]]
        for folder, name, shown, record_id, started in kept["active"]:
            read = reader.unread(ctx.root / folder, name, shown, "session", {"id": record_id, "status": "active"})
            begun = datetime.fromisoformat(started) if started is not None else None
            stale = recordrules.stale(ctx, recordrules.ActiveSession(read, record_id, begun), when, stale_after)
            found += [stale] if stale is not None else []
        for key, shown, items in kept["resume"]:
            path = ctx.root / key
            data = {"resume_context": {"files_modified": list(items)}}
            found += staterules.resume_files(ctx, reader.unread(path.parent, path.name, shown, "state", data), data)
        found += workspacerules.drivers(ctx, [str(name) for name in kept["names"]])
        return int(kept["files"]), ordered(found)
    except (KeyError, TypeError, ValueError):
        return None


def _finding_data(finding: Finding) -> list[Any]:
    """A finding as the memo keeps it."""
    f = finding
    initiative = str(f.initiative) if f.initiative is not None else None
    return [f.code, f.file, f.line, f.column, f.message, f.hint, f.field, initiative, f.can_fix, f.stable]


def _finding(item: list[Any]) -> Finding:
    """A finding the memo kept."""
    code, file, line, column, message, hint, field, initiative, can_fix, stable = item
    where = Path(initiative) if initiative is not None else None
    return Finding(code, file, line, column, message, hint, field, where, can_fix, stable)


# ---------------------------------------------------------------------------- validate


def _validation_memo(result: Validation) -> dict[str, Any] | None:
    """What a validation's memo keeps: how many files, and each problem; None when one cannot be kept."""
    problems = [_error_data(problem) for problem in result.problems]
    if any(item is None for item in problems):
        return None
    return {"files": result.files, "problems": problems}


def _error_data(error: errors.PlanstateError) -> list[Any] | None:
    """A problem as the memo keeps it (its class, message, where, and the problems a ValidationError holds)."""
    name = type(error).__name__
    if _ERRORS.get(name) is not type(error):
        return None
    inner: list[Any] = []
    if isinstance(error, errors.ValidationError):
        inner = [_error_data(problem) for problem in error.problems]
        if any(item is None for item in inner):
            return None
    argument = getattr(error, "argument", None)
    return [name, error.message, error.file, error.line, error.column, error.field, argument, inner]


def _error(item: list[Any]) -> errors.PlanstateError:
    """A problem the memo kept, of its class."""
    name, message, file, line, column, field, argument, inner = item
    cls = _ERRORS[name]
    if cls is errors.ValidationError:
        return errors.ValidationError([_error(problem) for problem in inner])
    if cls is errors.UsageError:
        return errors.UsageError(message, argument=argument, file=file, line=line, column=column, field=field)
    return cls(message, file=file, line=line, column=column, field=field)
