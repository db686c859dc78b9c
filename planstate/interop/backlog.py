"""The Backlog.md importer: a `backlog/` folder (config.yml, milestones/, tasks/, completed/, decisions/).

Milestones are the phases, in the order of their ids, each complete when every task in it is done; the task in
progress is the position, the first task to do (by ordinal) the next action, blocked tasks are blockers, and
decisions are decisions. docs/import.md has the whole mapping.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from planstate.interop import reading
from planstate.interop.plan import Item, Plan, Planned, day, origin, timestamp

SOURCE = "backlog"
# Task front-matter keys this importer reads; the report lists the others.
_TASK_KEYS = {"id", "title", "status", "milestone", "ordinal", "created_date", "updated_date", "labels"}
_DECISION_STATUSES = {"proposed", "accepted", "superseded", "rejected"}


def _number(text: str) -> tuple[int, str]:
    """The sort key of an id such as `m-2` or `TASK-12`: its number, then the id."""
    found = re.findall(r"\d+", text)
    return (int(found[-1]) if found else 1 << 30, text)


def _ordinal(value: Any) -> float:
    """A task's ordinal for sorting; a task without one (or with one that is not a number) comes last."""
    try:
        return float(value) if value is not None and not isinstance(value, bool) else float("inf")
    except (TypeError, ValueError):
        return float("inf")


def _done(status: str) -> bool:
    return status.casefold() in ("done", "completed", "complete")


def _blocked(task: dict[str, Any]) -> bool:
    found = task.get("labels")
    labels: list[Any] = found if isinstance(found, list) else []
    return "block" in str(task.get("status", "")).casefold() or any(str(x).casefold() == "blocked" for x in labels)


def read(path: Path) -> Plan:
    """Read a Backlog.md folder (`backlog/`, or the project folder holding it) into an import plan."""
    root = path / "backlog" if (path / "backlog").is_dir() and not (path / "tasks").is_dir() else path
    plan = Plan(SOURCE, root)
    seen: set[Path] = set()
    title = _title(plan, root, seen)
    milestones = _milestones(root, seen)
    tasks = _tasks(plan, root, seen)
    if milestones:
        plan.leave("milestones", "milestone descriptions", "no place in the format (titles are the phase names)")
    by_title = _group(plan, milestones, tasks)
    planned = Planned(
        slug=_slug(title), title=title, origin=origin(SOURCE, "config.yml", None), phases=[], workflow="backlog.md"
    )
    order = sorted(milestones, key=_number)
    current = _phases(planned, milestones, order)
    if current is None:
        plan.leave("milestones", "folder", "no milestones: no phases to import")
        return plan
    _where(planned, tasks, milestones[order[current]]["tasks"], current)
    number = {key: planned.first_phase + i for i, key in enumerate(order)}
    for task in tasks:
        if _blocked(task) and not _done(str(task.get("status", ""))):
            planned.records.append(_blocker(task, number, milestones, by_title))
    for file in _files(root / "decisions"):
        seen.add(file)
        item = _decision(plan, root, file)
        if item is not None:
            planned.records.append(item)
    plan.initiatives.append(planned)
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        if file not in seen:
            plan.leave(plan_path(root, file), "file", "no mapping for it (documents, drafts and archives stay)")
    return plan


def _title(plan: Plan, root: Path, seen: set[Path]) -> str:
    """The project's name: config.yml's project_name, else the project folder's name."""
    title = root.resolve().parent.name
    config_path = root / "config.yml"
    if config_path.is_file():
        seen.add(config_path)
        project = re.search(r"^project_name:\s*[\"']?(.*?)[\"']?\s*$", reading.read_text(config_path), re.M)
        title = project.group(1) if project and project.group(1) else title
        plan.leave("config.yml", "settings other than project_name", "no place in the format")
    return title


def _milestones(root: Path, seen: set[Path]) -> dict[str, dict[str, Any]]:
    """The milestone files by id: each one's title, path and (filled later) tasks."""
    milestones: dict[str, dict[str, Any]] = {}
    for file in _files(root / "milestones"):
        seen.add(file)
        doc = reading.load(file)
        key = str(doc.meta.get("id") or file.stem.split(" ")[0])
        milestones[key] = {"title": str(doc.meta.get("title") or key), "path": plan_path(root, file), "tasks": []}
    return milestones


def _tasks(plan: Plan, root: Path, seen: set[Path]) -> list[dict[str, Any]]:
    """The tasks (open and completed), by ordinal then number; what of them has no place is reported."""
    tasks: list[dict[str, Any]] = []
    unused: dict[str, int] = {}
    for folder in ("tasks", "completed"):
        for file in _files(root / folder):
            seen.add(file)
            doc = reading.load(file)
            if doc.problem or not doc.meta.get("id"):
                plan.leave(plan_path(root, file), "file", doc.problem or "no id in its front matter")
                continue
            task = dict(doc.meta)
            task["_path"] = plan_path(root, file)
            task["_description"] = _marked(doc.content, "DESCRIPTION")
            task["_folder"] = folder
            task["_body"] = bool(doc.content.strip())
            tasks.append(task)
            for key in doc.meta:
                if key not in _TASK_KEYS:
                    unused[str(key)] = unused.get(str(key), 0) + 1
    for key, count in sorted(unused.items()):
        plan.leave(
            "tasks", f"front matter key '{key}'", f"no place in the format ({count} task{'s' if count != 1 else ''})"
        )
    with_body = sum(1 for t in tasks if t["_body"] and not _blocked(t))
    if with_body:
        plan.leave(
            "tasks",
            "task bodies (description, plan, notes, acceptance criteria, summary)",
            f"no place in the format ({with_body} task{'s' if with_body != 1 else ''}; a blocked task's "
            "description is its blocker's)",
        )
    tasks.sort(key=lambda t: (_ordinal(t.get("ordinal")), _number(str(t["id"]))))
    return tasks


def _group(plan: Plan, milestones: dict[str, dict[str, Any]], tasks: list[dict[str, Any]]) -> dict[str, str]:
    """Put each task into its milestone (named by id or title); the milestone ids by title, case-folded."""
    by_title = {m["title"].casefold(): k for k, m in milestones.items()}
    for task in tasks:
        named = str(task.get("milestone") or "")
        found = named if named in milestones else by_title.get(named.casefold())
        if found is None:
            where = f"milestone '{named}', which has no file" if named else "no milestone"
            plan.leave(task["_path"], f"task {task['id']}", f"{where}: not in a phase")
            continue
        milestones[found]["tasks"].append(task)
    return by_title


def _phases(planned: Planned, milestones: dict[str, dict[str, Any]], order: list[str]) -> int | None:
    """The milestones as phases, in order; the index of the current one (the first with a task in progress, else
    the first not completed, else the last), or None without milestones."""
    current: int | None = None
    for index, key in enumerate(order):
        entry, in_progress = _phase(milestones[key], key)
        planned.phases.append(entry)
        if in_progress and current is None:
            current = index
    if not planned.phases:
        return None
    if current is None:
        statuses = [p["status"] for p in planned.phases]
        current = next((i for i, s in enumerate(statuses) if s != "completed"), len(statuses) - 1)
    return current


def _where(planned: Planned, tasks: list[dict[str, Any]], in_phase: list[dict[str, Any]], current: int) -> None:
    """The current phase started, the position (the task in progress), progress, the next action (the first To
    Do), when the work was created, and the lifecycle (completed when every task is done)."""
    all_done = all(p["status"] == "completed" for p in planned.phases) and all(
        _done(str(t.get("status", ""))) for t in tasks
    )
    phase = planned.phases[current]
    doing = next((t for t in in_phase if str(t.get("status", "")).casefold() == "in progress"), None)
    if phase["status"] == "pending" and not all_done:
        phase.update({"status": "active", "attempts": 1})
        begun = _started(in_phase)
        if begun is not None:
            phase["started"] = begun
    position: dict[str, Any] = {"phase": planned.first_phase + current, "status": "done" if all_done else "pending"}
    if doing is not None:
        position.update({"task": f"{doing['id']}: {doing.get('title')}", "status": "in_progress"})
    planned.fields["position"] = position
    planned.fields["progress"] = {
        "current_phase_tasks": len(in_phase),
        "current_phase_completed": sum(_done(str(t.get("status", ""))) for t in in_phase),
    }
    todo = next((t for t in tasks if str(t.get("status", "")).casefold() == "to do"), None)
    planned.fields["next_action"] = f"{todo['id']}: {todo.get('title')}" if todo and not all_done else None
    dates = [d for t in tasks if (d := timestamp(t.get("created_date"))) is not None]
    planned.fields["created"] = min(dates) if dates else None
    if all_done:
        ends = [d for t in tasks if (d := timestamp(t.get("updated_date") or t.get("created_date")))]
        planned.lifecycle = {"state": "completed", "completed_at": max(ends)} if ends else planned.lifecycle


def plan_path(root: Path, file: Path) -> str:
    """A file's path relative to the imported folder."""
    return file.relative_to(root).as_posix()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.md") if p.is_file()) if folder.is_dir() else []


def _slug(title: str) -> str:
    from planstate.store.scaffold import slugify

    return slugify(title)


def _marked(text: str, name: str) -> str:
    """The text between Backlog.md's `<!-- SECTION:NAME:BEGIN -->` and `END` markers (empty when absent)."""
    match = re.search(rf"<!-- SECTION:{name}:BEGIN -->(.*?)<!-- SECTION:{name}:END -->", text, re.S)
    return match.group(1).strip() if match else ""


def _started(tasks: list[dict[str, Any]]) -> datetime | None:
    dates = [d for t in tasks if (d := timestamp(t.get("created_date"))) is not None]
    return min(dates) if dates else None


def _phase(milestone: dict[str, Any], key: str) -> tuple[dict[str, Any], bool]:
    """A milestone as a phase entry, and whether a task of it is in progress."""
    tasks = milestone["tasks"]
    done = [t for t in tasks if _done(str(t.get("status", "")))]
    complete = bool(tasks) and len(done) == len(tasks)
    entry: dict[str, Any] = {"name": milestone["title"], "status": "completed" if complete else "pending"}
    if complete:
        begun = _started(tasks)
        ends = [d for t in done if (d := timestamp(t.get("updated_date") or t.get("created_date")))]
        finished = max(ends) if ends else None
        if begun is not None and (finished is None or begun < finished):
            entry["started"] = begun
        if finished is not None:
            entry["completed"] = finished
    entry["checkpoint"] = "passed" if complete else "pending"
    if tasks:
        entry["evidence"] = {"tasks": f"{len(done)}/{len(tasks)}"}
    entry["attempts"] = 1 if complete else 0
    entry["imported_from"] = origin(SOURCE, milestone["path"], key)
    in_progress = any(str(t.get("status", "")).casefold() == "in progress" for t in tasks)
    return entry, in_progress


def _blocker(
    task: dict[str, Any], number: dict[str, int], milestones: dict[str, Any], by_title: dict[str, str]
) -> Item:
    """A blocked task as a blocker of its milestone's phase, with the task's id."""
    named = str(task.get("milestone") or "")
    key = named if named in milestones else by_title.get(named.casefold())
    title = str(task.get("title") or task["id"])
    data: dict[str, Any] = {
        "id": str(task["id"]),
        "title": title,
        "status": "active",
        "description": task["_description"] or title,
        "identified": timestamp(task.get("created_date")),
        "affects": [f"phase {number[key]}"] if key in number else [],
        "blocked_tasks": [f"{task['id']}: {title}"],
        "imported_from": origin(SOURCE, task["_path"], str(task["id"])),
    }
    return Item("blocker", data)


def _decision(plan: Plan, root: Path, file: Path) -> Item | None:
    """A decision file (`decision-N - Title.md`): date, status, Context, Decision, Consequences, Alternatives."""
    doc = reading.load(file)
    rel = plan_path(root, file)
    when = day(doc.meta.get("date"))
    ident = doc.meta.get("id")
    if when is None or not ident:
        plan.leave(rel, "file", "no id or date in its front matter")
        return None
    status = str(doc.meta.get("status") or "proposed").casefold()
    if status not in _DECISION_STATUSES:
        plan.leave(rel, f"status '{status}'", "not a decision status of the format: imported as proposed")
        status = "proposed"
    sections = {name.casefold(): text.strip() for name, text in reading.sections(doc.content, 2)}
    alternatives = reading.bullets(sections.get("alternatives", ""))
    body = f"## Consequences\n\n{sections['consequences']}\n" if sections.get("consequences") else ""
    for name in sections:
        if name not in ("context", "decision", "consequences", "alternatives") and sections[name]:
            plan.leave(rel, f"section '{name}'", "no place in the format")
    data: dict[str, Any] = {
        "id": str(ident),
        "title": str(doc.meta.get("title") or ident),
        "date": when,
        "status": status,
        "context": sections.get("context", ""),
        "decision": sections.get("decision", ""),
        "reason": "",
        "alternatives": [reading.plain(a) for a in alternatives],
        "imported_from": origin(SOURCE, rel, str(ident)),
    }
    return Item("decision", data, body)
