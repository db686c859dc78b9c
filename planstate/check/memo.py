"""The findings memo of `check` and `validate`: what a run found, answered again while none of its inputs changed.

The memo and its key are store/memo.py's: the stat identity of every file under `.planning/` (but
`.local/`) and of planstate's own files. A hit answers without reading a record, a row of the store or a
template. What a rule finds from the clock, from files outside `.planning/` or from this clone's git
config is never memoized (`FRESH`): the memo keeps the few inputs those rules need (the active sessions,
the files each STATE.md names as modified, the files checked) and runs the rules themselves again on
every call, so a session going stale as the clock moves, a deleted project file or a git driver installed
are seen at once. `check --fix` never uses the memo.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from planstate.core import errors

if TYPE_CHECKING:
    from planstate.check.checks import Checker
    from planstate.check.findings import Finding
    from planstate.check.reader import FileRead
    from planstate.check.validate import Validation
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.memo import Inputs
    from planstate.store.scan import Listing

# The codes whose rules read the clock (stale sessions), files outside .planning/ (the resume files), this clone's
# git config (the drivers) or which processes are alive (a temp file is left behind once its writer is gone):
# computed afresh on every call, never memoized.
FRESH = frozenset(
    {
        "stale-session",
        "missing-file",
        "merge-driver-missing",
        "diff-driver-missing",
        "driver-command-fragile",
        "stale-temp-file",
    }
)
ROWS_FROM = 100  # entries under `.planning/` from which a check keeps rows of its records (`worth_keeping`)
# The error classes a memoized validation may hold (any other: the validation is not memoized).
_ERRORS: dict[str, type[errors.PlanstateError]] = {
    cls.__name__: cls
    for cls in (errors.PlanstateError, errors.ParseError, errors.ValidationError, errors.UsageError, errors.EditError)
}


def run(checker: Checker, now: datetime | None, only: Initiative | None) -> list[Finding]:
    """What `checker.run(now, only=only)` finds, from the memo when none of the workspace's files changed since it
    was kept under the checker's options, with the fresh findings computed as of `now`; the checker's reads are
    then made only when asked for. Else a run from the store's rows (a workspace of `ROWS_FROM` entries or more:
    only the records that changed are read) or in full, whose findings are kept."""
    ctx = checker.ctx
    label = _label(checker, only)
    key, kept = _recall(ctx, label)
    checker.memo_key, checker.memo_label = key, label
    listings = key.listings if key is not None else {}
    checker.listings = listings  # the scan the key was taken from: whoever reads a folder after takes it from here
    if kept is not None:
        answer = _answered(checker, kept, now, only, listings)
        if answer is not None:
            return answer
    checker.reader.listed = dict(listings)  # the records' folders are not scanned again (it takes each once)
    found = checker.run_from_rows(now, only, listings) if key is not None and worth_rows(listings) else None
    if found is not None:
        checker.records = _unread(checker, only)[1]
    else:
        found = checker.run_in_full(now, only=only)
    checker.reader.listed = {}
    if key is not None:
        _remember(ctx, label, key, _check_memo(checker, found))
    return found


def worth_rows(listings: dict[str, Listing]) -> bool:
    """Whether a workspace whose folders list these entries has enough of them for a check from the store's rows
    (`Checker.run_from_rows`): below ROWS_FROM, reading its records costs less than the queries."""
    return sum(len(listing.names) for listing in listings.values()) >= ROWS_FROM


def temp_listed(listings: dict[str, Listing]) -> bool:
    """Whether a temp file's name is among the entries the memo's scan listed."""
    from planstate.core.files import any_temp_name

    return any_temp_name(listing.names for listing in listings.values())


def _label(checker: Checker, only: Initiative | None) -> str:
    """The memo of a checker's options: `check` for the default ones (a whole check), another name for others."""
    options = (checker.check_regions, checker.check_resume_files, checker.check_drivers)
    if options == (True, True, True) and only is None:
        return "check"
    from planstate.core.digests import blake2b_hex

    where = checker.ctx.cache_key(only.dir) if only is not None else "*"
    return "check-" + blake2b_hex(repr((options, where)).encode("utf-8"), 6)


def validated(ctx: Context, run: Callable[[Context, dict[str, Any]], Validation]) -> Validation:
    """What `run` (the validation of every file, given each folder's listing the memo's key was taken from) finds,
    from the memo when none of the workspace's files changed since it was kept."""
    from planstate.check.validate import Validation

    key, kept = _recall(ctx, "validate")
    if kept is not None:
        try:
            return Validation(int(kept["files"]), [_error(item) for item in kept["problems"]])
        except (KeyError, TypeError, ValueError):
            pass  # a memo of another shape: validate in full
    result = run(ctx, key.listings if key is not None else {})
    if key is not None:
        _remember(ctx, "validate", key, _validation_memo(result))
    return result


def _recall(ctx: Context, name: str) -> tuple[Inputs | None, Any]:
    """The key of the workspace's inputs now (None when it has none), and what the memo `name` holds under it
    (None when it holds nothing that can be trusted)."""
    from planstate.store import memo

    key = memo.inputs(ctx.root, name)
    if key is None:
        return None, None
    kept = memo.recall(ctx.store, name, key)
    return key, (None if kept is memo.MISS or not isinstance(kept, dict) else kept)


def _remember(ctx: Context, name: str, key: Inputs, data: dict[str, Any] | None) -> None:
    """Keep what a run found as the memo `name` under the key taken before the run (unless it cannot be kept)."""
    from planstate.store import memo

    if data is not None:
        memo.remember(ctx.store, ctx.root, name, key, data)


# ---------------------------------------------------------------------------- check


def _check_memo(checker: Checker, findings: list[Finding]) -> dict[str, Any]:
    """What a check's memo keeps: the findings that depend on the files alone, and the inputs of the others."""
    ctx = checker.ctx
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
        "findings": [finding_data(f) for f in findings if f.code not in FRESH],
        "active": active,
        "resume": resume,
        # Only the drivers' rule reads the names, and only when this clone lacks a driver: kept only when it asked.
        "names": checker.names() if checker.names_asked else None,
    }


def _answered(
    checker: Checker, kept: dict[str, Any], now: datetime | None, only: Initiative | None, listings: dict[str, Listing]
) -> list[Finding] | None:
    """A run's findings from its memo, the fresh ones computed now, and the checker set as after that run (its
    reads made when asked for); None for a memo of another shape. `listings` holds the entries of every folder."""
    from planstate.check import recordrules, staterules, workspacerules
    from planstate.check.findings import ordered
    from planstate.core.clock import now as clock_now

    ctx, reader = checker.ctx, checker.reader
    when = now or clock_now()
    try:
        found = [finding(item) for item in kept["findings"]]
        active: list[recordrules.ActiveSession] = []
        for folder, name, shown, record_id, started in kept["active"]:
            read = reader.unread(ctx.root / folder, name, shown, "session", {"id": record_id, "status": "active"})
            begun = datetime.fromisoformat(started) if started is not None else None
            active.append(recordrules.ActiveSession(read, record_id, begun))
        stale = (recordrules.stale(ctx, session, when, checker.stale_after) for session in active)
        found += [finding for finding in stale if finding is not None]
        if checker.check_resume_files:
            for key, shown, items in kept["resume"]:
                path = ctx.root / key
                data = {"resume_context": {"files_modified": list(items)}}
                read = reader.unread(path.parent, path.name, shown, "state", data)
                found += staterules.resume_files(ctx, read, data)
        if temp_listed(listings):
            for initiative in _checked(ctx, only):  # a temp file: is its writer still alive?
                found += workspacerules.temp_files(ctx, initiative)
        if checker.check_drivers:
            found += workspacerules.drivers(ctx, functools.partial(_kept_names, kept))
        files = int(kept["files"])
    except (KeyError, TypeError, ValueError, _NamesNotKept):
        return None
    checker.now, checker.files, checker.active = when, files, active
    checker.findings = ordered(found)
    checker.reads, checker.records = _unread(checker, only)
    return checker.findings


class _NamesNotKept(Exception):
    """The drivers' rule needs the names of the files checked, which the memo did not keep (the run that kept it
    did not need them: this clone had its drivers then): the check runs again, and keeps them."""


def _kept_names(kept: dict[str, Any]) -> list[str]:
    """The names of the files the run a memo kept read, for the drivers' rule (see `_NamesNotKept`)."""
    names = kept["names"]
    if not isinstance(names, list):
        raise _NamesNotKept
    return [str(name) for name in names]


def _unread(checker: Checker, only: Initiative | None) -> tuple[Later[Path, FileRead], Later[Path, list[FileRead]]]:
    """The files a run of `checker` reads, each read when first asked for: its STATE.md and history files by path,
    its record folders by folder."""
    from planstate.model.kinds import RECORD_FOLDERS

    ctx, reader = checker.ctx, checker.reader
    reads: dict[Path, Callable[[], FileRead]] = {}
    records: dict[Path, Callable[[], list[FileRead]]] = {}

    def folder(path: Path, kind: str) -> list[FileRead]:
        found = reader.records(path, kind, checker.judge)
        ctx.save_cache()  # what reading it noted (rows renewed, files read) serves the next process
        return found

    for initiative in _checked(ctx, only):
        reads[initiative.state_path] = functools.partial(reader.file, initiative.state_path, "state")
        if initiative.history_path.exists():
            reads[initiative.history_path] = functools.partial(reader.file, initiative.history_path, "history")
        for kind in RECORD_FOLDERS:
            for path in (initiative.folder(kind), initiative.archive(kind)):
                records[path] = functools.partial(folder, path, kind)
    return Later(reads), Later(records)


def _checked(ctx: Context, only: Initiative | None) -> list[Initiative]:
    """The initiatives a run checks: every one, or `only`."""
    from planstate.store.initiatives import discover

    return [initiative for initiative in discover(ctx.root) if only is None or initiative.dir == only.dir]


K = TypeVar("K")
V = TypeVar("V")


class Later(dict[K, V]):
    """A mapping whose values are made when first asked for (`[]`, `get`, `in`); iterating it gives only those
    made so far."""

    def __init__(self, makers: dict[K, Callable[[], V]]) -> None:
        super().__init__()
        self._makers = makers

    def __missing__(self, key: K) -> V:
        maker = self._makers.pop(key, None)
        if maker is None:
            raise KeyError(key)
        value = self[key] = maker()
        return value

    def get(self, key: K, default: Any = None) -> Any:
        """The value of `key` (made now if it was not yet), else `default`."""
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self._makers


def finding_data(finding: Finding) -> list[Any]:
    """A finding as the memo keeps it."""
    f = finding
    initiative = str(f.initiative) if f.initiative is not None else None
    return [f.code, f.file, f.line, f.column, f.message, f.hint, f.field, initiative, f.can_fix, f.stable]


def finding(item: list[Any]) -> Finding:
    """A finding the memo kept."""
    from planstate.check.findings import Finding

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
