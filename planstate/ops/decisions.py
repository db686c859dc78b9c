"""Decisions: record one (optionally superseding another), list, show and supersede; one file per decision.

Decision commands write decision files and, in the same transaction, only the regions of STATE.md
that show records, so two clones recording decisions merge cleanly (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from planstate.core.clock import now
from planstate.core.errors import PlanstateError, UsageError
from planstate.model.kinds import DECISION_STATUSES, SCHEMA_VERSION, Decision
from planstate.ops import records
from planstate.ops.records import Entry, Listing
from planstate.store import recordfiles

if TYPE_CHECKING:
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative
    from planstate.store.transaction import Transaction

KIND = "decision"
NEW_STATUSES = ("accepted", "proposed")  # what `add` records; superseded and rejected come later
# `decision accept` and `decision reject` settle a proposed decision; nothing else moves through them.
SETTLE = {"accept": "accepted", "reject": "rejected"}


class Superseded:
    """What `decision supersede` did: the decision replaced and the one that replaces it."""

    def __init__(self, old: Entry, new: Entry) -> None:  # no dataclass: see records.Entry
        self.old = old
        self.new = new

    def to_dict(self) -> dict[str, Any]:
        """Both decisions as JSON-ready data: the one `superseded` and its `replacement` (`by` is always a person)."""
        return {"superseded": self.old.to_dict(), "replacement": self.new.to_dict()}


class DecisionAPI:
    """`ws.decision`: the `planstate decision` commands as methods with the same names."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def add(
        self,
        *,
        context: str,
        decision: str,
        reason: str,
        alternatives: Sequence[str] = (),
        irreversible: bool = False,
        supersedes: str | None = None,
        title: str | None = None,
        status: str = "accepted",
        phase: int | None = None,
        request_id: str | None = None,
    ) -> Entry:
        """Record a decision in a new file; with `supersedes`, mark that decision superseded in the same write.

        With `request_id`, a retry of a call that already made its decision answers with that decision (and a
        warning) instead of recording it twice."""
        ctx = self.ctx
        key = records.optional_text(request_id, "request_id")
        fields = {
            "context": records.text(context, "context"),
            "decision": records.text(decision, "decision"),
            "reason": records.text(reason, "reason"),
        }
        others = records.texts(alternatives, "alternatives")
        records.choice(status, NEW_STATUSES, "status")
        name = records.text(title, "title") if title is not None else records.short_title(fields["decision"])
        warnings: list[str] = []
        if phase is None:
            phase = _current_phase(ctx, warnings)
        else:
            records.check_phase(ctx, phase)
        initiative = ctx.target
        records.preload_templates(ctx, KIND)
        with ctx.transaction(state=False) as tx:
            records.refuse_read_only(ctx, initiative)
            made = records.retried(ctx, initiative, KIND, key)
            if made is not None and key is not None:
                return records.entry(ctx, made).warned(records.retry_warning(KIND, made, key))
            old = _supersedable(tx, initiative, supersedes) if supersedes is not None else None
            record_id, path = recordfiles.new_path(
                initiative, KIND, name, names=tx.names(initiative.folder(KIND), KIND)
            )
            data: dict[str, Any] = {
                "schema_version": SCHEMA_VERSION,
                "id": record_id,
                "title": name,
                "date": now().date(),
                "status": status,
                **fields,
                "alternatives": others,
                "reversible": not irreversible,
                "supersedes": old.id if old else None,
                "superseded_by": None,
                "phase": phase,
                "by": ctx.actor,
                **({"request_id": key} if key is not None else {}),
            }
            tx.create(KIND, path, data, records.body(ctx, KIND, data))
            if old is not None:
                replaced = tx.record(KIND, old.path)
                replaced.status = "superseded"
                replaced.superseded_by = record_id
        ctx.save_cache()
        return Entry(KIND, record_id, path, ctx.display(path), data, warnings=warnings)

    def list(
        self,
        *,
        all: bool = False,
        status: str | None = None,
        since: str | date | datetime | None = None,
        limit: int | None = records.PAGE,
    ) -> Listing:
        """The decisions of the initiative by date; superseded ones only with `all` (or `status="superseded"`), and
        archived ones only with `all`; the newest `limit` of them (0: all)."""
        return records.listing(
            self.ctx,
            KIND,
            status=status,
            after=since,
            statuses=DECISION_STATUSES,
            order=lambda value: "" if value is None else str(value),
            textual=True,  # that order of a date's text is the text: the store orders them
            shown=lambda current: all or current != "superseded",
            default_status="accepted",
            archived=all,
            limit=limit,
        )

    def show(self, id: str) -> Entry:
        """One decision (by id or unique id prefix) with its body."""
        record = recordfiles.find(self.ctx, self.ctx.target, KIND, id, archived=True)
        doc = self.ctx.read_document(record.path)
        self.ctx.save_cache()
        return records.entry(self.ctx, record, body=doc.body)

    def supersede(self, id: str, new: str) -> Superseded:
        """Mark decision `id` superseded by decision `new` (which then names `id` in `supersedes` if it named none)."""
        ctx = self.ctx
        initiative = ctx.target
        with ctx.transaction(state=False) as tx:
            records.refuse_read_only(ctx, initiative)
            old_record = _supersedable(tx, initiative, id)
            new_record = recordfiles.find(ctx, initiative, KIND, new)
            if new_record.path == old_record.path:
                raise UsageError(f"decision {old_record.id} cannot supersede itself", field="superseded_by")
            replacement = records.editable(tx, KIND, new_record.path)
            if replacement.status == "superseded" or replacement.superseded_by:
                raise UsageError(
                    f"decision {replacement.id} is itself superseded by "
                    f"{replacement.superseded_by or 'another decision'}; "
                    f"supersede {old_record.id} by the decision that is current",
                    **records.located(tx, KIND, new_record.path, "status"),
                )
            _refuse_cycle(ctx, initiative, old_record.id, replacement.id)
            old = tx.record(KIND, old_record.path)
            old.status = "superseded"
            old.superseded_by = replacement.id
            if not replacement.supersedes:
                replacement.supersedes = old.id
        ctx.save_cache()
        return Superseded(
            Entry(KIND, old.id, old_record.path, ctx.display(old_record.path), old.to_data()),
            Entry(KIND, replacement.id, new_record.path, ctx.display(new_record.path), replacement.to_data()),
        )

    def accept(self, id: str) -> Entry:
        """Accept a proposed decision: status `accepted`."""
        return self._settle(id, "accept", None)

    def reject(self, id: str, *, reason: str | None = None) -> Entry:
        """Reject a proposed decision: status `rejected`, with why in `rejection` when given."""
        return self._settle(id, "reject", records.optional_text(reason, "reason"))

    def _settle(self, ref: str, command: str, reason: str | None) -> Entry:
        """Move a proposed decision to accepted or rejected; refuse any other status, saying why."""
        ctx = self.ctx
        initiative = ctx.target
        with ctx.transaction(state=False) as tx:
            records.refuse_read_only(ctx, initiative)
            record = recordfiles.find(ctx, initiative, KIND, ref)
            decision = records.editable(tx, KIND, record.path)
            status = decision.status
            if status != "proposed":
                where = records.located(tx, KIND, record.path, "status")
                raise UsageError(f"cannot {command} decision {decision.id}: {_settled(decision, command)}", **where)
            decision.status = SETTLE[command]
            if reason is not None:
                decision.rejection = reason
            data = decision.to_data()
        ctx.save_cache()
        return Entry(KIND, str(data["id"]), record.path, ctx.display(record.path), data)


def _settled(decision: Decision, command: str) -> str:
    """Why a decision that is not proposed cannot be accepted or rejected."""
    status = decision.status
    if status == "superseded" or decision.superseded_by:
        return f"it is superseded by {decision.superseded_by or 'another decision'}"
    if status == "rejected":
        why = f" ({decision.rejection})" if decision.rejection else ""
        return f"it was rejected{why}; record a new decision instead"
    if command == "accept":
        return "it is already accepted"
    return (
        "it is accepted; an accepted decision is replaced, not rejected: "
        f"`planstate decision supersede {decision.id} NEW`"
    )


def _current_phase(ctx: Context, warnings: list[str]) -> int | None:
    """STATE.md's `position.phase`, read (not written) for a new decision; None with a warning if unreadable."""
    path = ctx.target.state_path
    try:
        data = ctx.cached_data(path)
    except PlanstateError as exc:
        warnings.append(f"phase left empty: {exc}")
        return None
    position = data.get("position") if isinstance(data, dict) else None
    phase = position.get("phase") if isinstance(position, dict) else None
    return phase if isinstance(phase, int) and not isinstance(phase, bool) and phase >= 0 else None


def _supersedable(tx: Transaction, initiative: Initiative, ref: str) -> recordfiles.Record:
    """The decision `ref` names, refusing one that is already superseded (saying by which decision)."""
    record = recordfiles.find(tx.ctx, initiative, KIND, ref)
    current = records.editable(tx, KIND, record.path)
    if current.status == "superseded" or current.superseded_by:
        by = current.superseded_by or "another decision"
        raise UsageError(
            f"decision {record.id} is already superseded by {by}; supersede {by} instead",
            **records.located(tx, KIND, record.path, "superseded_by" if current.superseded_by else "status"),
        )
    return record


def _refuse_cycle(ctx: Context, initiative: Initiative, old: str, new: str) -> None:
    """Refuse `new` superseding `old` when `old` already (transitively) supersedes `new`."""
    found, _problems = recordfiles.load_all(ctx, initiative, KIND)
    supersedes = {r.id: r.data.get("supersedes") for r in found}
    chain = [old]
    while True:
        previous = supersedes.get(chain[-1])
        if not isinstance(previous, str) or previous in chain:
            return
        chain.append(previous)
        if previous == new:
            path = " supersedes ".join(chain)
            raise UsageError(f"{new} cannot supersede {old}: that would make a cycle ({path})", field="by")
