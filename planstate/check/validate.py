"""`planstate validate`: every file of the workspace against the schema and the workspace-wide rules."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.core.errors import PlanstateError
from planstate.model.validation import located, problems_for
from planstate.store import history

if TYPE_CHECKING:
    from planstate.check.reader import FileRead
    from planstate.store.context import Context


class Validation(NamedTuple):
    """How many files were validated and every problem found (each one line with its file, line and column)."""

    files: int
    problems: list[PlanstateError]

    def to_dict(self) -> dict[str, Any]:
        """Return the result as JSON-ready data: the files checked and each problem as a finding (an error's
        type, message and where it is)."""
        return {"files_checked": self.files, "findings": [p.to_dict() for p in self.problems]}


def validate(ctx: Context) -> Validation:
    """Validate every file of every initiative, then the rules across initiatives; from the findings memo when no
    file changed since it was kept (check/memo.py)."""
    from planstate.check.memo import validated

    return validated(ctx, validate_files)


def validate_files(ctx: Context, listed: dict[str, Any] | None = None) -> Validation:
    """Validate every file of every initiative, then the rules across initiatives. The records are taken as a
    check takes them (check/reader.py): one whose store's row says the per-file rules found nothing in its bytes
    has no schema problem and is not read; the others are validated one by one. `listed` holds the folders' entries
    and their identities when they were just taken (see `Reader.listed`)."""
    from planstate.check.reader import Reader
    from planstate.model.kinds import RECORD_FOLDERS
    from planstate.store.initiatives import discover

    def judge(read: FileRead) -> None:  # the rules are imported only when a record has to be read, and then once
        _file_rules()(ctx, read)

    problems: list[PlanstateError] = []
    reader = Reader(ctx)
    reader.listed = dict(listed or {})
    reader.begin()
    files = 0
    for initiative in discover(ctx.root):
        files += 1
        problems += _problems(ctx, "state", initiative.state_path)
        for kind in RECORD_FOLDERS:
            for folder in (initiative.folder(kind), initiative.archive(kind)):
                reads = reader.records(folder, kind, judge)
                files += len(reads)
                for read in reads:
                    if not read.partial:  # a partial one is clean: it has no schema problem
                        problems += _problems(ctx, kind, read.path)
        if initiative.history_path.exists():
            files += 1
            problems += _problems(ctx, "history", initiative.history_path)
    problems.extend(ctx.initiative_problems())
    ctx.save_cache()
    return Validation(files, problems)


@functools.cache
def _file_rules() -> Callable[[Context, FileRead], None]:
    """filerules.judge, imported once: an import inside a function costs microseconds on each of 17,000 calls."""
    from planstate.check.filerules import judge

    return judge


def _problems(ctx: Context, kind: str, path: Path) -> list[PlanstateError]:
    """The problems of one file, each located in a round-trip parse of the file (which gives the same data)."""
    try:
        if kind == "history":
            return history.read(path, ctx.display(path), ctx.root)[1]
        if not problems_for(kind, ctx.cached_data(path)):  # through the store: a parse only per new content
            return []
        doc = ctx.read_document(path)
        doc.require_front_matter()
        return located(doc, problems_for(kind, doc.data))
    except PlanstateError as exc:
        return [exc]
