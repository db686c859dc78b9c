"""The resume brief: where an initiative is, what was being done, what is next and what is in the way.

One computation (`brief`) feeds both outputs: `Brief.to_dict()` for `--json` and the
`resume.md.j2` template for people. It never guesses past untrustworthy files: a file that does
not parse or holds git conflict markers is reported first, with the fix. Everything relative to
the current time (how long a phase has run, stall detection) uses `planstate.core.clock.now()`, so
`PLANSTATE_NOW` freezes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any

from planstate.check.findings import CONTRADICTIONS, Finding
from planstate.core.clock import now as clock_now
from planstate.core.clock import parse_datetime
from planstate.model import verdicts
from planstate.model.derived import percent_of
from planstate.model.kinds import (
    FINISHED,
    OPEN_BLOCKERS,
    State,
    affected_phases,
    is_complete,
    phase_at,
    phase_numbers,
    to_json,
)
from planstate.store import recordfiles

if TYPE_CHECKING:
    from planstate.check.checks import Checker
    from planstate.store.context import Context
    from planstate.store.initiatives import Initiative

RECENT_DECISIONS = 5
SHOWN_BLOCKERS = 8
SHOWN_FILES = 10
SHOWN_GIT_FILES = 10
HIDDEN_DECISIONS = ("superseded", "rejected")  # decisions that no longer (or never did) hold
TEXT_LIMIT = 160  # characters of one user text shown in the brief
ACTIVATION_LIMIT = 120  # characters of the line `--activate` prints above the brief (it counts toward the budget)
DEFAULT_BUDGET = 4000  # characters of the text brief when no --budget is given
ELLIPSIS = "…"

MIN_BUDGET = 400  # below this, a budget cannot keep the heading, the status and a useful next action
# Parts of the brief that a budget may drop, least important first. What is never dropped: the heading, the
# status with the lifecycle's why, and the next action (shortened with an ellipsis only when nothing else is left).
DROP_ORDER = (
    "notes",
    "files_modified",
    "key_implementations",
    "open_questions",
    "decisions",
    "timing",
    "last_session",
    "sessions",
    "checkpoints",
    "blockers",
    "verification",
    "position",
    "current_phase",
    "progress",
)


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
            "file": self.file,
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

    The initiative's files are read once, by the checks (`checks.Checker`): what they find that makes
    the state untrustworthy (conflicts, files that do not parse, values that fail validation, a state
    that contradicts itself) is said first, and the brief uses the same bytes they read.
    """
    from planstate.check.checks import STALE_AFTER, Checker

    when = now or clock_now()
    initiative = ctx.target
    shown = ctx.display(initiative.state_path)
    out = Brief(None, None, shown, when)
    checker = Checker(ctx, STALE_AFTER, regions=False, resume_files=False, drivers=False)
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
    loaded, unusable = _records(checker, initiative)
    history_read = checker.reads.get(initiative.history_path)
    entries = history_read.entries if history_read is not None and not history_read.read_failed else []

    out.lifecycle = _lifecycle(state)
    out.progress = _progress(state)
    out.current_phase = _current_phase(state, when, entries)
    out.timing = _timing(state, out.current_phase)
    out.checkpoints = _failed_checkpoints(state)
    blocked = verdicts.blocked(state, [(r.id, r.data) for r in loaded["blocker"]])
    out.escalate = verdicts.escalate(state, blocked)
    out.status = verdicts.status(state, blocked, out.timing["possibly_stalled"])
    for item in blocked:
        item["blockers"] = [{**b, "title": shorten(b["title"], 80)} for b in item["blockers"]]
    out.blocked_phases = blocked
    out.blockers = _blockers(loaded["blocker"], unusable["blocker"])
    out.decisions = _decisions(loaded["decision"], unusable["decision"])
    out.last_session, out.sessions = _sessions(ctx, loaded["session"], unusable["session"], when)
    out.next_action = state.next_action.strip() if state.next_action else None
    out.position = _position(state)
    out.open_questions = list(state.resume_context.open_questions)
    out.files_modified = _files(ctx, state)
    out.key_implementations = [shorten(item) for item in state.resume_context.key_implementations]
    out.notes = _notes(state_read.raw or b"")
    out.verification = _verify(ctx, state, loaded["blocker"], loaded["session"]) + _typos(findings)
    return out


def _records(checker: Checker, initiative: Initiative) -> tuple[dict[str, list[recordfiles.Record]], dict[str, int]]:
    """The valid records of each kind as the checks read them, and how many of each kind were not valid."""
    loaded: dict[str, list[recordfiles.Record]] = {}
    unusable: dict[str, int] = {}
    for kind in ("decision", "blocker", "session"):
        reads = [checker.reads[p] for p in checker.reader.listing(initiative.folder(kind)) if p in checker.reads]
        loaded[kind] = [recordfiles.Record(kind, r.path, r.data) for r in reads if r.valid]
        unusable[kind] = sum(1 for r in reads if not r.valid)
    return loaded, unusable


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
        out.append({"problem": problem, "code": finding.code, "file": finding.file, "line": finding.line, "fix": fix})
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
    average = mean(durations) if durations else None
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
                    "phase": numbers.start + i,
                    "name": phase.name,
                    "status": phase.status,
                    "checkpoint": verdicts.checkpoint(phase),
                    "evidence": dict(phase.evidence),
                    "failure": phase.failure,
                }
            )
    return out


def _blockers(items: list[recordfiles.Record], unusable: int) -> dict[str, Any]:
    """The open blockers (new, active, bypassed), active ones first, then oldest first; at most SHOWN_BLOCKERS."""
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
        for r in open_[:SHOWN_BLOCKERS]
    ]
    return {"open": len(open_), "total": len(items), "unreadable": unusable, "items": shown}


def _decisions(items: list[recordfiles.Record], unusable: int) -> dict[str, Any]:
    """The most recent decisions that still hold: superseded and rejected ones are hidden, proposed ones shown."""
    status = [str(r.data.get("status")) for r in items]
    live = [r for r in items if r.data.get("status") not in HIDDEN_DECISIONS]
    live.sort(key=lambda r: (str(r.data.get("date")), r.id), reverse=True)
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
        for r in live[:RECENT_DECISIONS]
    ]
    return {
        "total": len(items),
        "superseded": status.count("superseded"),
        "rejected": status.count("rejected"),
        "unreadable": unusable,
        "items": shown,
    }


def _sessions(
    ctx: Context, items: list[recordfiles.Record], unusable: int, when: datetime
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The last session to pick up from, and the sessions active now.

    The last session is the most recent one that is over: ended, crashed, or still `active` but silent for longer
    than the stale threshold (its agent probably crashed). Sessions that are alive are listed apart, so an agent
    that has just started its own session still sees the handoff of the one before.
    """
    from planstate.check.checks import STALE_AFTER
    from planstate.ops.heartbeats import last_heartbeat

    def started(r: recordfiles.Record) -> tuple[datetime, str]:
        """A sort key: the start (the earliest time for a session without a readable one), then the id."""
        return parse_datetime(r.data.get("started")) or datetime.min.replace(tzinfo=when.tzinfo), r.id

    seen: dict[str, datetime | None] = {}  # each session's last sign of life: its heartbeat or its start
    live: list[recordfiles.Record] = []
    over: list[recordfiles.Record] = []
    for record in items:
        latest = seen[record.id] = verdicts.last_seen(last_heartbeat(ctx, record.id), record.data.get("started"))
        alive = latest is not None and not verdicts.silent(latest, when, STALE_AFTER)
        (live if record.data.get("status") == "active" and alive else over).append(record)
    active = [_live_session(r, seen[r.id]) for r in sorted(live, key=started)]
    summary = {"total": len(items), "unreadable": unusable, "active": active}
    if not over:
        return None, summary
    last = max(over, key=started)
    return _last_session(last, seen[last.id], when), summary


def _live_session(r: recordfiles.Record, last_seen: datetime | None) -> dict[str, Any]:
    """A session that is alive, as the brief lists it."""
    return {
        "id": r.id,
        "agent": r.data.get("agent"),
        "started": r.data.get("started"),
        "last_seen": last_seen,
        "working_on": shorten(r.data["working_on"]) if r.data.get("working_on") else None,
        "resumed_from": r.data.get("resumed_from"),
    }


def _last_session(last: recordfiles.Record, last_seen: datetime | None, when: datetime) -> dict[str, Any]:
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
    missing = set(_missing(ctx, state))
    present = [name for name in files if name not in missing]
    return {"total": len(files), "missing": len(files) - len(present), "items": present[:SHOWN_FILES]}


def _missing(ctx: Context, state: State) -> list[str]:
    """The files the resume context lists as modified that no longer exist (relative to the project folder)."""
    project = ctx.root.parent
    return [name for name in state.resume_context.files_modified if not (project / name).exists()]


def _verify(
    ctx: Context, state: State, blockers: list[recordfiles.Record], sessions: list[recordfiles.Record]
) -> list[dict[str, Any]]:
    """Verify the state before resuming from it: the resume context against the working tree, and the blockers
    against the phases; one flag per doubt, in the order of `VERIFICATIONS`."""
    return [flag for verify in VERIFICATIONS for flag in verify(ctx, state, blockers, sessions)]


NOTES_LIMIT = 1200  # characters of people's notes the brief carries


def _notes(raw: bytes) -> str | None:
    """People's text in STATE.md's body: everything outside the generated regions but headings and the lines
    planstate's own STATE.md template writes there (its introduction), cut at NOTES_LIMIT characters."""
    from planstate.render.regions import split_body
    from planstate.text.markers import parse

    body, _ = split_body(raw)
    layout = parse(body)
    inside = {i for r in layout.regions for i in range(r.begin, r.end + 1)}
    scaffold = _template_lines()
    kept = [
        line.rstrip()
        for i, line in enumerate(layout.lines)
        if i not in inside and not line.lstrip().startswith("#") and not scaffold.fullmatch(line.strip())
    ]
    text = "\n".join(kept).strip()
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    if not text:
        return None
    return text if len(text) <= NOTES_LIMIT else text[:NOTES_LIMIT].rstrip() + ELLIPSIS


def _template_lines() -> re.Pattern[str]:
    """A pattern matching each line of the built-in STATE.md template's body, stripped (a `{{ value }}` in it
    matches anything): the text planstate wrote, not people."""
    from planstate.text.templates import builtin_dir

    try:
        text = (builtin_dir() / "STATE.md.j2").read_text(encoding="utf-8")
    except OSError:
        return re.compile(r"(?!)")
    body = text.split("\n---\n", 1)[-1]
    lines = {line.strip() for line in body.splitlines() if line.strip() and "{%" not in line}
    shapes = [".*".join(re.escape(part) for part in re.split(r"\{\{.*?\}\}", line)) for line in sorted(lines)]
    return re.compile("|".join(f"(?:{shape})" for shape in shapes) or r"(?!)")


def _typos(findings: list[Finding]) -> list[dict[str, Any]]:
    """Keys that look like a misspelt field (check's `unknown-key` with a "did you mean"): what they hold is not
    read, so the brief may say "none recorded" of a value that is there under another name."""
    return [
        {"kind": "unknown_key", "message": f"{f.location()}: {f.message} ({f.hint})"}
        for f in findings
        if f.code == "unknown-key" and f.hint.startswith("did you mean")
    ]


def _legacy_format(
    ctx: Context, state: State, blockers: list[recordfiles.Record], sessions: list[recordfiles.Record]
) -> list[dict[str, Any]]:
    """A STATE.md without a structure snapshot: completion is only inferred."""
    if state.structure.exists():
        return []
    message = "legacy format: no structure snapshot; completion is inferred from completed phases"
    return [{"kind": "legacy_format", "message": message}]


def _missing_files(
    ctx: Context, state: State, blockers: list[recordfiles.Record], sessions: list[recordfiles.Record]
) -> list[dict[str, Any]]:
    """Files the resume context lists as modified that no longer exist."""
    missing = _missing(ctx, state)
    if not missing:
        return []
    return [
        {
            "kind": "missing_files",
            "files": missing[:SHOWN_FILES],
            "count": len(missing),
            "message": f"{len(missing)} file{'s are' if len(missing) != 1 else ' is'} listed as modified "
            f"but no longer exist{'s' if len(missing) == 1 else ''}",
        }
    ]


def _unrecorded_changes(
    ctx: Context, state: State, blockers: list[recordfiles.Record], sessions: list[recordfiles.Record]
) -> list[dict[str, Any]]:
    """Files git says changed since the state's last news (see `_changes_since`) that the resume context does not
    mention (planning files aside)."""
    from planstate.core import git

    since, event = _changes_since(state, sessions)
    changed = git.changed_since(ctx.root.parent, since)
    if changed is None:
        return []
    planning = ctx.root.name + "/"
    mentioned = {_norm(n) for n in state.resume_context.files_modified}
    unmentioned = [c for c in changed if not c.startswith(planning) and _norm(c) not in mentioned]
    if not unmentioned:
        return []
    count = len(unmentioned)
    files = f"{count} file{'s' if count != 1 else ''}"
    changed_text = f"changed in git since {SINCE_TEXT[event]}" if event else "with uncommitted changes"
    return [
        {
            "kind": "unrecorded_changes",
            "files": unmentioned[:SHOWN_GIT_FILES],
            "count": count,
            "since": since,
            "since_event": event,
            "message": f"{files} {changed_text} that the state does not mention",
        }
    ]


def _blockers_on_completed_phases(
    ctx: Context, state: State, blockers: list[recordfiles.Record], sessions: list[recordfiles.Record]
) -> list[dict[str, Any]]:
    """Open blockers that still affect a completed phase: the blocker or what it affects is out of date."""
    flags = []
    for blocker in blockers:
        if blocker.data.get("status") not in OPEN_BLOCKERS:
            continue
        for number in affected_phases(state, blocker.data.get("affects")):
            phase = phase_at(state, number)
            if phase is not None and phase.status == "completed":
                flags.append(
                    {
                        "kind": "blocker_on_completed_phase",
                        "blocker": blocker.id,
                        "phase": number,
                        "message": f"blocker {blocker.id} still affects phase {number} ({phase.name}), "
                        "which is already completed: resolve the blocker or correct what it affects",
                    }
                )
    return flags


VERIFICATIONS: tuple[
    Callable[[Context, State, list[recordfiles.Record], list[recordfiles.Record]], list[dict[str, Any]]], ...
] = (_legacy_format, _missing_files, _unrecorded_changes, _blockers_on_completed_phases)


# What `since` of an unrecorded_changes flag is, in the words of its message.
SINCE_TEXT = {
    "session_ended": "the last session ended",
    "session_started": "the oldest active session started (no session has ended)",
    "lifecycle_changed": "the last lifecycle change (no session yet)",
    "created": "the initiative was created (no session yet)",
}


def _changes_since(state: State, sessions: list[recordfiles.Record]) -> tuple[datetime | None, str | None]:
    """From when git changes are work the state may not know of: the end of the last session that ended; when none
    has, the start of the oldest active one (a crashed agent's work is all unrecorded); with no session at all, the
    last lifecycle change or the creation. Uncommitted changes count whatever this is."""
    ends = [e for s in sessions if (e := parse_datetime(s.data.get("ended"))) is not None]
    if ends:
        return max(ends), "session_ended"
    starts = [t for s in sessions if s.data.get("status") == "active" and (t := parse_datetime(s.data.get("started")))]
    if starts:
        return min(starts), "session_started"
    if state.lifecycle.exists() and state.lifecycle.since is not None:
        return state.lifecycle.since, "lifecycle_changed"
    return (state.created, "created") if state.created is not None else (None, None)


def _norm(name: str) -> str:
    """A listed file name as git prints it: POSIX separators, no leading `./`."""
    return Path(name).as_posix().removeprefix("./")


# ---------------------------------------------------------------------------- rendering


def duration_text(seconds: float | None) -> str:
    """A duration for the brief: `durations.show`, or `unknown` when there is none."""
    from planstate.core.durations import show

    return "unknown" if seconds is None else show(seconds)


def when_text(value: Any, now: datetime) -> str:
    """A timestamp for people with how long ago it was: `2026-11-21 17:00 UTC (2d 3h ago)`."""
    at = parse_datetime(value)
    if at is None:
        return "unknown"
    ago = (now - at).total_seconds()
    stamp = at.strftime("%Y-%m-%d %H:%M UTC")
    return f"{stamp} ({duration_text(ago)} ago)" if ago >= 0 else stamp


def render_text(ctx: Context, b: Brief) -> str:
    """The brief for people, from the `resume.md.j2` template (users may override it)."""
    from planstate.text import templates

    context = {"b": b.to_dict(), "raw": b, "duration": duration_text, "when": lambda v: when_text(v, b.now)}
    return templates.render("resume.md.j2", context, planning=ctx.root).rstrip("\n") + "\n"


def fit(ctx: Context, b: Brief, budget: int = DEFAULT_BUDGET) -> tuple[Brief, str]:
    """Drop the least important parts until the text fits in `budget` characters; return the brief and its text.

    The status line and the next action are never cut inside: everything else goes first, then the next
    action is shortened with an ellipsis, then the list of problems and long lifecycle texts. Only when
    even that does not fit is the text cut, at a line, and says so.
    """
    text = render_text(ctx, b)
    for part in DROP_ORDER:
        if len(text) <= budget:
            return b, text
        if getattr(b, part) in (None, [], {}):
            continue
        if render_text(ctx, b.without(part, note=False)) == text:
            continue  # it shows nothing (no files left to list, say): "left out" would not be true
        b = b.without(part)
        text = render_text(ctx, b)
    if len(text) > budget and b.next_action and len(b.next_action) > 1:
        b, text = _shorten_next_action(ctx, b, budget)
    if len(text) > budget:
        b = _shorten_the_rest(b)
        text = render_text(ctx, b)
    if len(text) > budget:
        note = "\n(cut to fit the budget; a larger --budget, or --json, shows everything)\n"
        keep = text[: max(0, budget - len(note))]
        text = (keep[: keep.rfind("\n")] if "\n" in keep else keep).rstrip() + note
        b.dropped.append("text")
    return b, text


def _shorten_next_action(ctx: Context, b: Brief, budget: int) -> tuple[Brief, str]:
    """The brief with the longest start of its next action (and an ellipsis) that fits in `budget`."""
    from dataclasses import replace

    assert b.next_action is not None
    full = b.next_action
    dropped = [*b.dropped, "next_action"]
    low, high = 1, len(full) - 1
    best = replace(b, next_action=full[:1].rstrip() + ELLIPSIS, dropped=dropped)
    while low <= high:
        middle = (low + high) // 2
        trial = replace(b, next_action=full[:middle].rstrip() + ELLIPSIS, dropped=dropped)
        if len(render_text(ctx, trial)) <= budget:
            best, low = trial, middle + 1
        else:
            high = middle - 1
    return best, render_text(ctx, best)


def _shorten_the_rest(b: Brief) -> Brief:
    """The brief with the first problem only (and how many more), and its title and lifecycle texts shortened."""
    from dataclasses import replace

    changes: dict[str, Any] = {"title": shorten(b.title, 60) if b.title else b.title}
    if len(b.trust) > 1:
        more = len(b.trust) - 1
        extra = {"problem": f"and {more} more problem{'s' if more != 1 else ''}", "code": None, "file": None}
        changes["trust"] = [b.trust[0], {**extra, "line": None, "fix": "run `planstate check` to see them all"}]
        changes["dropped"] = [*b.dropped, "trust"]
    if b.lifecycle is not None:
        lifecycle = dict(b.lifecycle)
        for key in ("reason", "context"):
            if lifecycle.get(key):
                lifecycle[key] = shorten(lifecycle[key], 60)
        if lifecycle.get("error"):
            lifecycle["error"] = {**lifecycle["error"], "message": shorten(lifecycle["error"]["message"], 60)}
        changes["lifecycle"] = lifecycle
    return replace(b, **changes)
