"""Writing an import plan: what it will do (the plan printed first, all of `--dry-run`), then one transaction.

An imported initiative is found again by the `imported_from` of its STATE.md, a record by its own, so a
second import of the same source creates nothing and a source that moved on updates what the first made.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planstate.core import clock
from planstate.interop.plan import Plan, Planned, Unmapped
from planstate.model.kinds import RECORD_FOLDERS, to_json

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.recordfiles import Record
    from planstate.store.transaction import Transaction


@dataclass
class Action:
    """One thing the import does: `create`, `update` or `unchanged`, to an initiative or a record."""

    action: str
    kind: str  # initiative, decision, blocker or session
    initiative: str
    name: str  # the record's id or label, the initiative's title
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready data."""
        return {
            "action": self.action,
            "kind": self.kind,
            "initiative": self.initiative,
            "name": self.name,
            "detail": self.detail,
        }

    def line(self) -> str:
        """The action as one line of the printed plan."""
        where = "" if self.kind == "initiative" else f" in {self.initiative}"
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.action} {self.kind} {self.name}{where}{detail}"


@dataclass
class Imported:
    """What `planstate import` did (or, with `dry_run`, would do), and what it left out."""

    source: str
    path: str
    dry_run: bool
    actions: list[Action] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many actions of each kind: created, updated, unchanged."""
        out = {"create": 0, "update": 0, "unchanged": 0}
        for action in self.actions:
            out[action.action] = out.get(action.action, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready data: the source, whether anything was written, every action and every unmapped item."""
        return {
            "source": self.source,
            "path": self.path,
            "dry_run": self.dry_run,
            "counts": self.counts(),
            "actions": [a.to_dict() for a in self.actions],
            "unmapped": [u.to_dict() for u in self.unmapped],
        }


class _Target:
    """A planned initiative and where it goes: an initiative found by its origin, or a new slug."""

    def __init__(self, planned: Planned, initiative: Initiative | None, slug: str) -> None:
        self.planned = planned
        self.initiative = initiative
        self.slug = slug


def run(
    ctx: Context,
    plan: Plan,
    *,
    dry_run: bool = False,
    into_root: bool = False,
    on_plan: Callable[[Imported], None] | None = None,
) -> Imported:
    """Import `plan` into the workspace of `ctx` (see the module docstring). `into_root`: the root initiative,
    made for this import, is the home of the plan's main initiative. `on_plan` is shown what the import will do
    once that is known and before anything is written (under the lock, so it is what then happens)."""
    from planstate.ops.records import origin_key, write_imported

    _refuse_overlap(ctx, plan)
    result = Imported(plan.source, str(plan.root), dry_run, unmapped=list(plan.unmapped))
    with ctx.transaction(explicit=True):  # holds the lock from the decisions to the last write
        targets, others_active = _targets(ctx, plan, into_root)
        indexes: dict[tuple[str, str], dict[tuple[str, str, str], Record]] = {}
        for target in targets:
            _plan_actions(ctx, target, others_active, result, indexes)
        if into_root:  # the root initiative was made for this import a moment ago: it is created, not updated
            result.actions[0].action = "create"
        if on_plan is not None:
            on_plan(result)
        if dry_run:
            return result
        for target in targets:
            if target.initiative is None:
                target.initiative = _create(ctx, target)
        with ctx.transaction(explicit=True) as tx:
            for target in targets:
                assert target.initiative is not None
                _write_state(tx, target, others_active)
                for item in target.planned.records:
                    index = indexes.get((target.slug, item.kind), {})
                    key = origin_key(item.data.get("imported_from"))
                    existing = index.get(key) if key is not None else None
                    write_imported(tx, target.initiative, item.kind, item.data, item.body, existing)
    ctx.forget_target()
    return result


def into_new(
    plan: Plan,
    create: Callable[[Planned], Context],
    *,
    dry_run: bool = False,
    on_plan: Callable[[Imported], None] | None = None,
) -> Imported:
    """Import `plan` into a workspace `create` makes for its current work (as `init` makes one); the plan is
    shown to `on_plan` first, and `dry_run` stops there."""
    from planstate.core.errors import UsageError

    main = next((p for p in plan.initiatives if p.main), None)
    if main is None:
        raise UsageError(f"nothing to import from {plan.root}: no phases found")
    planned = preview(plan, dry_run=dry_run)
    if on_plan is not None:
        on_plan(planned)
    if dry_run:
        return planned
    return run(create(main), plan, into_root=True)


def preview(plan: Plan, *, dry_run: bool = True) -> Imported:
    """What importing `plan` into a new workspace does: create everything."""
    result = Imported(plan.source, str(plan.root), dry_run, unmapped=list(plan.unmapped))
    for planned in sorted(plan.initiatives, key=lambda p: not p.main):
        detail = f"{len(planned.phases)} phases, {planned.lifecycle['state']}"
        result.actions.append(Action("create", "initiative", planned.slug, planned.title, detail))
        result.actions += [Action("create", item.kind, planned.slug, item.label) for item in planned.records]
    return result


def _targets(ctx: Context, plan: Plan, into_root: bool) -> tuple[list[_Target], list[str]]:
    """Where each planned initiative goes, and the slugs of the active initiatives that are not the plan's."""
    from planstate.ops.records import origin_key
    from planstate.store.initiatives import discover, summarize

    summaries = [summarize(ctx, i) for i in discover(ctx.root)]
    by_origin: dict[tuple[str, str, str], Initiative] = {}
    for s in summaries:
        if s.problem is not None:
            raise s.problem
        data = ctx.cached_data(s.initiative.state_path)
        key = origin_key(data.get("imported_from")) if isinstance(data, dict) else None
        if key is not None:
            by_origin[key] = s.initiative
    taken = {s.slug for s in summaries}
    targets = []
    for planned in sorted(plan.initiatives, key=lambda p: not p.main):  # the main one first: it may become active
        found = by_origin.get(origin_key(planned.origin) or ("", "", ""))
        if found is None and into_root and planned.main:
            found = summaries[0].initiative
        slug = next(s.slug for s in summaries if s.initiative == found) if found is not None else planned.slug
        if found is None:
            base, n = slug, 2
            while slug in taken:
                slug, n = f"{base[:60]}-{n}", n + 1
            taken.add(slug)
        targets.append(_Target(planned, found, slug))
    mine = {t.initiative.dir for t in targets if t.initiative is not None}
    others = [s.slug for s in summaries if s.state == "active" and s.initiative.dir not in mine]
    return targets, others


def _refuse_overlap(ctx: Context, plan: Plan) -> None:
    """Refuse a source that is the workspace, inside it or holding it: sources are never written."""
    from planstate.core.errors import UsageError

    source, workspace = plan.root.resolve(), ctx.root.resolve()
    if source == workspace or workspace in source.parents or source in workspace.parents:
        raise UsageError(
            f"the source {plan.root} and the workspace {ctx.root} overlap, and an import never writes into its "
            "source: move the source aside first (`git mv .planning .gsd-planning`) and import from there"
        )


def _plan_actions(
    ctx: Context,
    target: _Target,
    others_active: list[str],
    result: Imported,
    indexes: dict[tuple[str, str], dict[tuple[str, str, str], Record]],
) -> None:
    """Add what writing `target` does to `result`, comparing with what an earlier import wrote."""
    from planstate.ops.records import imported_records, origin_key
    from planstate.text.plaindata import same

    planned = target.planned
    lifecycle = _lifecycle(planned, others_active)
    phases = f"{len(planned.phases)} phase{'s' if len(planned.phases) != 1 else ''}, {lifecycle['state']}"
    if target.initiative is None:
        new = {"schema_version": 1, "initiative": target.slug, "title": planned.title, "lifecycle": {"state": "paused"}}
        _apply(new, planned, lifecycle, clock.now(), ctx.actor)
        _refuse_invalid("state", new, planned.origin)
        result.actions.append(Action("create", "initiative", target.slug, planned.title, phases))
    else:
        data = ctx.cached_data(target.initiative.state_path)
        new = copy.deepcopy(data)
        _apply(new, planned, lifecycle, clock.now(), ctx.actor)
        action = "unchanged" if same(_comparable(data), _comparable(new)) else "update"
        if action == "update":
            _refuse_read_only(ctx, target.initiative, data)
        result.actions.append(Action(action, "initiative", target.slug, planned.title, phases))
    for kind in RECORD_FOLDERS:
        if target.initiative is None:
            indexes[(target.slug, kind)] = {}
        else:
            indexes[(target.slug, kind)] = imported_records(ctx, target.initiative, kind)
    for item in planned.records:
        key = origin_key(item.data.get("imported_from"))
        existing = indexes[(target.slug, item.kind)].get(key) if key is not None else None
        if existing is None:
            _refuse_invalid(item.kind, {"schema_version": 1, "id": "imported", **item.data}, item.data["imported_from"])
            if target.initiative is not None:
                _refuse_read_only(ctx, target.initiative, ctx.cached_data(target.initiative.state_path))
            result.actions.append(Action("create", item.kind, target.slug, item.label))
            continue
        merged = {**existing.data, **{k: v for k, v in item.data.items() if k != "id"}}
        action = "unchanged" if same(to_json(existing.data), to_json(merged)) else "update"
        if action == "update" and target.initiative is not None:
            _refuse_read_only(ctx, target.initiative, ctx.cached_data(target.initiative.state_path))
        result.actions.append(Action(action, item.kind, target.slug, existing.id))


def _refuse_invalid(kind: str, data: dict[str, Any], origin: dict[str, Any]) -> None:
    """Refuse, before anything is written, an imported item the format would not accept (an importer's bug or a
    source too odd to map), naming where it came from."""
    from planstate.core.errors import UsageError
    from planstate.model.validation import problems_for
    from planstate.text.paths import format_path

    found = problems_for(kind, data)
    if found:
        where = f"{origin.get('path')} ({origin.get('id')})" if origin.get("id") is not None else origin.get("path")
        problem = found[0]
        raise UsageError(f"cannot import {where}: {format_path(problem.path)}: {problem.message}")


def _refuse_read_only(ctx: Context, initiative: Initiative, data: Any) -> None:
    """Refuse, before anything is written, an update of an initiative that is completed or archived."""
    from planstate.core.errors import UsageError
    from planstate.model.kinds import READ_ONLY_STATES, read_only_message

    lifecycle = data.get("lifecycle") if isinstance(data, dict) else None
    state = lifecycle.get("state") if isinstance(lifecycle, dict) else None
    if state in READ_ONLY_STATES:
        doc = ctx.read_document(initiative.state_path)
        line, column = doc.locate(["lifecycle", "state"])
        message = read_only_message(data.get("initiative"), str(state)) + " (the source changed since the last import)"
        raise UsageError(message, file=doc.path, line=line, column=column, field="lifecycle.state")


def _comparable(data: Any) -> Any:
    """STATE.md data without what every write changes (`updated`) and what is recomputed."""
    if not isinstance(data, dict):
        return data
    out = to_json(data)
    out.pop("updated", None)
    out.pop("progress", None)
    if isinstance(out.get("position"), dict):
        out["position"].pop("phase_name", None)
    if isinstance(out.get("lifecycle"), dict):
        out["lifecycle"].pop("since", None)
    for phase in out.get("phases") or []:
        if isinstance(phase, dict):
            phase.pop("duration_seconds", None)
    return out


def _lifecycle(planned: Planned, others_active: list[str]) -> dict[str, Any]:
    """The lifecycle the source tells, except that an active one waits, paused, while another initiative is
    active (at most one is)."""
    lifecycle = dict(planned.lifecycle)
    if lifecycle.get("state") == "active" and others_active:
        lifecycle = {
            "state": "paused",
            "reason": f"imported while {others_active[0]} is active",
            "context": planned.lifecycle.get("context"),
        }
    return lifecycle


def _apply(data: dict[str, Any], planned: Planned, lifecycle: dict[str, Any], when: datetime, actor: str) -> bool:
    """Set the planned fields on STATE.md data, leaving alone each value that already says the same (so a second
    import writes nothing); True when the lifecycle state changes (a history line is due)."""
    _set(data, "title", planned.title)
    _set(data, "next_action", None)  # the scaffold's "Start phase N" is not the source's word; a source may say one
    for key, value in planned.fields.items():
        _set(data, key, copy.deepcopy(value))
    structure = {"phases_total": len(planned.phases), "first_phase": planned.first_phase, "workflow": planned.workflow}
    _set(data, "structure", structure)
    _set(data, "phases", copy.deepcopy(planned.phases))
    _set(data, "imported_from", dict(planned.origin))
    found = data.get("lifecycle")
    old: dict[str, Any] = found if isinstance(found, dict) else {}
    given = {k: v for k, v in lifecycle.items() if v is not None}
    if given["state"] == "completed" and "total_duration_seconds" not in given:
        created, done = data.get("created"), given.get("completed_at")
        if isinstance(created, datetime) and isinstance(done, datetime) and done >= created:
            given["total_duration_seconds"] = int((done - created).total_seconds())
    if old.get("state") == given["state"]:
        _set(data, "lifecycle", {**old, **given})
        return False
    data["lifecycle"] = {"state": given["state"], "since": when, "by": actor, **given}
    data["lifecycle"].setdefault("reason", f"imported from {planned.origin.get('source')}")
    return True


DERIVED = ("phase_name", "duration_seconds")  # recomputed on every write: never a reason to write


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    """`data[key] = value`, unless the value there already says the same (key order and derived copies aside)."""
    if key not in data or _meaning(data[key]) != _meaning(value):
        data[key] = value


def _meaning(value: Any) -> Any:
    """A value as JSON data without derived copies, for comparing what two values say."""
    value = to_json(value)
    if isinstance(value, dict):
        return {k: _meaning(v) for k, v in value.items() if k not in DERIVED and v is not None}
    if isinstance(value, list):
        return [_meaning(v) for v in value]
    return value


def _create(ctx: Context, target: _Target) -> Initiative:
    """Make the new initiative's folder (paused while another is active), its phases named as planned."""
    from planstate.core.layout import INITIATIVES
    from planstate.ops.initiatives import InitiativeAPI
    from planstate.store.initiatives import Initiative

    planned = target.planned
    names = [p["name"] for p in planned.phases]
    InitiativeAPI(ctx).new(target.slug, title=planned.title, phases=names, first_phase=planned.first_phase)
    return Initiative(ctx.root / INITIATIVES / target.slug, target.slug)


def _write_state(tx: Transaction, target: _Target, others_active: list[str]) -> None:
    """Set the planned STATE.md fields in `tx`, with a history line when the lifecycle state changes."""
    from planstate.core.clock import now
    from planstate.store import history

    assert target.initiative is not None
    staged = tx.load("state", target.initiative.state_path, target.initiative)
    old = staged.data.get("lifecycle")
    before = old.get("state") if isinstance(old, dict) else None
    when = now()
    if _apply(staged.data, target.planned, _lifecycle(target.planned, others_active), when, tx.ctx.actor):
        after = staged.data["lifecycle"]
        tx.log(target.initiative, history.entry(when, before, after["state"], "import", after["reason"], tx.ctx.actor))
