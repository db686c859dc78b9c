"""Archiving records: finished decisions, blockers and sessions older than a date move to their kind's `archive/`.

A record is archived when it is finished (a decision superseded or rejected, a blocker resolved, a
session ended or crashed) and finished before the date given: its `date`, `resolved` (else
`identified`) or `ended` (else `started`). Open blockers, active sessions and accepted or proposed
decisions never move. Each record moves unchanged, in one rename, to `<kind folder>/archive/` under its
own file name, in one transaction that also renders the record regions again; reads (`show`, `list
--all`), check, validate, diff and the merge driver know the archive folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.clock import parse_datetime
from planstate.core.errors import PlanstateError, UsageError
from planstate.model.validation import problems_for
from planstate.ops import records
from planstate.store import recordfiles

if TYPE_CHECKING:
    from planstate.store.context import Context

# What a finished record of each kind is: the statuses that may be archived, and the fields (first one set wins)
# that date when it finished. Tasks are not archived: a task's dependants name it, and `ready` reads the live folder.
FINISHED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "decision": (("superseded", "rejected"), ("date",)),
    "blocker": (("resolved",), ("resolved", "identified")),
    "session": (("ended", "crashed"), ("ended", "started")),
}


@dataclass
class Moved:
    """One record archived (or, in a dry run, to be archived): its kind, id, and file before and after."""

    kind: str
    id: str
    path: str  # as shown, relative to the project folder
    to: str

    def to_dict(self) -> dict[str, Any]:
        """The move as JSON-ready data."""
        return {"kind": self.kind, "id": self.id, "path": self.path, "to": self.to}


@dataclass
class Archived:
    """What `records archive` moved (with `dry_run`, would move), and the record files it could not read."""

    before: datetime
    dry_run: bool = False
    moved: list[Moved] = field(default_factory=list)
    problems: list[PlanstateError] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.moved)

    def counts(self) -> dict[str, int]:
        """How many records of each kind moved."""
        return {kind: sum(1 for m in self.moved if m.kind == kind) for kind in FINISHED}

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        from planstate.text.yamltext import format_datetime

        return {
            "before": format_datetime(self.before),
            "dry_run": self.dry_run,
            "counts": self.counts(),
            "archived": [m.to_dict() for m in self.moved],
        }


class RecordsAPI:
    """What applies to every kind of record: `ws.records.archive(before=...)`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def archive(self, *, before: str | date | datetime, kind: str | None = None, dry_run: bool = False) -> Archived:
        """Move the target initiative's finished records dated before `before` (a date, a timestamp, or a duration
        back from now such as `90d`) into their kind's `archive/` folder, in one transaction; only those of `kind`
        when given. With `dry_run`, only say what would move."""
        from planstate.core.clock import now

        ctx = self.ctx
        if kind is not None and kind not in FINISHED:
            raise UsageError(f"kind {kind!r} is not one of: {', '.join(FINISHED)}", argument="kind")
        if before is None or (isinstance(before, str) and not before.strip()):
            raise UsageError("give the date before which finished records are archived", argument="before")
        cutoff = records.since(before, now(), "before")
        assert cutoff is not None  # `before` is given
        result = Archived(cutoff, dry_run)
        kinds = [kind] if kind is not None else list(FINISHED)
        if dry_run:
            for each in kinds:
                result.moved += [moved for _path, moved in self._finished(each, cutoff, result.problems)]
            ctx.save_cache()
            return result
        records.refuse_read_only(ctx, ctx.target)
        with ctx.transaction() as tx:
            for each in kinds:
                for path, moved in self._finished(each, cutoff, result.problems):
                    tx.move(each, path, ctx.target.archive(each) / path.name)
                    result.moved.append(moved)
        return result

    def _finished(self, kind: str, cutoff: datetime, problems: list[PlanstateError]) -> list[tuple[Path, Moved]]:
        """The records of `kind` to archive, each with its file: valid, finished before `cutoff`, not symlinks;
        oldest first."""
        ctx = self.ctx
        statuses, dated = FINISHED[kind]
        found, unreadable = recordfiles.load_all(ctx, ctx.target, kind)
        problems += unreadable
        archive = ctx.target.archive(kind)
        out: list[tuple[str, Path, Moved]] = []
        for record in found:
            if record.data.get("status") not in statuses:
                continue
            when = next((record.data[name] for name in dated if record.data.get(name) is not None), None)
            if not _before(when, cutoff):
                continue
            left = _left_in_place(kind, record)
            if left is not None:  # finished and old enough, yet not safe to move: say so instead of passing it by
                problems.append(PlanstateError(left, file=ctx.display(record.path)))
                continue
            moved = Moved(kind, record.id, ctx.display(record.path), ctx.display(archive / record.path.name))
            out.append((str(parse_datetime(when)), record.path, moved))
        out.sort(key=lambda item: (item[0], item[1].name))
        return [(path, moved) for _when, path, moved in out]


def _left_in_place(kind: str, record: recordfiles.Record) -> str | None:
    """Why a finished record old enough to archive stays where it is, or None when it may move."""
    if problems_for(kind, record.data):
        return "does not validate, so it stays in place (see `planstate check`)"
    if record.path.is_symlink():
        return "is a symbolic link, so it stays in place (archiving moves only the files it owns)"
    return None


def _before(value: Any, cutoff: datetime) -> bool:
    """Whether a record's date or timestamp lies wholly before `cutoff`: a date counts as its whole day, so a
    decision of 2026-11-19 is before 2026-11-20 but not before noon of 2026-11-19."""
    if isinstance(value, str) and len(value.strip()) == 10:  # a date, as the store gives it back
        try:
            value = date.fromisoformat(value.strip())
        except ValueError:
            return False
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC) + timedelta(days=1) <= cutoff
    when = parse_datetime(value) if value is not None else None
    return when is not None and when < cutoff
