"""How a GSD tree, as `gsd.Reader` read it, becomes initiatives: phases grouped by milestone, numbered by place,
each with its status, timing and evidence; the position and next action; the records placed by phase."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from planstate.interop import reading
from planstate.interop.gsd import SOURCE, GsdPhase, Milestone, label, order
from planstate.interop.plan import Item, Planned, day, origin, timestamp

if TYPE_CHECKING:
    from planstate.interop.gsd import Reader


def build(reader: Reader, records: list[tuple[str | None, Item]]) -> None:
    """Group the phases into initiatives (each shipped milestone one, completed; the rest the current one) and
    give each its records."""
    from planstate.store.scaffold import slugify

    groups: dict[str | None, list[GsdPhase]] = {}
    for phase in reader.phases.values():
        shipped = phase.milestone is not None and reader.milestones[phase.milestone].shipped
        groups.setdefault(phase.milestone if shipped else None, []).append(phase)
    if not groups:
        reader.plan.leave("ROADMAP.md", "phases", "none found: nothing to import")
        return
    main_key = None if None in groups else max(groups, key=_version_order)
    built: dict[str | None, Planned] = {}
    for key, phases in groups.items():
        phases.sort(key=lambda p: order(p.label))
        version = reader.current_milestone if key is None else key
        milestone = reader.milestones.get(key) if key is not None else None
        if milestone is not None:
            title = f"{reader.title} {milestone.version}: {milestone.name}"
        else:
            title = reader.roadmap_title or reader.title
        slug = slugify(reader.title + (f" {key}" if key else ""))[:63].rstrip("-")
        planned = Planned(
            slug=slug,
            title=title,
            origin=origin(SOURCE, "ROADMAP.md", version),
            phases=[],
            workflow="gsd",
            main=key == main_key,
        )
        _fill(reader, planned, phases, milestone)
        built[key] = planned
    by_label = {p.label: key for key, phases in groups.items() for p in phases}
    main = built[main_key]
    for key, data in reader.decisions_for:
        target = built[by_label[key]] if key in by_label else main
        when = data["date"] or (reader.when.date() if reader.when else None)
        if when is None:
            reader.plan.leave(data["imported_from"]["path"], f"decision '{data['title'][:40]}'", "no date to give it")
            continue
        data = {**data, "date": when, "title": _title(data["title"]), "phase": _number(target, key)}
        target.records.append(Item("decision", data, ""))
    for key, item in records:
        target = built[by_label[key]] if key in by_label else main
        if item.kind == "blocker":
            number = _number(target, key)
            open_phase = number is not None and target.phases[number - target.first_phase]["status"] != "completed"
            item.data["affects"] = [f"phase {number}"] if open_phase else []
            item.data["title"] = _title(item.data["title"])
        target.records.append(item)
    for data in reader.sessions:
        key = data["imported_from"]["id"]
        (built[by_label[key]] if key in by_label else main).records.append(Item("session", data, ""))
    reader.plan.initiatives = sorted(built.values(), key=lambda p: (not p.main, p.slug))


def _version_order(version: str | None) -> tuple[int, ...]:
    """The sort key of a milestone version (`v2.0-alpha` sorts as 2, 0)."""
    return tuple(int(n) for n in re.findall(r"\d+", version or ""))


def _title(text: str) -> str:
    from planstate.ops.records import short_title

    return short_title(text) or "(untitled)"


def _number(planned: Planned, key: str | None) -> int | None:
    """Our number of the phase labelled `key` in an initiative, or None."""
    for index, phase in enumerate(planned.phases):
        if phase["imported_from"]["id"] == key:
            return planned.first_phase + index
    return None


def _minutes(value: Any) -> int | None:
    """Minutes from a SUMMARY `duration` (`25min`, `~2min`, `1h 30m`, `15`)."""
    text = str(value or "").strip().lstrip("~").casefold()
    hours = re.search(r"(\d+(?:\.\d+)?)\s*h", text)
    minutes = re.search(r"(\d+)\s*m", text)
    if hours or minutes:
        return int(float(hours.group(1)) * 60 if hours else 0) + int(minutes.group(1) if minutes else 0)
    return int(text) if text.isdigit() else None


def _fill(reader: Reader, planned: Planned, phases: list[GsdPhase], milestone: Milestone | None) -> None:
    """The phases, position, lifecycle and next action of one initiative."""
    position_text = reading.section(reader.state_body, 2, "Current Position") or ""
    current = re.match(r"\s*(\d+(?:\.\d+)*)", reading.labelled(position_text, "Phase") or "")
    current_key = label(current.group(1)) if current and not milestone else None
    entries = []
    finished: list[datetime] = []
    starts: list[datetime] = []
    for phase in phases:
        entry, done, begun = _entry(phase, milestone is not None)
        entries.append(entry)
        finished += [done] if done else []
        starts += [begun] if begun else []
    planned.phases = entries
    labels = [p.label for p in phases]
    done_all = all(e["status"] == "completed" for e in entries)
    if current_key in labels:
        index = labels.index(current_key)
    else:
        index = next((i for i, e in enumerate(entries) if e["status"] != "completed"), len(entries) - 1)
    created = min(starts + finished) if starts or finished else None
    planned.fields["created"] = created
    if done_all:
        planned.lifecycle = _finished(reader, milestone, finished)
        index = len(entries) - 1
    elif entries[index]["status"] == "pending" and (current_key == labels[index] or current_key not in labels):
        entries[index].update({"status": "active", "attempts": 1})
    at_current = not done_all and current_key == labels[index]
    number = planned.first_phase + index
    planned.fields["position"] = _position(position_text, number, done_all, at_current)
    planned.fields["next_action"] = (
        None if done_all else _next_action(reader, phases[index], number, position_text, at_current)
    )
    if created is not None and planned.lifecycle.get("completed_at") is not None:
        planned.fields["created"] = min(created, planned.lifecycle["completed_at"])


def _finished(reader: Reader, milestone: Milestone | None, finished: list[datetime]) -> dict[str, Any]:
    """The lifecycle of an initiative whose phases are all done: completed when a date says when, else paused."""
    completed_at = timestamp(milestone.date) if milestone and milestone.date else None
    completed_at = completed_at or (max(finished) if finished else reader.when)
    if completed_at is not None:
        return {"state": "completed", "completed_at": completed_at}
    return {"state": "paused", "reason": "imported: every phase is done, but no date says when"}


def _position(position_text: str, number: int, done_all: bool, at_current: bool) -> dict[str, Any]:
    """The position: phase `number`; at GSD's current phase, its plan and the status its `Status:` line says."""
    position: dict[str, Any] = {"phase": number, "status": "done" if done_all else "pending"}
    if at_current:
        plan = re.match(r"\s*(\d+)\s*(?:of|/)\s*(\d+|\?)", reading.labelled(position_text, "Plan") or "")
        if plan and int(plan.group(1)) > 0:
            position["plan"] = int(plan.group(1))
        position["status"] = _task_status(reading.labelled(position_text, "Status") or "")
    return position


def _next_action(reader: Reader, phase: GsdPhase, number: int, position_text: str, at_current: bool) -> str:
    """The next action of an unfinished initiative: GSD's own for this phase, else its status line (and where it
    stopped), else planning the phase, named by its planstate number (and its GSD label where that differs)."""
    if reader.next_action and reader.next_action[0] == phase.label:
        return reader.next_action[1]
    status_text = reading.labelled(position_text, "Status") or ""
    if at_current and status_text:
        stopped = reading.labelled(reading.section(reader.state_body, 2, "Session Continuity") or "", "Stopped at")
        return status_text + (f" (stopped at: {stopped})" if stopped else "")
    label_note = "" if phase.label == str(number) else f" (GSD phase {phase.label})"
    return f"Plan phase {number}: {phase.name}{label_note}"


def _task_status(text: str) -> str:
    """position.status from GSD's free `Status:` line."""
    words = text.casefold()
    for key, status in (
        ("verif", "verifying"),
        ("block", "blocked"),
        ("complete", "done"),
        ("execut", "in_progress"),
        ("progress", "in_progress"),
    ):
        if key in words:
            return status
    return "pending"


def _entry(phase: GsdPhase, shipped: bool) -> tuple[dict[str, Any], datetime | None, datetime | None]:
    """A phase entry of STATE.md for a GSD phase, with when it finished and started (when known)."""
    summarized = [k for k in phase.plans if k in phase.summaries] if phase.plans else list(phase.summaries)
    complete = (
        phase.checked
        or phase.table_status.casefold().startswith("complete")
        or (bool(phase.plans) and len(summarized) == len(phase.plans) and not phase.partial)
        or shipped
    )
    started, done = _times(phase, complete)
    evidence = _evidence(phase, summarized)
    entry: dict[str, Any] = {"name": phase.name, "status": "completed" if complete else "pending"}
    if started is not None:
        entry["started"] = started
    if done is not None:
        entry["completed"] = done
    entry["checkpoint"] = "passed" if complete else "pending"
    if evidence:
        entry["evidence"] = evidence
    entry["attempts"] = 1 if complete else 0
    entry["imported_from"] = origin(SOURCE, phase.path, phase.label)
    return entry, done, started


def _times(phase: GsdPhase, complete: bool) -> tuple[datetime | None, datetime | None]:
    """When a phase started and (if complete) finished, from its own date or its summaries'; a start not before
    the finish is dropped."""
    dates = [day(s.get("completed") or s.get("completed_at")) for s in phase.summaries.values()]
    known = [d for d in dates if d is not None]
    done = timestamp(phase.completed or (max(known) if known else None)) if complete else None
    begun = min((d for s in phase.summaries.values() if (d := day(s.get("started"))) is not None), default=None)
    started = timestamp(begun) if begun is not None else None
    if started is not None and done is not None and started >= done:
        started = None
    return started, done


def _evidence(phase: GsdPhase, summarized: list[str]) -> dict[str, Any]:
    """A phase's checkpoint evidence: plans summarized of planned, minutes spent, a partial summary, verification."""
    evidence: dict[str, Any] = {}
    if phase.plans or phase.summaries:
        evidence["plans"] = f"{len(summarized)}/{len(phase.plans) or len(phase.summaries)}"
    minutes = [m for s in phase.summaries.values() if (m := _minutes(s.get("duration"))) is not None]
    if minutes:
        evidence["minutes"] = sum(minutes)
    if phase.partial:
        evidence["summary"] = "partial"
    for key in ("status", "score"):
        if phase.verification.get(key) is not None:
            evidence[f"verification_{key}"] = str(phase.verification[key])
    return evidence
