"""What each generated region of STATE.md is rendered from: plain JSON-ready data built from the state and,
for the record regions, the initiative's blockers, decisions and sessions (read through the store).

Every value here is a pure function of the files: no wall clock, so rendering twice gives the same text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from planstate.model.derived import percent_of, phase_duration, progress_bar
from planstate.model.kinds import FINISHED, State, phase_at, phase_numbers, to_json
from planstate.text.paths import format_path

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

DAY = 86400  # seconds an unfinished phase is drawn with when no phase has completed yet
# The one home of how many records each record region shows (docs/format.md, "Generated regions"); the context holds
# them all, and the built-in templates end with a line counting the rest.
LIMITS = {"blockers": 10, "decisions": 10, "sessions": 5}
_ORDER = attrgetter("order", "id")  # how a region orders its records (in C: a region may sort 10,000)
# What each record region shows: (its kind, the status it leaves out, newest first), in the order of `_ORDER`.
SELECTIONS = {
    "blockers": ("blocker", "resolved", False),
    "decisions": ("decision", None, True),
    "sessions": ("session", None, True),
}


# Reads the records of one kind for the regions: (JSON-ready items of the valid records, each with its `link`;
# why each of the other record files of that kind could not be used).
Loader = Callable[[str], tuple[Sequence[dict[str, Any]], list[str]]]


class Row(NamedTuple):
    """One valid record as a region orders it, and how to get its item (loaded on first use)."""

    order: str  # the field the region orders by, as text
    id: str
    status: str | None
    fingerprint: str  # recordfiles.item_fingerprint of its item
    item: Callable[[], dict[str, Any]]


class Records(Sequence[dict[str, Any]]):
    """The valid records of one kind as a region shows them: a sequence of items, each read only when a template
    uses it, so a region showing the newest ten of 10,000 decisions reads ten. Its length, order and fingerprint
    (what the region's input hash takes) come from summaries (recordfiles.summaries). A head (`length` given)
    knows only its first rows and how many there are: what a built-in template shows (store/folders.head)."""

    def __init__(
        self, rows: Sequence[Any], load: Callable[[Any], dict[str, Any]] | None = None, length: int | None = None
    ) -> None:
        self._rows = rows  # Rows, or any rows with their `order`, `id`, `status` and `fingerprint` and a `load`
        self._load = load  # the item of a row (a Row's own `item` when None): no callable made per row
        self._length = len(rows) if length is None else length
        self._items: dict[int, dict[str, Any]] = {}

    @classmethod
    def of_items(cls, kind: str, items: Sequence[dict[str, Any]]) -> Records:
        """Records of `kind` from items already in memory (a check's, a merge's)."""
        from planstate.store.recordfiles import ORDER, item_fingerprint

        rows = []
        for item in items:
            status = item.get("status")
            rows.append(
                Row(
                    str(item.get(ORDER[kind])),
                    str(item.get("id")),
                    status if isinstance(status, str) else None,
                    item_fingerprint(item),
                    lambda item=item: item,  # type: ignore[misc]
                )
            )
        return cls(rows)

    def select(self, keep: Callable[[Row], bool] | None = None, *, newest_first: bool = False) -> Records:
        """The records `keep` keeps, ordered by their region's field then id (newest first when asked)."""
        if self._length != len(self._rows):
            raise ValueError("a head of records cannot be selected from")
        rows = [r for r in self._rows if keep is None or keep(r)]
        rows.sort(key=_ORDER, reverse=newest_first)
        return Records(rows, self._load)

    def fingerprint(self, shown: int | None = None) -> list[Any]:
        """What the records a region shows are, in order, for its input hash (items stay unread): every record's
        fingerprint, or with `shown`, how many records there are and the fingerprints of the first `shown`."""
        if shown is not None:
            return [self._length, *(r.fingerprint for r in self._rows[:shown])]
        if self._length != len(self._rows):
            raise ValueError("a head of records has no fingerprint of them all")
        return [r.fingerprint for r in self._rows]

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(self._length))]
        return self._item(range(self._length)[index])

    def _item(self, position: int) -> dict[str, Any]:
        item = self._items.get(position)
        if item is None:
            row = self._rows[position]
            item = self._items[position] = row.item() if self._load is None else self._load(row)
        return item

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self._item(i) for i in range(self._length))


class Sources:
    """The inputs of one STATE.md's regions: its front matter and, on first use, its initiative's records."""

    def __init__(
        self,
        data: dict[str, Any],
        ctx: Context | None = None,
        initiative: Initiative | None = None,
        *,
        planning: Path | None = None,
        loader: Loader | None = None,
    ) -> None:
        self.state = State(data)
        self.ctx = ctx
        self.initiative = initiative
        self.planning = ctx.root if ctx is not None else planning  # whose template overrides apply
        self._loader = loader
        self._records: dict[str, tuple[Records, list[str]]] = {}
        self._headed: set[str] = set()  # the kinds whose records came as a head, which shows none unusable

    def records(self, kind: str) -> Records:
        """The valid records of `kind` as JSON-ready data, each with a `link` relative to STATE.md's folder."""
        return self._load(kind)[0]

    def failures(self, kind: str) -> list[str]:
        """The record files of `kind` that could not be used, each as `FILE does not parse` (or why else)."""
        if kind in self._headed and kind not in self._records:
            return []
        return self._load(kind)[1]

    def selection(self, region: str, limited: bool = False) -> tuple[Records, int]:
        """The records record region `region` shows, in its order, and how many valid records of its kind there
        are. `limited`: the region's template shows only the first `LIMITS` of them and counts the rest (a built-in
        one), so a head of them does (store/folders.head), when one can be had."""
        kind, skip, newest_first = SELECTIONS[region]
        ctx, initiative = self.ctx, self.initiative
        loaded = kind in self._records
        if limited and not loaded and self._loader is None and ctx is not None and initiative is not None:
            from planstate.store.folders import head

            found = head(
                ctx,
                initiative.folder(kind),
                kind,
                hides=() if skip is None else (skip,),
                newest_first=newest_first,
                limit=LIMITS[region],
            )
            if found is not None:
                self._headed.add(kind)
                return Records(found.first, lambda s: _item(ctx, kind, s.path), found.selected), found.valid
        items = self.records(kind)
        chosen = items.select(None if skip is None else lambda r: r.status != skip, newest_first=newest_first)
        return chosen, len(items)

    def _load(self, kind: str) -> tuple[Records, list[str]]:
        loaded = self._records.get(kind)
        if loaded is None:
            if self._loader is not None:
                items, failures = self._loader(kind)
                loaded = (items if isinstance(items, Records) else Records.of_items(kind, items), failures)
            elif self.ctx is not None and self.initiative is not None:
                loaded = load_records(self.ctx, self.initiative, kind)
            else:
                loaded = (Records([]), [])
            self._records[kind] = loaded
        return loaded

    def context(self, name: str, *, limited: bool = False) -> dict[str, Any]:
        """The context of region `name` (`limited`: its template shows only the first records, see `selection`)."""
        if name in SELECTIONS:
            return record_context(self, name, limited)
        return BUILDERS[name](self)


def load_records(ctx: Context, initiative: Initiative, kind: str) -> tuple[Records, list[str]]:
    """The records of `kind` for the regions, from their summaries (each item read when shown), and why any file
    cannot be used."""
    from planstate.store import recordfiles

    found, problems = recordfiles.summaries(ctx, initiative, kind)
    failures = [unusable(problem.file or "", problem) for problem in problems]
    valid = [summary for summary in found if summary.problem is None]
    if len(valid) < len(found):
        failures += [
            f"{ctx.display(summary.path)} does not validate ({summary.problem})"
            for summary in found
            if summary.problem is not None
        ]
    # The summaries are the rows (order, id, status, fingerprint): no row object or callable is made per record.
    return Records(valid, lambda summary: _item(ctx, kind, summary.path)), failures


def _item(ctx: Context, kind: str, path: Path) -> dict[str, Any]:
    """The item of one valid record, read through the store (or as a committing transaction will write it)."""
    from planstate.store.recordfiles import region_item

    data = ctx.pending.get(path.absolute())
    return region_item(kind, path, data if data is not None else ctx.cached_data(path))


def region_items(kind: str, records: list[tuple[Path, str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The valid ones of (path, path as shown, data) records of `kind` as region items, and why each other one
    cannot be shown."""
    from planstate.model.validation import problems_for
    from planstate.store.recordfiles import region_item

    items: list[dict[str, Any]] = []
    failures: list[str] = []
    for path, shown, data in records:
        invalid = problems_for(kind, data)
        if invalid:
            failures.append(invalid_record(shown, invalid[0]))
            continue
        items.append(region_item(kind, path, data))
    return items, failures


def unusable(shown: str, error: Exception) -> str:
    """Why a record file cannot be shown: `FILE does not parse`, or `FILE cannot be read (why)`."""
    from planstate.core.errors import ParseError, PlanstateError

    if isinstance(error, ParseError):
        return f"{shown} does not parse"
    message = error.message if isinstance(error, PlanstateError) else str(error)
    return f"{shown} cannot be read ({message})"


def invalid_record(shown: str, problem: Any) -> str:
    """Why a record that does not validate cannot be shown: `FILE does not validate (field: problem)`."""
    field = format_path(problem.path)
    return f"{shown} does not validate ({field + ': ' if field else ''}{problem.message})"


def position(src: Sources) -> dict[str, Any]:
    """Context of `position`: the current phase, plan, task, wave, status, step and the lifecycle state."""
    state = src.state
    raw = state.position._data() if state.position.exists() else {}
    phase = None
    if isinstance(raw.get("phase"), int):
        current = phase_at(state, raw["phase"])
        if current is not None:
            phase = {
                "number": raw["phase"],
                "total": len(phase_numbers(state)),
                "name": current.name,
                "status": current.status,
            }
    lifecycle = state.lifecycle._data()
    return {
        "phase": phase,
        "plan": raw.get("plan"),
        "plan_name": raw.get("plan_name"),
        "task": raw.get("task"),
        "wave": raw.get("wave"),
        "status": raw.get("status", "pending"),
        "step": raw.get("step"),
        "lifecycle": {key: to_json(lifecycle.get(key)) for key in ("state", "since", "reason", "by", "context")},
    }


def progress(src: Sources) -> dict[str, Any]:
    """Context of `progress`: phase counts, percentage and bar (computed, never the file's copies) and task counts."""
    state = src.state
    total = len(phase_numbers(state))
    done = sum(1 for p in state.phases if p.status == "completed")
    percent = percent_of(done, total)
    counts = state.progress._data() if state.progress.exists() else {}
    raw = state.position._data() if state.position.exists() else {}
    return {
        "phases_total": total,
        "phases_completed": done,
        "percent": percent,
        "bar": progress_bar(percent),
        "current_phase": raw.get("phase") if isinstance(raw.get("phase"), int) else None,
        "current_phase_tasks": counts.get("current_phase_tasks"),
        "current_phase_completed": counts.get("current_phase_completed"),
    }


def _completed_seconds(state: State) -> list[float]:
    """Durations of the completed phases that have both timestamps."""
    out = []
    for phase in state.phases:
        seconds = phase_duration(phase)
        if phase.status == "completed" and seconds is not None and seconds > 0:
            out.append(seconds)
    return out


def phases(src: Sources) -> dict[str, Any]:
    """Context of `phases`: one row per phase with timing and checkpoint, the average duration and an estimate."""
    state = src.state
    numbers = phase_numbers(state)
    raw = state.position._data() if state.position.exists() else {}
    rows = []
    for index, phase in enumerate(state.phases):
        number = numbers.start + index
        seconds = phase_duration(phase)
        data = phase._data()
        rows.append(
            {
                "number": number,
                "name": phase.name,
                "status": phase.status,
                "started": to_json(phase.started),
                "completed": to_json(phase.completed),
                "duration_seconds": _whole(seconds),
                "checkpoint": phase.checkpoint,
                "evidence": to_json(data.get("evidence") or {}),
                "failure": phase.failure,
                "attempts": phase.attempts,
                "current": number == raw.get("phase"),
            }
        )
    done = _completed_seconds(state)
    average = _whole(sum(done) / len(done)) if done else None
    remaining = sum(1 for p in state.phases if p.status not in FINISHED)
    return {
        "phases": rows,
        "average_seconds": average,
        "remaining": remaining,
        "estimate_seconds": average * remaining if average is not None else None,
    }


def gantt(src: Sources) -> dict[str, Any]:
    """Context of `gantt`: a bar per phase. Unfinished phases are drawn for the average completed duration (a day
    when none is completed) and pending ones follow each other, so the chart changes only when phase data does."""
    state = src.state
    numbers = phase_numbers(state)
    done = _completed_seconds(state)
    step = timedelta(seconds=round(sum(done) / len(done)) if done else DAY)
    starts = [p.started for p in state.phases if p.started is not None]
    anchor: datetime | None = min(starts) if starts else state.created
    cursor: datetime | None = None
    bars = []
    for index, phase in enumerate(state.phases):
        start = phase.started or cursor or anchor
        if start is None:
            continue
        milestone = False
        estimated = False
        if phase.completed is not None and phase.completed >= start:
            end = phase.completed
        elif phase.status == "skipped":
            end, milestone = start, True
        else:
            end, estimated = start + step, True
        cursor = end if cursor is None or end > cursor else cursor
        bars.append(
            {
                "id": f"p{numbers.start + index}",
                "number": numbers.start + index,
                "name": phase.name,
                "status": phase.status,
                "tag": {"completed": "done", "active": "active", "failed": "crit", "skipped": "done"}.get(
                    phase.status, ""
                ),
                "start": to_json(start),
                "end": to_json(end),
                "milestone": milestone,
                "estimated": estimated,
            }
        )
    return {"bars": bars, "step_seconds": int(step.total_seconds()), "measured": bool(done)}


def record_context(src: Sources, name: str, limited: bool = False) -> dict[str, Any]:
    """Context of a record region: `blockers` the unresolved blockers, oldest first, and how many are resolved;
    `decisions` and `sessions` theirs, newest first; each with how many to show (`limited`: see
    `Sources.selection`)."""
    items, valid = src.selection(name, limited)
    if name == "blockers":
        return {"blockers": items, "resolved": valid - len(items), "limit": LIMITS["blockers"]}
    return {name: items, "limit": LIMITS[name]}


def next_action(src: Sources) -> dict[str, Any]:
    """Context of `next`: the next action and the open questions."""
    state = src.state
    return {"next_action": state.next_action, "open_questions": list(state.resume_context.open_questions)}


def resume(src: Sources) -> dict[str, Any]:
    """Context of `resume`: the files modified and the key implementations of the current stretch of work."""
    context = src.state.resume_context
    return {"files_modified": list(context.files_modified), "key_implementations": list(context.key_implementations)}


def _whole(seconds: float | None) -> int | None:
    """Seconds rounded to a whole number (durations are shown to the minute)."""
    return None if seconds is None else round(seconds)


# The regions but the record regions (SELECTIONS: `record_context` builds theirs).
BUILDERS = {
    "position": position,
    "progress": progress,
    "next": next_action,
    "phases": phases,
    "gantt": gantt,
    "resume": resume,
}
