"""The GSD importer: a `.planning/` folder of get-shit-done (ROADMAP, STATE, PROJECT, phases/, milestones/).

GSD numbers phases by label (`1`, `2.1` inserted after 2, a milestone that starts at 8); planstate numbers
them by place. Each initiative's phases are sorted by label and numbered from 1, and each keeps its label in
`imported_from.id`. docs/import.md has the whole mapping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from planstate.interop import reading
from planstate.interop.plan import Item, Plan, Planned, day, origin, timestamp

SOURCE = "gsd"
_PHASE_LINE = re.compile(r"^\s*[-*]\s*\[([ xX])\]\s*\*\*Phase\s+(\d+(?:\.\d+)*)\s*:?\s*(.*?)\*\*(.*)$")
_PHASE_HEADING = re.compile(r"^#{2,4}\s+Phase\s+(\d+(?:\.\d+)*)\s*:?\s*(.*?)\s*$")
_SUMMARY = re.compile(r"<summary>(.*?)</summary>")
_VERSION = re.compile(r"\bv\d+(?:\.\d+)*(?:-[A-Za-z0-9]+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_FOLDER = re.compile(r"^(\d+(?:\.\d+)*)-")
_PLAN_FILE = re.compile(r"^(?:(\d+(?:\.\d+)*)-)?(\d+)-PLAN\.md$|^PLAN\.md$")
# Front-matter keys of PLAN and SUMMARY files this importer reads; the report lists the others.
_USED_KEYS = {"phase", "plan", "status", "completed", "completed_at", "started", "duration"}
# The STATE.md sections the importer reads, by the start of their heading; the report names the others.
_STATE_READ = ("current position", "accumulated context", "session continuity")
_ROADMAP_READ = ("phases", "milestones", "progress", "phase details")


def label(text: str) -> str:
    """A phase label as GSD means it: `08` is 8, `02.1` is 2.1."""
    return ".".join(str(int(part)) for part in text.split("."))


def order(text: str) -> tuple[int, ...]:
    """The sort key of a label: 2 < 2.1 < 2.2 < 3."""
    return tuple(int(part) for part in text.split("."))


@dataclass
class GsdPhase:
    """One GSD phase as the files tell it."""

    label: str
    name: str
    path: str  # the file that named it
    milestone: str | None = None  # a shipped milestone's version; None: current work
    checked: bool = False
    completed: date | None = None
    plans: list[str] = field(default_factory=list)  # plan keys with a PLAN file
    summaries: dict[str, Any] = field(default_factory=dict)  # plan key -> SUMMARY front matter
    partial: bool = False  # a SUMMARY says the plan was not finished
    verification: dict[str, Any] = field(default_factory=dict)
    table_status: str = ""


@dataclass
class Milestone:
    """A milestone: its version, name, whether it shipped and when."""

    version: str
    name: str
    shipped: bool
    date: date | None = None


class Reader:
    """Reads one GSD tree into a Plan; each method reads one kind of file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.plan = Plan(SOURCE, root)
        self.read: set[Path] = set()
        self.phases: dict[str, GsdPhase] = {}
        self.milestones: dict[str, Milestone] = {}
        self.current_milestone: str | None = None
        self.title = root.parent.name if root.name == ".planning" else root.name
        self.state_meta: dict[str, Any] = {}
        self.state_body = ""
        self.when: datetime | None = None  # STATE.md's last update: the date of what it says
        self.unused_keys: dict[tuple[str, str], int] = {}
        self.roadmap_title: str | None = None  # ROADMAP.md's own title: the current initiative's

    def rel(self, path: Path) -> str:
        """A path relative to the imported folder, with forward slashes."""
        return path.relative_to(self.root).as_posix()

    def file(self, name: str) -> Path | None:
        """A file of the tree that exists, marked as read."""
        path = self.root / name
        if path.is_file():
            self.read.add(path)
            return path
        return None

    # ------------------------------------------------------------------ files

    def roadmap(self) -> None:
        """ROADMAP.md: the phases, their checkboxes and dates, the milestone blocks and the progress table."""
        path = self.file("ROADMAP.md")
        if path is None:
            self.plan.leave("ROADMAP.md", "file", "not found: the phases come from phases/ alone")
            return
        doc = reading.load(path)
        title = re.search(r"^#\s+(?:Roadmap:\s*)?(.+)$", doc.content, re.M)
        if title:
            self.roadmap_title = reading.plain(title.group(1))
            self.title = re.split(r"\s+v\d|\s+[—:-]\s", self.roadmap_title)[0].strip() or self.roadmap_title
        version = doc.meta.get("milestone")
        if isinstance(version, str | float | int):
            self.current_milestone = str(version)
        self._phase_lines(doc.content, "ROADMAP.md", None)
        progress = reading.section(doc.content, 2, "Progress")
        for row in reading.table(progress or ""):
            cells = list(row.values())
            match = re.match(r"\s*(\d+(?:\.\d+)*)\.?\s", cells[0] if cells else "")
            if match and label(match.group(1)) in self.phases:
                phase = self.phases[label(match.group(1))]
                status = next((v for k, v in row.items() if k.strip().casefold() == "status"), "")
                phase.table_status = status.strip()
                found = _DATE.search(next((v for k, v in row.items() if k.strip().casefold() == "completed"), ""))
                if found and phase.completed is None:
                    phase.completed = date.fromisoformat(found.group(0))
        for heading in reading.headings(doc.content, 2):
            if not heading.casefold().startswith(_ROADMAP_READ):
                self.plan.leave("ROADMAP.md", f"section '{heading}'", "no place in the format")
        self._unused_meta("ROADMAP.md", doc.meta, {"milestone"})

    def _phase_lines(self, text: str, path: str, milestone: str | None) -> None:
        """The `- [x] **Phase N: Name**` lines (and `### Phase N: Name` headings) of a roadmap; inside a
        `<details>` block whose summary names a shipped milestone, the phases belong to that milestone."""
        block: str | None = milestone
        for line in text.splitlines():
            summary = _SUMMARY.search(line) if milestone is None else None  # a milestone file is all one milestone
            if summary:
                block = self._milestone(summary.group(1)) or milestone
                continue
            if "</details>" in line:
                block = milestone
                continue
            match = _PHASE_LINE.match(line)
            heading = _PHASE_HEADING.match(line)
            if match:
                name = reading.plain(match.group(3)).rstrip(" :-—")
                phase = self._phase(label(match.group(2)), name, path, block)
                phase.checked = phase.checked or match.group(1).lower() == "x"
                done = re.search(r"completed\s*:?\s*(\d{4}-\d{2}-\d{2})", match.group(4), re.I)
                if done and phase.completed is None:
                    phase.completed = date.fromisoformat(done.group(1))
            elif heading:
                self._phase(label(heading.group(1)), reading.plain(heading.group(2)), path, block)

    def _milestone(self, summary: str) -> str | None:
        """The version a `<summary>` names, recorded as a milestone (shipped when it says so)."""
        version = _VERSION.search(summary)
        if version is None:
            return None
        text = reading.plain(summary)
        shipped = "SHIPPED" in text.upper() or "✅" in text or "COMPLETE" in text.upper()
        name = re.sub(r"^[^\w]*" + re.escape(version.group(0)) + r"\s*[—:-]*\s*", "", text)
        name = re.split(r"\s*\(|\s+—\s+", name)[0].strip() or version.group(0)
        found = _DATE.search(text)
        when = date.fromisoformat(found.group(0)) if found else None
        known = self.milestones.get(version.group(0))
        self.milestones[version.group(0)] = Milestone(
            version.group(0), name, shipped or bool(known and known.shipped), (known.date if known else None) or when
        )
        return version.group(0) if shipped else None

    def _phase(self, key: str, name: str, path: str, milestone: str | None) -> GsdPhase:
        """The phase with label `key`, made on first sight."""
        phase = self.phases.get(key)
        if phase is None:
            name = re.sub(r"\s*\(INSERTED\)\s*$", "", name, flags=re.I)
            phase = self.phases[key] = GsdPhase(key, name or f"Phase {key}", path, milestone)
        elif milestone is not None and phase.milestone is None:
            phase.milestone = milestone
        return phase

    def milestones_list(self) -> None:
        """MILESTONES.md: each `## vX Name (Shipped: DATE)` heading names a shipped milestone and its date."""
        path = self.file("MILESTONES.md")
        if path is None:
            return
        text = reading.read_text(path)
        for heading in reading.headings(text, 2):
            version = _VERSION.match(heading)
            shipped = re.search(r"shipped:?\s*(\d{4}-\d{2}-\d{2})", heading, re.I)
            if version is None or shipped is None:
                continue
            name = re.split(r"\s*\(", heading[version.end() :].strip(" —:-"))[0] or version.group(0)
            known = self.milestones.get(version.group(0))
            self.milestones[version.group(0)] = Milestone(
                version.group(0), known.name if known else name, True, date.fromisoformat(shipped.group(1))
            )
        self.plan.leave("MILESTONES.md", "accomplishments and notes", "no place in the format (dates and names read)")

    def milestone_files(self) -> None:
        """milestones/vX-ROADMAP.md (a shipped milestone's phases) and milestones/vX-phases/ (its phase folders)."""
        folder = self.root / "milestones"
        if not folder.is_dir():
            return
        for path in sorted(folder.iterdir()):
            version = _VERSION.match(path.name)
            if version is None:
                continue
            if path.is_file() and path.name.endswith("-ROADMAP.md"):
                self.read.add(path)
                doc = reading.load(path)
                heading = re.search(r"^#\s+(?:Milestone\s+)?(?:Roadmap:\s*)?(.+)$", doc.content, re.M)
                known = self.milestones.get(version.group(0))
                name = known.name if known else reading.plain(heading.group(1)) if heading else version.group(0)
                self.milestones[version.group(0)] = Milestone(
                    version.group(0), name, True, known.date if known else None
                )
                self._phase_lines(doc.content, self.rel(path), version.group(0))
            elif path.is_dir() and path.name.endswith("-phases"):
                for sub in sorted(path.iterdir()):
                    if sub.is_dir():
                        self.phase_folder(sub, version.group(0))

    def phase_folders(self) -> None:
        """phases/NN-name/: PLAN and SUMMARY files (completion, dates, durations), VERIFICATION, CONTEXT."""
        folder = self.root / "phases"
        if folder.is_dir():
            for sub in sorted(folder.iterdir()):
                if sub.is_dir():
                    self.phase_folder(sub, None)

    def phase_folder(self, folder: Path, milestone: str | None) -> None:
        """One phase folder; a PLAN or SUMMARY whose front matter names another phase counts for that one."""
        match = _FOLDER.match(folder.name)
        if match is None:
            self.plan.leave(self.rel(folder), "folder", "its name does not start with a phase number")
            return
        key = label(match.group(1))
        name = folder.name[match.end() :].replace("-", " ").strip().capitalize()
        phase = self._phase(key, name, self.rel(folder), milestone)
        for path in sorted(folder.iterdir()):
            if not path.is_file():
                continue
            upper = path.name.upper()
            if upper.endswith("-PLAN.MD") or upper == "PLAN.MD":
                self.read.add(path)
                doc = reading.load(path)
                owner = self._owner(doc.meta, phase, path)
                owner.plans.append(self._plan_key(path.name, doc.meta))
                self._unused_meta("PLAN", doc.meta, _USED_KEYS)
            elif upper.endswith("-SUMMARY.MD"):
                self.read.add(path)
                doc = reading.load(path)
                owner = self._owner(doc.meta, phase, path)
                meta = dict(doc.meta)
                status = str(meta.get("status") or reading.labelled(doc.content, "Status") or "")
                meta["status"] = status
                if status.casefold().startswith("partial"):
                    owner.partial = True
                owner.summaries[self._plan_key(path.name, doc.meta)] = meta
                self._unused_meta("SUMMARY", doc.meta, _USED_KEYS)
            elif upper.endswith("-VERIFICATION.MD"):
                self.read.add(path)
                doc = reading.load(path)
                phase.verification = doc.meta
            elif upper.endswith("-CONTEXT.MD"):
                self.read.add(path)
                self.context_file(path, phase)
            elif path.name == ".continue-here.md":
                self.read.add(path)
                self.continue_here(path, phase)

    def _owner(self, meta: dict[str, Any], folder_phase: GsdPhase, path: Path) -> GsdPhase:
        """The phase a PLAN or SUMMARY belongs to: the one its front matter names, else its folder's."""
        named = meta.get("phase")
        match = _FOLDER.match(str(named) + "-") if named is not None else None
        if match is None:
            return folder_phase
        key = label(match.group(1))
        if key == folder_phase.label:
            return folder_phase
        self.plan.leave(
            self.rel(path),
            f"filed under phase {folder_phase.label}",
            f"its front matter names phase {key}: counted there",
        )
        return self._phase(key, str(named), self.rel(path), folder_phase.milestone)

    @staticmethod
    def _plan_key(name: str, meta: dict[str, Any]) -> str:
        """A plan's key within its phase: its front matter `plan`, else the number in its file name."""
        plan = meta.get("plan")
        if plan is not None:
            return str(plan).lstrip("0") or "0"
        numbers = re.findall(r"\d+", name)
        return numbers[-1].lstrip("0") or "0" if numbers else "1"

    def _unused_meta(self, what: str, meta: dict[str, Any], used: set[str]) -> None:
        for key in meta:
            if key not in used:
                self.unused_keys[(what, str(key))] = self.unused_keys.get((what, str(key)), 0) + 1

    def state(self) -> None:
        """STATE.md: GSD recomputes its front matter from the body, and they disagree; the body is trusted."""
        path = self.file("STATE.md")
        if path is None:
            self.plan.leave("STATE.md", "file", "not found: no position, decisions or blockers")
            return
        doc = reading.load(path)
        self.state_meta, self.state_body = doc.meta, doc.content
        self.when = timestamp(doc.meta.get("last_updated")) or timestamp(reading.labelled(doc.content, "Last session"))
        if self.current_milestone is None and doc.meta.get("milestone") is not None:
            self.current_milestone = str(doc.meta.get("milestone"))
        self.plan.leave(
            "STATE.md",
            "front matter (status, progress, stopped_at, ...)",
            "GSD recomputes it from the body, which was read instead",
        )
        for heading in reading.headings(doc.content, 2):
            if not heading.casefold().startswith(_STATE_READ):
                self.plan.leave("STATE.md", f"section '{heading}'", "no place in the format")
        context = reading.section(doc.content, 2, "Accumulated Context") or ""
        for heading in reading.headings(context, 3):
            if not heading.casefold().startswith(("decisions", "blockers")):
                body = reading.section(context, 3, heading) or ""
                if reading.bullets(body) and not re.fullmatch(r"\s*None( yet)?\.?\s*", body):
                    self.plan.leave("STATE.md", f"section '{heading}'", "no place in the format")

    def context_file(self, path: Path, phase: GsdPhase) -> None:
        """A phase's CONTEXT.md: each `###` section of its `<decisions>` block is one decision."""
        text = reading.read_text(path)
        block = reading.tag_block(text, "decisions")
        if block is None:
            self.plan.leave(self.rel(path), "file", "no <decisions> block")
            return
        gathered = reading.labelled(text, "Gathered")
        when = day(gathered) if gathered else None
        for heading, body in reading.sections(block, 3):
            points = [reading.plain(b) for b in reading.bullets(body)] or [reading.plain(body)]
            points = [p for p in points if p]
            if not points:
                continue
            if "discretion" in heading.casefold():
                self.plan.leave(self.rel(path), f"'{heading}'", "left to the agent, not decided: no decision made")
                continue
            self.decisions_for.append(
                (
                    phase.label,
                    {
                        "title": reading.plain(heading),
                        "date": when,
                        "context": f"Phase {phase.label} ({phase.name}): {heading}",
                        "decision": "\n".join(points),
                        "reason": "",
                        "imported_from": origin(SOURCE, self.rel(path), heading),
                    },
                )
            )
        rest = [t for t in ("domain", "specifics", "deferred", "code_context", "canonical_refs") if f"<{t}>" in text]
        if rest:
            self.plan.leave(self.rel(path), ", ".join(f"<{t}>" for t in rest), "no place in the format")

    def continue_here(self, path: Path, phase: GsdPhase) -> None:
        """`.continue-here.md`: a hand-off, as an ended session (GSD deletes the file once resumed)."""
        doc = reading.load(path)
        when = timestamp(doc.meta.get("last_updated")) or self.when
        if when is None:
            self.plan.leave(self.rel(path), "file", "no last_updated: a session needs its time")
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
            "imported_from": origin(SOURCE, self.rel(path), phase.label),
        }
        self.sessions.append(data)
        action = reading.tag_block(doc.content, "next_action")
        if action and action.strip():
            self.next_action = (phase.label, action.strip())
        for point in reading.bullets(reading.tag_block(doc.content, "decisions_made") or ""):
            text = reading.plain(point)
            self.decisions_for.append(
                (
                    phase.label,
                    {
                        "title": text,
                        "date": when.date(),
                        "context": f"Phase {phase.label} ({phase.name}), paused work",
                        "decision": text,
                        "reason": "",
                        "imported_from": origin(SOURCE, self.rel(path), reading.digest(text)),
                    },
                )
            )

    decisions_for: list[tuple[str | None, dict[str, Any]]]
    sessions: list[dict[str, Any]]
    next_action: tuple[str, str] | None

    def project_decisions(self) -> None:
        """PROJECT.md's Key Decisions table: one decision per row."""
        path = self.file("PROJECT.md")
        if path is None:
            return
        text = reading.read_text(path)
        title = re.search(r"^#\s+(.+)$", text, re.M)
        if title and not (self.root / "ROADMAP.md").is_file():
            self.title = reading.plain(title.group(1))
        updated = re.search(r"Last updated:?\**\s*(\d{4}-\d{2}-\d{2})", text)
        when = date.fromisoformat(updated.group(1)) if updated else (self.when.date() if self.when else None)
        for heading in reading.headings(text, 2):
            if not heading.casefold().startswith("key decisions"):
                self.plan.leave("PROJECT.md", f"section '{heading}'", "no place in the format")
        for row in reading.table(reading.section(text, 2, "Key Decisions") or ""):
            cells = list(row.items())
            if not cells or not cells[0][1].strip():
                continue
            decision = reading.plain(cells[0][1])
            rest = {k.strip().casefold(): reading.plain(v) for k, v in cells[1:]}
            reason = rest.pop("rationale", "") or rest.pop("why", "")
            outcome = " ".join(v for v in rest.values() if v)
            status = "proposed" if "pending" in outcome.casefold() else "accepted"
            self.decisions_for.append(
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

    def state_records(self) -> list[tuple[str | None, Item]]:
        """STATE.md's Decisions and Blockers/Concerns bullets and its Session Continuity, as records."""
        out: list[tuple[str | None, Item]] = []
        context = reading.section(self.state_body, 2, "Accumulated Context") or ""
        when = self.when
        for point in reading.bullets(reading.section(context, 3, "Decisions") or ""):
            match = re.match(r"^\[Phase\s+(\d+(?:\.\d+)*)[^\]]*\]\s*:?\s*(.*)$", point)
            key = label(match.group(1)) if match else None
            text = reading.plain(match.group(2) if match else re.sub(r"^[\w ]{1,20}:\s+", "", point))
            self.decisions_for.append(
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
                self.plan.leave("STATE.md", f"blocker '{text[:40]}'", "no date in STATE.md to identify it by")
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
        continuity = reading.section(self.state_body, 2, "Session Continuity")
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


def read(path: Path) -> Plan:
    """Read a GSD tree (the `.planning/` folder, or the project folder holding it) into an import plan."""
    root = path / ".planning" if (path / ".planning" / "ROADMAP.md").is_file() else path
    reader = Reader(root)
    reader.decisions_for = []
    reader.sessions = []
    reader.next_action = None
    reader.roadmap()
    reader.milestones_list()
    reader.milestone_files()
    reader.phase_folders()
    reader.state()
    reader.project_decisions()
    records = reader.state_records()
    _build(reader, records)
    for (what, key), count in sorted(reader.unused_keys.items()):
        reader.plan.leave(
            f"{what} files" if what in ("PLAN", "SUMMARY") else what,
            f"front matter key '{key}'",
            f"no place in the format ({count} file{'s' if count != 1 else ''})",
        )
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        if file not in reader.read:
            reader.plan.leave(reader.rel(file), "file", "no mapping for it")
    return reader.plan


def _build(reader: Reader, records: list[tuple[str | None, Item]]) -> None:
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
    main_key = None if None in groups else max(groups, key=lambda k: order(k.lstrip("v")) if k else ())
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
    status_text = reading.labelled(position_text, "Status") or ""
    stopped = reading.labelled(reading.section(reader.state_body, 2, "Session Continuity") or "", "Stopped at")
    created = min(starts + finished) if starts or finished else None
    planned.fields["created"] = created
    if done_all:
        completed_at = timestamp(milestone.date) if milestone and milestone.date else None
        completed_at = completed_at or (max(finished) if finished else reader.when)
        if completed_at is not None:
            planned.lifecycle = {"state": "completed", "completed_at": completed_at}
        else:
            planned.lifecycle = {"state": "paused", "reason": "imported: every phase is done, but no date says when"}
        index = len(entries) - 1
    elif entries[index]["status"] == "pending" and (current_key == labels[index] or current_key not in labels):
        entries[index].update({"status": "active", "attempts": 1})
    plan = re.match(r"\s*(\d+)\s*(?:of|/)\s*(\d+|\?)", reading.labelled(position_text, "Plan") or "")
    position: dict[str, Any] = {"phase": planned.first_phase + index, "status": "done" if done_all else "pending"}
    if not done_all and current_key == labels[index]:
        if plan and int(plan.group(1)) > 0:
            position["plan"] = int(plan.group(1))
        position["status"] = _task_status(status_text)
    planned.fields["position"] = position
    if done_all:
        planned.fields["next_action"] = None
    elif reader.next_action and reader.next_action[0] == labels[index]:
        planned.fields["next_action"] = reader.next_action[1]
    elif current_key == labels[index] and status_text:
        planned.fields["next_action"] = status_text + (f" (stopped at: {stopped})" if stopped else "")
    else:
        planned.fields["next_action"] = f"Plan phase {labels[index]}: {phases[index].name}"
    if created is not None and planned.lifecycle.get("completed_at") is not None:
        planned.fields["created"] = min(created, planned.lifecycle["completed_at"])


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
    dates = [day(s.get("completed") or s.get("completed_at")) for s in phase.summaries.values()]
    known = [d for d in dates if d is not None]
    done = timestamp(phase.completed or (max(known) if known else None)) if complete else None
    begun_days = [day(s.get("started")) for s in phase.summaries.values()]
    begun = min((d for d in begun_days if d is not None), default=None)
    started = timestamp(begun) if begun is not None else None
    if started is not None and done is not None and started >= done:
        started = None
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
