"""Task records: add one (after others, in a phase and a wave), list them, and the ready queue; one file per task.

Tasks are judged from the store's facts of every task (status, phase, depends_on, wave, created: store/recordfiles
FACTS), read in one query per call, so `ready` over 2,000 tasks costs one pass over them, never a pass per task.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.core.clock import now
from planstate.core.errors import PlanstateError, UsageError
from planstate.model.kinds import SCHEMA_VERSION, TASK_RECORD_STATUSES
from planstate.ops import records
from planstate.ops.records import Entry, Listing
from planstate.store import recordfiles
from planstate.store.recordfiles import Record

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

KIND = "task"
FINISHED = ("done", "dropped")  # statuses `task list` hides unless asked for (`all`, or `status`)


class Ready:
    """The ready queue: the tasks to take next, in order, and the task files it could not judge (warnings)."""

    def __init__(self, items: list[Entry], problems: list[PlanstateError], invalid: list[PlanstateError]) -> None:
        self.items = items
        self.problems = problems
        self.invalid = invalid

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def ids(self) -> list[str]:
        """The ids of the ready tasks, in queue order."""
        return [e.id for e in self.items]

    def warnings(self) -> list[str]:
        """One line per task file left out of the queue because it cannot be read or does not validate."""
        return [f"skipped {problem}" for problem in [*self.problems, *self.invalid]]

    def to_dict(self) -> dict[str, Any]:
        """The queue as JSON-ready data: the ready tasks, in order, and how many there are."""
        return {"tasks": [e.to_dict() for e in self.items], "total": len(self.items)}


class _Known:
    """Every task of an initiative as the store knows it: each valid one's file name and facts, and the problems of
    the files that cannot be read or do not validate (located)."""

    def __init__(self, ctx: Context, initiative: Initiative) -> None:
        self.folder = initiative.folder(KIND)
        self.rows: list[tuple[str, dict[str, Any]]] = []
        self.problems: list[PlanstateError] = []
        self.invalid: list[PlanstateError] = []
        self.prefix: str | None = None  # the store's key of the folder, when its rows were just vouched for
        if not self._from_store(ctx):
            self._from_files(ctx, initiative)

    def _from_store(self, ctx: Context) -> bool:
        """The facts from the store's rows (store/folders.vouch just vouched for them); False when it cannot say."""
        from planstate.store import folders

        if ctx.pending or ctx.leaving:
            return False
        vouched = folders.vouch(ctx, self.folder, KIND)
        if vouched is None:
            return False
        self.rows = folders.facts(ctx, vouched, "1", (), "ORDER BY name")
        unsure = [row[0] for row in ctx.store.select(vouched.prefix, "name", "valid IS NOT 1", (), "ORDER BY name")]
        kept = {name for name, _facts in self.rows}
        valid = {row[0] for row in ctx.store.select(vouched.prefix, "name", "valid = 1")}
        unsure += [name for name in valid - kept]  # valid, but no facts kept: read
        for name in sorted({*unsure, *vouched.strange}):
            self._judge(ctx, self.folder / name)
        self.rows.sort()
        self.prefix = vouched.prefix
        return True

    def _from_files(self, ctx: Context, initiative: Initiative) -> None:
        """The facts from the files themselves (no store to answer from)."""
        found, self.problems = recordfiles.load_all(ctx, initiative, KIND)
        for record in found:
            self._take(ctx, record)

    def _judge(self, ctx: Context, path: Path) -> None:
        """Read one task file the store cannot speak for, and take it or note why not."""
        data = recordfiles.mapping(ctx, path, self.problems)
        if data is not None:
            self._take(ctx, Record(KIND, path, data))

    def _take(self, ctx: Context, record: Record) -> None:
        from planstate.model.validation import problems_for

        if problems_for(KIND, record.data):
            self.invalid.append(records.located_problem(ctx, KIND, record))
        else:
            self.rows.append((record.path.name, record.data))

    def entries(self, ctx: Context, names: list[str]) -> list[Entry]:
        """The task files `names` as Entries, in that order, their whole front matter from the rows the store just
        vouched for (in a few queries, not one per task), else read through the store."""
        from planstate.store.cache import decode

        kept: dict[str, Any] = {}
        if self.prefix is not None:
            rows = ctx.store.values_of(self.prefix, names, "data", "valid = 1")
            kept = {name: decode(text) for name, text in rows.items() if text is not None}
        out = []
        for name in names:
            path = self.folder / name
            data = kept.get(name)
            out.append(
                records.entry(ctx, Record(KIND, path, data if isinstance(data, dict) else ctx.cached_data(path)))
            )
        return out


class TaskRecords:
    """`ws.task.add` and `ws.task.list` (`planstate task add|list`): the task records of the target initiative."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def add(
        self,
        title: str,
        *,
        phase: int | None = None,
        after: Sequence[str] = (),
        wave: int | None = None,
    ) -> Entry:
        """Add a pending task in a new file; `after`: the tasks (ids or unique prefixes) that must be done first."""
        ctx = self.ctx
        name = records.text(title, "title")
        if phase is not None:
            records.check_phase(ctx, phase)
        if wave is not None and (isinstance(wave, bool) or not isinstance(wave, int) or wave < 0):
            raise UsageError(f"{wave!r} is not a wave number (0 or more)", field="wave")
        if isinstance(after, str):
            raise UsageError("must be a list of task ids, not one string", field="depends_on")
        initiative = ctx.target
        records.preload_templates(ctx, KIND)
        with ctx.transaction(state=False) as tx:
            records.refuse_read_only(ctx, initiative)
            depends: list[str] = []
            for ref in after:
                found = recordfiles.find(ctx, initiative, KIND, str(ref)).id
                if found not in depends:
                    depends.append(found)
            record_id, path = recordfiles.new_path(
                initiative, KIND, name, names=tx.names(initiative.folder(KIND), KIND)
            )
            data: dict[str, Any] = {
                "schema_version": SCHEMA_VERSION,
                "id": record_id,
                "title": name,
                "status": "pending",
                "created": now(),
                "phase": phase,
                "depends_on": depends,
                "wave": wave,
                "claim": None,
                "evidence": {},
                "by": ctx.actor,
            }
            tx.create(KIND, path, data, records.body(ctx, KIND, data))
        ctx.save_cache()
        return Entry(KIND, record_id, path, ctx.display(path), data)

    def list(self, *, all: bool = False, status: str | None = None, phase: int | None = None) -> Listing:
        """The tasks of the initiative, oldest first: those not done or dropped (every one with `all`), or those with
        `status`; only those of `phase` when given."""
        ctx = self.ctx
        records.choice(status, TASK_RECORD_STATUSES, "status")
        _phase_filter(ctx, phase)
        known = _Known(ctx, ctx.target)
        names: list[str] = []
        for name, facts in sorted(known.rows, key=lambda row: (_created(row[1]), row[0])):
            current = facts.get("status", "pending")
            if (status is not None and current != status) or (status is None and not all and current in FINISHED):
                continue
            if phase is not None and facts.get("phase") != phase:
                continue
            names.append(name)
        entries = known.entries(ctx, names)
        ctx.save_cache()
        return Listing(entries, [*known.problems, *known.invalid], [], KIND)  # an invalid task is not listed


def ready(ctx: Context, *, phase: int | None = None) -> Ready:
    """The tasks to take next: pending, every task they depend on done, and affected by no blocker that blocks (one
    naming their phase, as status judges a phase blocked, or naming the task itself); in order of wave (none last),
    then age. Built once per call from the store's facts of every task: linear in the tasks and their dependencies."""
    _phase_filter(ctx, phase)
    initiative = ctx.target
    known = _Known(ctx, initiative)
    status_of = {str(facts.get("id")): facts.get("status", "pending") for _name, facts in known.rows}
    phases, named = _blocked(ctx, initiative)
    chosen: list[tuple[tuple[bool, int, str, str], str]] = []
    for name, facts in known.rows:
        if facts.get("status", "pending") != "pending" or str(facts.get("id")) in named:
            continue
        number = facts.get("phase")
        if (phase is not None and number != phase) or (number is not None and number in phases):
            continue
        if all(status_of.get(dependency) == "done" for dependency in facts.get("depends_on") or ()):
            wave = facts.get("wave")
            chosen.append(((wave is None, wave or 0, _created(facts), str(facts.get("id"))), name))
    chosen.sort()
    items = known.entries(ctx, [name for _key, name in chosen])
    ctx.save_cache()
    return Ready(items, known.problems, known.invalid)


def _blocked(ctx: Context, initiative: Initiative) -> tuple[set[int], set[str]]:
    """The phases blockers that block stop (verdicts.blocked, what status says), and the record ids they name."""
    from planstate.model import verdicts
    from planstate.model.kinds import State, record_reference
    from planstate.store import folders

    found = folders.blocking_data(ctx, initiative)
    named: set[str] = set()
    for _id, facts, _summary in found:
        affects = facts.get("affects")
        for item in affects if isinstance(affects, list) else ():
            ref = record_reference(item) if isinstance(item, str) else None
            if ref is not None:
                named.add(ref)
    try:
        data = ctx.cached_data(initiative.state_path)
    except PlanstateError:
        return set(), named  # a STATE.md that cannot be read names no phases: check reports it
    if not isinstance(data, dict):
        return set(), named
    blocked = verdicts.blocked(State(data), [(record_id, facts) for record_id, facts, _summary in found])
    return {item["number"] for item in blocked}, named


def _created(facts: dict[str, Any]) -> str:
    """A task's age as text that sorts by time (its `created`, as the store keeps it)."""
    from planstate.model.kinds import to_json

    return str(to_json(facts.get("created")))


def _phase_filter(ctx: Context, phase: int | None) -> None:
    """Refuse a phase filter that is no phase number, or names a phase the initiative does not have."""
    if phase is not None:
        records.check_phase(ctx, phase)
