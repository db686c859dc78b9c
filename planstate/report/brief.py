"""The resume brief: where an initiative is, what was being done, what is next and what is in the way.

One computation (`brief`) feeds both outputs: `Brief.to_dict()` for `--json` and the
`resume.md.j2` template for people. It never guesses past untrustworthy files: a file that does
not parse or holds git conflict markers is reported first, with the fix. Everything relative to
the current time (how long a phase has run, stall detection) uses `planstate.core.clock.now()`, so
`PLANSTATE_NOW` freezes it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from planstate.check.findings import CONTRADICTIONS, Finding
from planstate.core.clock import now as clock_now
from planstate.core.clock import parse_datetime
from planstate.model import verdicts
from planstate.model.derived import percent_of
from planstate.model.kinds import (
    FINISHED,
    OPEN_BLOCKERS,
    State,
    is_complete,
    phase_at,
    phase_numbers,
    to_json,
)
from planstate.report import doubts
from planstate.report.doubts import SHOWN_FILES
from planstate.report.notes import notes
from planstate.store import recordfiles

if TYPE_CHECKING:
    from pathlib import Path

    from planstate.check.checks import Checker
    from planstate.check.reader import FileRead
    from planstate.store.context import Context
    from planstate.store.folders import Vouched
    from planstate.store.initiatives import Initiative
    from planstate.store.recordfiles import Summary

RECENT_DECISIONS = 5
SHOWN_BLOCKERS = 8
HIDDEN_DECISIONS = ("superseded", "rejected")  # decisions that no longer (or never did) hold
TEXT_LIMIT = 160  # characters of one user text shown in the brief
ELLIPSIS = "…"


@dataclass
class Brief:
    """The resume brief as data; `to_dict()` is the `--json` output."""

    initiative: str | None
    title: str | None
    file: str
    now: datetime
    trust: list[dict[str, Any]] = field(default_factory=list)
    status: str | None = None
    blocked_phases: list[dict[str, Any]] | None = None
    escalate: bool | None = None
    lifecycle: dict[str, Any] | None = None
    progress: dict[str, Any] | None = None
    current_phase: dict[str, Any] | None = None
    timing: dict[str, Any] | None = None
    checkpoints: list[dict[str, Any]] | None = None
    blockers: dict[str, Any] | None = None
    decisions: dict[str, Any] | None = None
    last_session: dict[str, Any] | None = None
    sessions: dict[str, Any] | None = None
    next_action: str | None = None
    position: dict[str, Any] | None = None
    open_questions: list[str] | None = None
    files_modified: dict[str, Any] | None = None
    key_implementations: list[str] | None = None
    notes: str | None = None  # people's text in STATE.md's body, outside the generated regions
    verification: list[dict[str, Any]] | None = None
    dropped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The brief as JSON-ready data (the documented `--json` schema)."""
        out: dict[str, Any] = {
            "initiative": self.initiative,
            "title": self.title,
            "path": self.file,
            "now": self.now,
            "trusted": not self.trust,
            "trust": self.trust,
            "status": self.status,
            "blocked_phases": self.blocked_phases,
            "escalate": self.escalate,
            "lifecycle": self.lifecycle,
            "progress": self.progress,
            "current_phase": self.current_phase,
            "timing": self.timing,
            "checkpoints": self.checkpoints,
            "blockers": self.blockers,
            "decisions": self.decisions,
            "last_session": self.last_session,
            "sessions": self.sessions,
            "next_action": self.next_action,
            "position": self.position,
            "open_questions": self.open_questions,
            "files_modified": self.files_modified,
            "key_implementations": self.key_implementations,
            "notes": self.notes,
            "verification": self.verification,
            "dropped": self.dropped,
        }
        return to_json(out)  # type: ignore[no-any-return]

    def without(self, part: str, *, note: bool = True) -> Brief:
        """A copy of the brief with one part dropped (and, with `note`, said so in `dropped`)."""
        from dataclasses import replace

        dropped = [*self.dropped, part] if note else self.dropped
        return replace(self, **{part: None}, dropped=dropped)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- computing


def brief(ctx: Context, *, now: datetime | None = None) -> Brief:
    """Compute the resume brief of the workspace's target initiative.

    The checks (`checks.Checker`) judge the initiative's files first: what they find that makes the
    state untrustworthy (conflicts, files that do not parse, values that fail validation, a state that
    contradicts itself) is said first, and the brief uses the STATE.md and history they read. The
    records come from their summaries and facts in the store, each vouched for by its
    file's stat identity (recordfiles.summaries): only the few records the brief shows are read whole.
    """
    from planstate.check.checks import STALE_AFTER, Checker

    when = now or clock_now()
    initiative = ctx.target
    shown = ctx.display(initiative.state_path)
    out = Brief(None, None, shown, when)
    checker = Checker(ctx, STALE_AFTER, regions=False, resume_files=False, drivers=False, memo=True)
    findings = checker.run(when, only=initiative)
    out.trust = _trust(findings)
    state_read = checker.reads.get(initiative.state_path)
    data = state_read.mapping if state_read is not None else None
    if data is not None:
        out.initiative = data.get("initiative") if isinstance(data.get("initiative"), str) else None
        out.title = data.get("title") if isinstance(data.get("title"), str) else None
    if state_read is None or not state_read.valid or data is None:
        return out  # the facts below would come from a file that cannot be read, or from values known to be wrong
    state = State(data)
    history_read = checker.reads.get(initiative.history_path)
    entries = history_read.entries if history_read is not None and not history_read.read_failed else []

    out.lifecycle = _lifecycle(state)
    out.progress = _progress(state)
    out.current_phase = _current_phase(state, when, entries)
    out.timing = _timing(state, out.current_phase)
    out.checkpoints = _failed_checkpoints(state)
    part = _parts(ctx, checker, initiative, when)
    part["blocked"] = _blocked(ctx, state, [_Open(*item) for item in part["open"]], initiative.folder("blocker"))
    blocked = [dict(item) for item in part["blocked"]]
    out.escalate = verdicts.escalate(state, blocked)
    out.status = verdicts.status(state, blocked, out.timing["possibly_stalled"])
    for item in blocked:
        item["blockers"] = [{**b, "title": shorten(b["title"], 80)} for b in item["blockers"]]
    out.blocked_phases = blocked
    out.blockers = part["blockers"]
    out.decisions = part["decisions"]
    active = [Item(record_id, data, None) for record_id, data in part["active"]]
    newest = Item(part["newest"][0], part["newest"][1], None) if part["newest"] is not None else None
    out.last_session, out.sessions = _sessions(ctx, active, newest, part["sessions"], when)
    out.next_action = state.next_action.strip() if state.next_action else None
    out.position = _position(state)
    out.open_questions = list(state.resume_context.open_questions)
    out.files_modified = _files(ctx, state)
    out.key_implementations = [shorten(item) for item in state.resume_context.key_implementations]
    out.notes = notes(state_read.raw or b"")
    open_blockers = [Item(record_id, data, None) for record_id, _name, data, _identified in part["open"]]
    ended = [{"ended": part["ended"]}] if part["ended"] is not None else []
    sessions_data = [*ended, *(item.data for item in active)]  # the latest end and the active ones: all it reads
    out.verification = doubts.verify(ctx, state, open_blockers, sessions_data) + doubts.typos(findings)
    ctx.save_cache()  # what reading noted (a record read again) serves the next process
    return out


def _parts(ctx: Context, checker: Checker, initiative: Initiative, when: datetime) -> dict[str, Any]:
    """What the brief derives from each kind of record alone (`_PARTS`), whatever STATE.md, the clock and the
    heartbeats say: from the checks' reads of a folder when they read it whole, else from queries over the store's
    rows of it (store/folders.py: only the records shown are read), else from the summaries. While no file changed
    they come from a memo kept beside the checks' own, under the same key (store/memo.py)."""
    from planstate.store import cache, folders, memo

    label = f"brief-{checker.memo_label}"
    key = checker.memo_key
    kept = memo.recall(ctx.store, label, key) if key is not None else memo.MISS
    if isinstance(kept, str):
        try:
            parts = cache.decode(kept)
        except ValueError:
            parts = None
        if isinstance(parts, dict) and parts.keys() == _KEYS:
            return parts
    read = dict(checker.records.items())  # the folders the checks read whole (none when they answered from memos)
    out: dict[str, Any] = {}
    for kind, part in _PARTS.items():
        folder = initiative.folder(kind)
        found = None
        if folder not in read:
            vouched = folders.vouch(ctx, folder, kind, checker.listings.get(str(folder)))
            if vouched is not None and not vouched.strange:
                found = _FROM_STORE[kind](ctx, vouched)
        if found is None:
            found = part(ctx, initiative, read, when)
        out.update(found)
    text = cache.exact_json(out) if key is not None else None
    if key is not None and text is not None:
        memo.remember(ctx.store, ctx.root, label, key, text)
    return out


# What the parts hold, by name: a memo of another shape is not used.
_KEYS = {"blockers", "open", "sessions", "active", "newest", "ended", "decisions"}


def _blocker_part(
    ctx: Context, initiative: Initiative, read: dict[Path, list[FileRead]], when: datetime
) -> dict[str, Any]:
    """The open blockers (and the facts of each that say which phases it blocks), as plain data."""
    blockers, blockers_unusable, known = _summaries(ctx, initiative, "blocker", read)
    open_blockers = _with_facts(ctx, [s for s in blockers if s.status in OPEN_BLOCKERS], known)
    return _open_part(ctx, open_blockers, len(blockers), blockers_unusable)


def _open_part(ctx: Context, open_blockers: list[Item], total: int, unusable: int) -> dict[str, Any]:
    """The blockers part: the `open_blockers` (by their facts, in file-name order) of the `total` valid ones."""
    return {
        "blockers": _blockers(ctx, open_blockers, total, unusable),
        "open": [
            [
                r.id,
                r.summary.name if r.summary is not None else r.name,
                {k: r.data[k] for k in ("status", "affects") if k in r.data},
                r.data.get("identified"),
            ]
            for r in open_blockers
        ],
    }


def _session_part(
    ctx: Context, initiative: Initiative, read: dict[Path, list[FileRead]], when: datetime
) -> dict[str, Any]:
    """The sessions that are `active`, the newest one that is not, the latest end of any, and the counts."""
    sessions, sessions_unusable, known = _summaries(ctx, initiative, "session", read)
    session_items = _with_facts(ctx, sessions, known)
    earliest = datetime.min.replace(tzinfo=when.tzinfo)
    active = [_whole(ctx, r) for r in session_items if r.data.get("status") == "active"]
    over = [r for r in session_items if r.data.get("status") != "active"]
    newest = _whole(ctx, max(over, key=lambda r: _started(r, earliest))) if over else None
    ends = [end for r in session_items if (end := parse_datetime(r.data.get("ended"))) is not None]
    return {
        "sessions": [len(session_items), sessions_unusable],
        "active": [[r.id, r.data] for r in active],
        "newest": [newest.id, newest.data] if newest is not None else None,
        "ended": max(ends, default=None),
    }


def _decision_part(
    ctx: Context, initiative: Initiative, read: dict[Path, list[FileRead]], when: datetime
) -> dict[str, Any]:
    """The decisions that still hold, newest first, and the counts."""
    return {"decisions": _decisions(ctx, *_summaries(ctx, initiative, "decision", read)[:2])}


def _counts(ctx: Context, vouched: Vouched) -> tuple[int, int]:
    """How many records of a vouched folder are valid, and how many record files are not (or cannot be read)."""
    from planstate.store.folders import counts

    found = counts(ctx, vouched)
    return found.valid, found.total - found.valid


def _items(ctx: Context, vouched: Vouched, where: str, args: tuple[Any, ...] = (), tail: str = "") -> list[Item]:
    """The valid records of a vouched folder that the SQL test `where` selects, as items holding their facts."""
    from planstate.store import folders

    found = folders.facts(ctx, vouched, where, args, tail or "ORDER BY name")
    summaries = {}
    for name, _facts in found:
        summaries[name] = recordfiles.Summary(vouched.folder, name, "", "", None, "", None, False)
    return [Item(str(facts.get("id")), facts, summaries[name]) for name, facts in found]


def _decisions_from_store(ctx: Context, vouched: Vouched) -> dict[str, Any]:
    """The decisions part from the store: the counts by status, and the newest that still hold (each read whole)."""
    from planstate.store.folders import counts, hidden_test

    found = counts(ctx, vouched)
    superseded, rejected = (found.valid_by_status.get(status, 0) for status in ("superseded", "rejected"))
    valid, unusable = found.valid, found.total - found.valid
    rows = ctx.store.select(
        vouched.prefix,
        "name, rid, ord, status",
        f"valid = 1 AND {hidden_test(HIDDEN_DECISIONS)}",
        (),
        f"ORDER BY ord DESC, rid DESC, name ASC LIMIT {RECENT_DECISIONS}",
    )
    newest = [
        recordfiles.Summary(vouched.folder, name, rid, order, status, "", None, False)
        for name, rid, order, status in rows
    ]
    part = _decisions_shown(ctx, newest, [], unusable)
    part.update(total=valid, superseded=superseded, rejected=rejected)
    return {"decisions": part}


def _blockers_from_store(ctx: Context, vouched: Vouched) -> dict[str, Any]:
    """The blockers part from the store: the open blockers' facts, and the counts."""
    valid, unusable = _counts(ctx, vouched)
    marks = ", ".join("?" * len(OPEN_BLOCKERS))
    items = _items(ctx, vouched, f"status IN ({marks})", tuple(OPEN_BLOCKERS))
    return _open_part(ctx, items, valid, unusable)


def _sessions_from_store(ctx: Context, vouched: Vouched) -> dict[str, Any]:
    """The sessions part from the store: the sessions still `active` (read whole), the newest one that is not (the
    first in file-name order of those with the latest start, then id, as `max` picks it from the summaries) and
    the latest end, with the counts."""
    valid, unusable = _counts(ctx, vouched)
    active = [_whole(ctx, item) for item in _items(ctx, vouched, "status = 'active'")]
    over = _items(
        ctx, vouched, "status IS NULL OR status != 'active'", (), "ORDER BY started DESC, rid DESC, name ASC LIMIT 1"
    )
    newest = _whole(ctx, over[0]) if over else None
    last = _items(ctx, vouched, "ended IS NOT NULL", (), "ORDER BY ended DESC, name ASC LIMIT 1")
    return {
        "sessions": [valid, unusable],
        "active": [[r.id, r.data] for r in active],
        "newest": [newest.id, newest.data] if newest is not None else None,
        "ended": parse_datetime(last[0].data.get("ended")) if last else None,
    }


_PARTS = {"blocker": _blocker_part, "session": _session_part, "decision": _decision_part}
_FROM_STORE = {"blocker": _blockers_from_store, "session": _sessions_from_store, "decision": _decisions_from_store}


def _started(record: Item, earliest: datetime) -> tuple[datetime, str]:
    """A session's sort key: its start (`earliest` for one without a readable start), then its id."""
    return parse_datetime(record.data.get("started")) or earliest, record.id


class Item(NamedTuple):
    """A valid record the brief judges one by one: its id, its data (only its facts, recordfiles.FACTS, while
    `summary` is set: `_whole` reads the rest) and its summary."""

    id: str
    data: dict[str, Any]
    summary: Summary | None
    name: str | None = None  # its file's name, when `summary` is None


def _summaries(
    ctx: Context, initiative: Initiative, kind: str, read: dict[Path, list[FileRead]]
) -> tuple[list[Summary], int, dict[str, dict[str, Any]]]:
    """The summaries of the valid records of `kind`, how many record files are not valid or cannot be read, and
    the facts (or whole front matter) known of them by file name. From the checks' reads of the folder when they
    read it (`read`); else from the store (recordfiles.summaries: a record whose stat identity vouches for its
    cached summary is not read), its facts then asked for only of the records that need them (`_with_facts`)."""
    folder = initiative.folder(kind)
    reads = read.get(folder)
    if reads is None:
        found, problems = recordfiles.summaries(ctx, initiative, kind)
        valid = [summary for summary in found if summary.problem is None]
        return valid, len(found) - len(valid) + len(problems), {}
    make = recordfiles.Summary._make
    out: list[Summary] = []
    known: dict[str, dict[str, Any]] = {}
    for one in reads:
        if not one.valid:
            continue
        values = one.summary  # as the store keeps it: id, order, status, fingerprint, problem, unknown keys
        summary = make((one.folder, one.name, *values)) if values else recordfiles.summarize(kind, one.path, one.data)
        if summary is not None:
            out.append(summary)
            known[one.name] = one.data
    return out, len(reads) - len(out), known


def _with_facts(ctx: Context, summaries: list[Summary], known: dict[str, dict[str, Any]]) -> list[Item]:
    """The records summarized as items holding their facts (`known`, else from the store, for those whose stat
    identity vouches for them), or their whole front matter (read now, for the others); one gone or broken since it
    was summarized is left out."""
    from planstate.store import folders

    if not summaries:
        return []
    missing = [summary.name for summary in summaries if summary.name not in known]
    facts = {**known, **folders.facts_of(ctx, summaries[0].folder, missing)} if missing else known
    out: list[Item] = []
    for summary in summaries:
        data = facts.get(summary.name)
        if data is not None:
            out.append(Item(summary.id, data, summary))
            continue
        whole = recordfiles.mapping(ctx, summary.path, [])
        if whole is not None:
            out.append(Item(summary.id, whole, None, summary.name))
    return out


def _whole(ctx: Context, item: Item) -> Item:
    """An item with its whole front matter: its facts when the rest can no longer be had (its file changed or
    went)."""
    if item.summary is None:
        return item
    data = recordfiles.mapping(ctx, item.summary.path, [])
    return Item(item.id, data, None, item.summary.name) if data is not None else item


class _Open(NamedTuple):
    """An open blocker as the brief's memo keeps it: its id, its file's name, the facts that say which phases it
    blocks (status, affects), and when it was identified (the order of a phase's blockers)."""

    id: str
    name: str | None
    facts: dict[str, Any]
    identified: Any


def _blocked(ctx: Context, state: State, open_blockers: list[_Open], folder: Path) -> list[dict[str, Any]]:
    """The blocked phases, judged from the open blockers' facts (verdicts.blocked_by_facts); a blocker that blocks
    one is read whole (for its title), or stays its facts when it can no longer be read."""

    def whole(r: _Open) -> tuple[str, dict[str, Any]]:
        data = recordfiles.mapping(ctx, folder / r.name, []) if r.name is not None else None
        return r.id, data if data is not None else {**r.facts, "identified": r.identified}

    known = [(r.id, {**r.facts, "identified": r.identified}, r) for r in open_blockers]
    return verdicts.blocked_by_facts(state, known, lambda k: whole(k[2]))


# What makes a state untrustworthy, most serious first: a merge left half done, a file that cannot be read, a
# value that breaks the format, and then a state whose parts contradict each other.
TRUST_ORDER = ("conflict-marker", "parse-error", "schema-error", *CONTRADICTIONS)


def _trust(findings: list[Finding]) -> list[dict[str, Any]]:
    """The findings that make the state untrustworthy, as trust items, most serious first."""
    out = []
    for finding in findings:
        if finding.code not in TRUST_ORDER or finding.severity != "error":
            continue
        if finding.code == "history-mismatch" and finding.line is None:
            continue  # no history at all (a STATE.md from an older tool): nothing contradicts the state
        fix = finding.hint if "`planstate check" in finding.hint else f"{finding.hint}; then run `planstate check`"
        problem = f"{finding.location()}: {finding._subject()}{finding.message}"
        out.append({"problem": problem, "code": finding.code, "path": finding.file, "line": finding.line, "fix": fix})
    out.sort(key=lambda item: TRUST_ORDER.index(item["code"]))
    return out


def shorten(text: Any, limit: int = TEXT_LIMIT) -> str:
    """One line of user text, cut at `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _lifecycle(state: State) -> dict[str, Any]:
    """The lifecycle state with why: reason, who, context, resumes, and the error of `error` and `failed`."""
    lc = state.lifecycle
    out: dict[str, Any] = {
        "state": lc.state,
        "since": lc.since,
        "reason": lc.reason,
        "by": lc.by,
        "context": lc.context,
        "resume_count": lc.resume_count,
        "completed_at": lc.completed_at,
        "error": None,
    }
    if lc.error is not None and lc.state in ("error", "failed"):
        err = lc.error
        out["error"] = {"message": err.message, "at": err.at, "retries": err.retries, "details": dict(err.details)}
    return out


def _progress(state: State) -> dict[str, Any]:
    """Phases completed of the total, the percent, completion, and the current phase's task counts."""
    numbers = phase_numbers(state)
    done = sum(1 for p in state.phases if p.status == "completed")
    total = len(numbers)
    return {
        "phases_total": total,
        "phases_completed": done,
        "percent": percent_of(done, total),
        "complete": is_complete(state),
        "tasks_total": state.progress.current_phase_tasks if state.progress.exists() else None,
        "tasks_completed": state.progress.current_phase_completed if state.progress.exists() else None,
    }


def _current_phase(state: State, when: datetime, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The phase the position points at, with how long it has run while the initiative was active."""
    position = state.position
    if not position.exists():
        return None
    number = position.phase
    phase = phase_at(state, number)
    if phase is None:
        return {"number": number, "name": None, "status": None, "started": None, "running_seconds": None}
    return {
        "number": number,
        "name": phase.name,
        "status": phase.status,
        "checkpoint": verdicts.checkpoint(phase),
        "started": phase.started,
        "running_seconds": verdicts.running_seconds(state, when, entries),
        "attempts": phase.attempts,
    }


def _timing(state: State, current: dict[str, Any] | None) -> dict[str, Any]:
    """Average completed-phase duration, estimate of the time remaining, and whether the current phase stalled."""
    durations = verdicts.completed_durations(state)
    total = len(phase_numbers(state))
    done = sum(1 for p in state.phases if p.status in FINISHED)
    remaining = max(0, total - done)
    average = verdicts.average(durations)
    running = current.get("running_seconds") if current else None
    stalled = verdicts.stalled(running, durations)
    return {
        "timed_phases": len(durations),
        "average_phase_seconds": round(average) if average is not None else None,
        "phases_remaining": remaining,
        "estimated_remaining_seconds": round(average * remaining) if average is not None else None,
        "possibly_stalled": stalled,
        "no_timing_data": not durations,  # what the text says: no average, so no estimate and no stall claim
    }


def _failed_checkpoints(state: State) -> list[dict[str, Any]]:
    """Every phase whose checkpoint or status failed, with its evidence and failure."""
    numbers = phase_numbers(state)
    out = []
    for i, phase in enumerate(state.phases):
        if verdicts.checkpoint(phase) == "failed":
            out.append(
                {
                    "number": numbers.start + i,
                    "name": phase.name,
                    "status": phase.status,
                    "checkpoint": verdicts.checkpoint(phase),
                    "evidence": dict(phase.evidence),
                    "failure": phase.failure,
                }
            )
    return out


def _blockers(ctx: Context, items: list[Item], total: int, unusable: int) -> dict[str, Any]:
    """The open blockers (new, active, bypassed) of the `total` valid ones, active ones first, then oldest first; at
    most SHOWN_BLOCKERS."""
    open_ = [r for r in items if r.data.get("status") in OPEN_BLOCKERS]
    order = {"active": 0, "new": 1, "bypassed": 2}
    open_.sort(key=lambda r: (order.get(str(r.data.get("status")), 3), str(r.data.get("identified"))))
    shown = [
        {
            "id": r.id,
            "status": r.data.get("status"),
            "title": shorten(r.data.get("title") or r.data.get("description") or ""),
            "description": shorten(r.data.get("description") or ""),
            "affects": [str(a) for a in r.data.get("affects") or []],
            "workaround": shorten(r.data["workaround"]) if r.data.get("workaround") else None,
        }
        for r in (_whole(ctx, item) for item in open_[:SHOWN_BLOCKERS])
    ]
    return {"open": len(open_), "total": total, "unreadable": unusable, "items": shown}


def _decisions(ctx: Context, valid: list[Summary], unusable: int) -> dict[str, Any]:
    """The most recent decisions that still hold, newest first in the order the regions use (their date, then
    id): superseded and rejected ones are hidden, proposed ones shown. Counted from their summaries: only the ones
    shown are read."""
    status = [str(summary.status) for summary in valid]
    live = [summary for summary, current in zip(valid, status, strict=True) if current not in HIDDEN_DECISIONS]
    newest = heapq.nlargest(RECENT_DECISIONS, live, key=lambda summary: (summary.order, summary.id))
    return _decisions_shown(ctx, newest, status, unusable)


def _decisions_shown(ctx: Context, newest: list[Summary], status: list[str], unusable: int) -> dict[str, Any]:
    """The decisions part: the `newest` decisions that still hold (each read whole), and the counts of the valid
    ones by `status` (one each) and of those that cannot be used."""
    shown = [
        {
            "id": r.id,
            "date": r.data.get("date"),
            "status": r.data.get("status"),
            "title": shorten(r.data.get("title") or ""),
            "decision": shorten(r.data.get("decision") or ""),
            "reason": shorten(r.data.get("reason") or ""),
            "reversible": r.data.get("reversible", True),
        }
        for r in (_whole(ctx, Item(summary.id, {}, summary)) for summary in newest)
    ]
    return {
        "total": len(status),
        "superseded": status.count("superseded"),
        "rejected": status.count("rejected"),
        "unreadable": unusable,
        "items": shown,
    }


def _sessions(
    ctx: Context, active: list[Item], newest: Item | None, counts: list[int], when: datetime
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The last session to pick up from, and the sessions active now, of the sessions whose `counts` are their
    total and how many cannot be read: `active` are those still `active`, `newest` the newest of the others.

    The last session is the most recent one that is over: ended, crashed, or still `active` but silent for longer
    than the stale threshold (its agent probably crashed). Sessions that are alive are listed apart, so an agent
    that has just started its own session still sees the handoff of the one before. Only the heartbeats of the
    sessions still `active` and of the last one are looked at: a session that is over is over whatever its heartbeat
    says (a year of sessions, each a heartbeat file to look for, cost more than the rest of the brief). The clock
    and the heartbeats are machine-local: this is computed on every call, never memoized.
    """
    from planstate.check.checks import STALE_AFTER
    from planstate.ops.heartbeats import last_heartbeat

    earliest = datetime.min.replace(tzinfo=when.tzinfo)

    def seen(record: Item) -> datetime | None:
        """A session's last sign of life: its heartbeat or its start."""
        return verdicts.last_seen(last_heartbeat(ctx, record.id), record.data.get("started"))

    live: list[tuple[Item, datetime | None]] = []
    over: list[Item] = []
    for record in active:
        latest = seen(record)
        if latest is not None and not verdicts.silent(latest, when, STALE_AFTER):
            live.append((record, latest))
            continue
        over.append(record)
    if newest is not None:
        over.append(newest)
    live.sort(key=lambda pair: _started(pair[0], earliest))
    total, unusable = counts
    summary = {"total": total, "unreadable": unusable, "active": [_live_session(r, latest) for r, latest in live]}
    if not over:
        return None, summary
    last = max(over, key=lambda record: _started(record, earliest))
    return _last_session(last, seen(last), when), summary


def _live_session(r: Item, last_seen: datetime | None) -> dict[str, Any]:
    """A session that is alive, as the brief lists it."""
    return {
        "id": r.id,
        "agent": r.data.get("agent"),
        "started": r.data.get("started"),
        "last_seen": last_seen,
        "working_on": shorten(r.data["working_on"]) if r.data.get("working_on") else None,
        "resumed_from": r.data.get("resumed_from"),
    }


def _last_session(last: Item, last_seen: datetime | None, when: datetime) -> dict[str, Any]:
    """The session to pick up from: its handoff, what it completed and the issues it met (five of each), and how
    long it has been silent when it is still `active`."""
    d = last.data
    silent = None
    if d.get("status") == "active" and last_seen is not None:
        silent = int((when - last_seen).total_seconds())
    return {
        "id": last.id,
        "agent": d.get("agent"),
        "status": d.get("status"),
        "started": d.get("started"),
        "ended": d.get("ended"),
        "last_seen": last_seen,
        "silent_seconds": silent,
        "working_on": d.get("working_on"),
        "completed": [shorten(c) for c in d.get("completed") or []][:5],
        "issues": [shorten(i) for i in d.get("issues") or []][:5],
        "handoff_reason": d.get("handoff_reason"),
        "notes": shorten(d["notes"]) if d.get("notes") else None,
    }


def _position(state: State) -> dict[str, Any] | None:
    """The set fields of the position besides the phase."""
    if not state.position.exists():
        return None
    p = state.position._data()
    return {k: p.get(k) for k in ("plan", "plan_name", "task", "wave", "status", "step") if p.get(k) is not None}


def _files(ctx: Context, state: State) -> dict[str, Any]:
    """The files the resume context lists as modified that still exist; the missing ones are only counted, since
    the verification lists them."""
    files = list(state.resume_context.files_modified)
    missing = set(doubts.missing(ctx, state))
    present = [name for name in files if name not in missing]
    return {"total": len(files), "missing": len(files) - len(present), "items": present[:SHOWN_FILES]}
