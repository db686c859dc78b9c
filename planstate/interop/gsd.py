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
from planstate.interop.plan import Plan, timestamp

SOURCE = "gsd"
_PHASE_LINE = re.compile(r"^\s*[-*]\s*\[([ xX])\]\s*\*\*Phase\s+(\d+(?:\.\d+)*)\s*:?\s*(.*?)\*\*(.*)$")
_PHASE_HEADING = re.compile(r"^#{2,4}\s+Phase\s+(\d+(?:\.\d+)*)\s*:?\s*(.*?)\s*$")
_SUMMARY = re.compile(r"<summary>(.*?)</summary>")
_VERSION = re.compile(r"\bv\d+(?:\.\d+)*(?:-[A-Za-z0-9]+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_FOLDER = re.compile(r"^(\d+(?:\.\d+)*)-")
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
        self.decisions_for: list[tuple[str | None, dict[str, Any]]] = []  # (phase label or None, decision data)
        self.sessions: list[dict[str, Any]] = []
        self.next_action: tuple[str, str] | None = None  # (phase label, text) from a .continue-here.md

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
        if reading.section(doc.content, 2, "Phase Details"):
            self.plan.leave(
                "ROADMAP.md",
                "Phase Details: goals, requirements, success criteria, plan lists",
                "no place in the format (the phases' names and checkboxes were read)",
            )
        if any(m and m.group(4).strip(" -—") for m in map(_PHASE_LINE.match, doc.content.splitlines())):
            self.plan.leave("ROADMAP.md", "the text after each phase's name", "no place in the format")
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
        from planstate.interop import gsdrecords

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
                gsdrecords.context_file(self, path, phase)
            elif path.name == ".continue-here.md":
                self.read.add(path)
                gsdrecords.continue_here(self, path, phase)

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
        position = reading.section(doc.content, 2, "Current Position") or ""
        others = [n for n in ("Last activity", "Progress", "Milestone") if reading.labelled(position, n)]
        if others:
            self.plan.leave(
                "STATE.md",
                f"Current Position: {', '.join(others)}",
                "recomputed by planstate or no place in the format",
            )
        context = reading.section(doc.content, 2, "Accumulated Context") or ""
        for heading in reading.headings(context, 3):
            if not heading.casefold().startswith(("decisions", "blockers")):
                body = reading.section(context, 3, heading) or ""
                if reading.bullets(body) and not re.fullmatch(r"\s*None( yet)?\.?\s*", body):
                    self.plan.leave("STATE.md", f"section '{heading}'", "no place in the format")


def read(path: Path) -> Plan:
    """Read a GSD tree (the `.planning/` folder, or the project folder holding it) into an import plan."""
    root = path / ".planning" if (path / ".planning").is_dir() and path.name != ".planning" else path
    reader = Reader(root)
    reader.roadmap()
    reader.milestones_list()
    reader.milestone_files()
    reader.phase_folders()
    reader.state()
    from planstate.interop import gsdrecords

    gsdrecords.project_decisions(reader)
    records = gsdrecords.state_records(reader)
    from planstate.interop.gsdplan import build

    build(reader, records)
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
