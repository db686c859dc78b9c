"""The records of a GSD tree: decisions (PROJECT.md's Key Decisions, STATE.md's Decisions, CONTEXT.md's
`<decisions>`), blockers (STATE.md's Blockers/Concerns) and sessions (Session Continuity, `.continue-here.md`)."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planstate.interop import reading
from planstate.interop.gsd import SOURCE, GsdPhase, label
from planstate.interop.plan import Item, day, origin, timestamp

if TYPE_CHECKING:
    from planstate.interop.gsd import Reader


def context_file(reader: Reader, path: Path, phase: GsdPhase) -> None:
    """A phase's CONTEXT.md: each `###` section of its `<decisions>` block is one decision."""
    text = reading.read_text(path)
    block = reading.tag_block(text, "decisions")
    if block is None:
        reader.plan.leave(reader.rel(path), "file", "no <decisions> block")
        return
    gathered = reading.labelled(text, "Gathered")
    when = day(gathered) if gathered else None
    for heading, body in reading.sections(block, 3):
        points = [reading.plain(b) for b in reading.bullets(body)] or [reading.plain(body)]
        points = [p for p in points if p]
        if not points:
            continue
        if "discretion" in heading.casefold():
            reader.plan.leave(reader.rel(path), f"'{heading}'", "left to the agent, not decided: no decision made")
            continue
        reader.decisions_for.append(
            (
                phase.label,
                {
                    "title": reading.plain(heading),
                    "date": when,
                    "context": f"Phase {phase.label} ({phase.name}): {heading}",
                    "decision": "\n".join(points),
                    "reason": "",
                    "imported_from": origin(SOURCE, reader.rel(path), heading),
                },
            )
        )
    rest = [t for t in ("domain", "specifics", "deferred", "code_context", "canonical_refs") if f"<{t}>" in text]
    if rest:
        reader.plan.leave(reader.rel(path), ", ".join(f"<{t}>" for t in rest), "no place in the format")


def continue_here(reader: Reader, path: Path, phase: GsdPhase) -> None:
    """`.continue-here.md`: a hand-off, as an ended session (GSD deletes the file once resumed)."""
    doc = reading.load(path)
    when = timestamp(doc.meta.get("last_updated")) or reader.when
    if when is None:
        reader.plan.leave(reader.rel(path), "file", "no last_updated: a session needs its time")
        return
    task, total = doc.meta.get("task"), doc.meta.get("total_tasks")
    working = f"Phase {phase.label}: {phase.name}" + (f", task {task} of {total}" if task is not None else "")
    notes = [reading.tag_block(doc.content, t) for t in ("current_state", "remaining_work", "context")]
    data: dict[str, Any] = {
        "agent": "gsd",
        "status": "ended",
        "started": when,
        "ended": when,
        "working_on": working,
        "completed": [
            reading.plain(b) for b in reading.bullets(reading.tag_block(doc.content, "completed_work") or "")
        ],
        "issues": [reading.plain(b) for b in reading.bullets(reading.tag_block(doc.content, "blockers") or "")],
        "handoff_reason": "GSD pause (.continue-here.md)",
        "notes": "\n\n".join(n.strip() for n in notes if n and n.strip()) or None,
        "imported_from": origin(SOURCE, reader.rel(path), phase.label),
    }
    reader.sessions.append(data)
    action = reading.tag_block(doc.content, "next_action")
    if action and action.strip():
        reader.next_action = (phase.label, action.strip())
    for point in reading.bullets(reading.tag_block(doc.content, "decisions_made") or ""):
        text = reading.plain(point)
        reader.decisions_for.append(
            (
                phase.label,
                {
                    "title": text,
                    "date": when.date(),
                    "context": f"Phase {phase.label} ({phase.name}), paused work",
                    "decision": text,
                    "reason": "",
                    "imported_from": origin(SOURCE, reader.rel(path), reading.digest(text)),
                },
            )
        )


def project_decisions(reader: Reader) -> None:
    """PROJECT.md's Key Decisions table: one decision per row."""
    path = reader.file("PROJECT.md")
    if path is None:
        return
    text = reading.read_text(path)
    title = re.search(r"^#\s+(.+)$", text, re.M)
    if title and not (reader.root / "ROADMAP.md").is_file():
        reader.title = reading.plain(title.group(1))
    updated = re.search(r"Last updated:?\**\s*(\d{4}-\d{2}-\d{2})", text)
    when = date.fromisoformat(updated.group(1)) if updated else (reader.when.date() if reader.when else None)
    for heading in reading.headings(text, 2):
        if not heading.casefold().startswith("key decisions"):
            reader.plan.leave("PROJECT.md", f"section '{heading}'", "no place in the format")
    for row in reading.table(reading.section(text, 2, "Key Decisions") or ""):
        cells = list(row.items())
        if not cells or not cells[0][1].strip():
            continue
        decision = reading.plain(cells[0][1])
        rest = {k.strip().casefold(): reading.plain(v) for k, v in cells[1:]}
        reason = rest.pop("rationale", "") or rest.pop("why", "")
        outcome = " ".join(v for v in rest.values() if v)
        status = "proposed" if "pending" in outcome.casefold() else "accepted"
        reader.decisions_for.append(
            (
                None,
                {
                    "title": decision,
                    "date": when,
                    "status": status,
                    "context": "PROJECT.md Key Decisions" + (f" (outcome: {outcome})" if outcome else ""),
                    "decision": decision,
                    "reason": reason,
                    "imported_from": origin(SOURCE, "PROJECT.md", decision),
                },
            )
        )


def state_records(reader: Reader) -> list[tuple[str | None, Item]]:
    """STATE.md's Decisions and Blockers/Concerns bullets and its Session Continuity, as records."""
    out: list[tuple[str | None, Item]] = []
    context = reading.section(reader.state_body, 2, "Accumulated Context") or ""
    when = reader.when
    for point in reading.bullets(reading.section(context, 3, "Decisions") or ""):
        match = re.match(r"^\[Phase\s+(\d+(?:\.\d+)*)[^\]]*\]\s*:?\s*(.*)$", point)
        key = label(match.group(1)) if match else None
        text = reading.plain(match.group(2) if match else re.sub(r"^[\w ]{1,20}:\s+", "", point))
        reader.decisions_for.append(
            (
                key,
                {
                    "title": text,
                    "date": when.date() if when else None,
                    "context": "STATE.md Decisions" + (f", phase {key}" if key else ""),
                    "decision": text,
                    "reason": "",
                    "imported_from": origin(SOURCE, "STATE.md", reading.digest(point)),
                },
            )
        )
    for point in reading.bullets(reading.section(context, 3, "Blockers") or ""):
        text = reading.plain(point)
        if re.fullmatch(r"None( yet)?\.?", text):
            continue
        if when is None:
            reader.plan.leave("STATE.md", f"blocker '{text[:40]}'", "no date in STATE.md to identify it by")
            continue
        phase = re.match(r"^Phase\s+(\d+(?:\.\d+)*)", text)
        data: dict[str, Any] = {
            "title": text,
            "status": "active" if "blocker" in text.casefold()[:40] else "new",
            "description": text,
            "identified": when,
            "affects": [],
            "by": None,
            "imported_from": origin(SOURCE, "STATE.md", reading.digest(point)),
        }
        out.append((label(phase.group(1)) if phase else None, Item("blocker", data)))
    continuity = reading.section(reader.state_body, 2, "Session Continuity")
    last = timestamp(reading.labelled(continuity or "", "Last session"))
    if continuity and last is not None:
        stopped = reading.labelled(continuity, "Stopped at")
        resume = reading.labelled(continuity, "Resume file")
        session = {
            "agent": "gsd",
            "status": "ended",
            "started": last,
            "ended": last,
            "working_on": stopped,
            "notes": f"Resume file: {resume}" if resume and resume.casefold() != "none" else None,
            "imported_from": origin(SOURCE, "STATE.md", "Session Continuity"),
        }
        out.append((None, Item("session", session)))
    return out
