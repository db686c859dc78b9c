"""The workflow session importer: the two JSON session formats planstate's format grew from (docs/import.md).

- The multi-session registry: `.workflow/session_status.jsonl` (one line per session, at most one active) with a
  `workflow-session.json` per session (phases PLAN, IMPLEMENT, REVIEW with their checkpoints, state
  transitions). Each session becomes an initiative with its lifecycle.
- The workflow session state file: a JSON file with `workflow_structure` (total and starting phase), current and
  completed phases, phase timing, artifacts, checkpoints and lifecycle flags. It becomes an initiative whose
  phases, evidence and checkpoints carry over, its numbering base (zero-based included) kept.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from planstate.interop.plan import Plan, Planned, origin, timestamp
from planstate.interop.reading import mapping

SOURCE = "workflow"
REGISTRY = "session_status.jsonl"
SESSION_FILE = "workflow-session.json"
PHASES = ("PLAN", "IMPLEMENT", "REVIEW")
_CHECKPOINT_STATUS = {"completed": "completed", "in_progress": "active", "pending": "pending"}
_SCALARS = (str, int, float, bool)
_CHECKPOINT_KEYS = ("status", "timestamp", "documents", "todos", "agents_completed", "quality_checks")
# The keys of a session state file that have a place in the format; any other is reported.
_STATE_KEYS = (
    "session_id",
    "workflow_type",
    "target_file",
    "workflow_structure",
    "current_phase",
    "completed_phases",
    "phase_timing",
    "lifecycle",
    "phase_artifacts",
    "checkpoints",
    "created_at",
    "updated_at",
)


def read(path: Path) -> Plan:
    """Read every registry and every session state file under `path` into an import plan."""
    plan = Plan(SOURCE, path)
    seen: set[Path] = set()
    for registry in sorted(path.rglob(REGISTRY)):
        seen.add(registry)
        _registry(plan, registry, seen)
    for file in sorted(path.rglob("*.json")):
        if file in seen or file.name == SESSION_FILE:
            continue
        data = _json(file)
        if isinstance(data, dict) and isinstance(data.get("workflow_structure"), dict):
            seen.add(file)
            _state_file(plan, file, data)
    active = [p for p in plan.initiatives if p.lifecycle.get("state") == "active"]
    for extra in active[1:]:  # the registry's single active rule, for data that broke it
        extra.lifecycle = {"state": "paused", "reason": f"imported while {active[0].slug} is active"}
        plan.leave(extra.origin["path"], f"session {extra.origin['id']}", "another session is active: imported paused")
    main = active[0] if active else (plan.initiatives[0] if plan.initiatives else None)
    for planned in plan.initiatives:
        planned.main = planned is main
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        if file not in seen:
            plan.leave(_rel(plan, file), "file", "no mapping for it")
    return plan


def _rel(plan: Plan, file: Path) -> str:
    return file.relative_to(plan.root).as_posix()


def _json(file: Path) -> Any:
    try:
        return json.loads(file.read_bytes().decode("utf-8", errors="replace"))
    except ValueError:
        return None


def _slug(text: str) -> str:
    from planstate.store.scaffold import slugify

    return slugify(text)


# ---------------------------------------------------------------------------- the registry and its session files


def _registry(plan: Plan, registry: Path, seen: set[Path]) -> None:
    """Each line of a registry, with its session's `workflow-session.json`, as one initiative."""
    for number, line in enumerate(registry.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            plan.leave(_rel(plan, registry), f"line {number}", "not JSON: skipped")
            continue
        if not isinstance(entry, dict) or not entry.get("id"):
            plan.leave(_rel(plan, registry), f"line {number}", "no session id: skipped")
            continue
        folder = _session_folder(registry, entry)
        session_file = folder / SESSION_FILE
        session: dict[str, Any] = {}
        if session_file.is_file():
            seen.add(session_file)
            loaded = _json(session_file)
            session = loaded if isinstance(loaded, dict) else {}
            if not session:
                plan.leave(_rel(plan, session_file), "file", "not a JSON object: the registry line alone is used")
        else:
            plan.leave(_rel(plan, registry), f"session {entry['id']}", f"no {SESSION_FILE}: phases left pending")
        plan.initiatives.append(_registered(plan, registry, entry, session, session_file))


def _session_folder(registry: Path, entry: dict[str, Any]) -> Path:
    """A session's folder: its `directory` from the project folder (the registry's grandparent), else by name."""
    directory = str(entry.get("directory") or entry["id"])
    candidate = registry.parent.parent / directory
    return candidate if candidate.is_dir() else registry.parent / Path(directory).name


def _registered(
    plan: Plan, registry: Path, entry: dict[str, Any], session: dict[str, Any], session_file: Path
) -> Planned:
    """One registered session as an initiative: its three phases from its checkpoints, and its lifecycle."""
    ident = str(entry["id"])
    checkpoints = mapping(session.get("checkpoints"))
    created = timestamp(session.get("created_at") or entry.get("created"))
    shown = _rel(plan, session_file) if session_file.is_file() else _rel(plan, registry)
    state = str(entry.get("status") or session.get("status") or "active")
    entered = {
        str(t.get("to")): timestamp(t.get("timestamp"))
        for t in session.get("state_transitions") or []
        if isinstance(t, dict)
    }
    phases = [
        _checkpoint_phase(plan, shown, index, name, mapping(checkpoints.get(name.lower())), state, entered, created)
        for index, name in enumerate(PHASES)
    ]
    planned = Planned(
        slug=_slug(ident),
        title=str(entry.get("description") or session.get("project") or ident),
        origin=origin(SOURCE, _rel(plan, registry), ident),
        phases=phases,
        workflow=f"workflow session {session.get('session_version') or ''}".strip(),
    )
    planned.fields["created"] = created
    current_name = str(session.get("current_phase") or "").upper()
    position = _registered_position(planned, checkpoints, current_name)
    updated = timestamp(session.get("updated_at")) or created
    if state == "completed":
        planned.lifecycle = {"state": "completed", "completed_at": updated}
        position["status"] = "done"
    elif state == "paused":
        planned.lifecycle = {"state": "paused", "reason": "paused in the workflow registry", "context": current_name}
    else:
        planned.lifecycle = {"state": "active"}
    for key in ("context_chain", "state_transitions"):
        if session.get(key):
            plan.leave(shown, key, "phase start times were read from the transitions; the rest has no place")
    return planned


def _checkpoint_phase(
    plan: Plan,
    shown: str,
    index: int,
    name: str,
    point: dict[str, Any],
    state: str,
    entered: dict[str, datetime | None],
    created: datetime | None,
) -> dict[str, Any]:
    """Phase `name` of a registered session from its checkpoint: status, times, evidence; what has no place is
    reported."""
    status = _CHECKPOINT_STATUS.get(str(point.get("status")), "pending")
    if status == "active" and state == "completed":
        status = "completed"
    started = entered.get(name) or (created if index == 0 and status != "pending" else None)
    phase: dict[str, Any] = {"name": name.capitalize(), "status": status}
    if started is not None and status != "pending":
        phase["started"] = started
    finished = timestamp(point.get("timestamp")) if status == "completed" else None
    if finished is not None:
        phase["completed"] = finished
    phase["checkpoint"] = "passed" if status == "completed" else "pending"
    evidence = _checkpoint_evidence(point)
    if evidence:
        phase["evidence"] = evidence
    phase["attempts"] = 0 if status == "pending" else 1
    phase["imported_from"] = origin(SOURCE, shown, f"checkpoints.{name.lower()}")
    for key in point:
        if key not in _CHECKPOINT_KEYS:
            plan.leave(shown, f"checkpoints.{name.lower()}.{key}", "no place in the format")
    return phase


def _registered_position(planned: Planned, checkpoints: dict[str, Any], current_name: str) -> dict[str, Any]:
    """A registered session's position (its current phase, agent and status) and, while implementing, its todo
    counts as progress; set on `planned` and returned."""
    current = PHASES.index(current_name) if current_name in PHASES else 0
    point = mapping(checkpoints.get(PHASES[current].lower()))
    position: dict[str, Any] = {"phase": 1 + current}
    todos = point.get("todos")
    if current_name == "IMPLEMENT" and isinstance(todos, dict):
        planned.fields["progress"] = {
            "current_phase_tasks": todos.get("total"),
            "current_phase_completed": todos.get("completed"),
        }
    agent = point.get("current_agent") if current_name in PHASES else None
    if agent:
        position["step"] = f"agent {agent}"
    if planned.phases[current]["status"] == "active":
        position["status"] = "in_progress"
    planned.fields["position"] = position
    return position


def _checkpoint_evidence(point: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's facts as evidence: documents, todos done of total, agents, quality checks."""
    out: dict[str, Any] = {}
    if isinstance(point.get("documents"), list) and point["documents"]:
        out["documents"] = ", ".join(str(d) for d in point["documents"])
    todos = point.get("todos")
    if isinstance(todos, dict) and todos.get("total") is not None:
        out["todos"] = f"{todos.get('completed', 0)}/{todos['total']}"
    if isinstance(point.get("agents_completed"), list) and point["agents_completed"]:
        out["agents_completed"] = ", ".join(str(a) for a in point["agents_completed"])
    checks = point.get("quality_checks")
    if isinstance(checks, dict):
        out.update({str(k): v for k, v in checks.items() if isinstance(v, _SCALARS)})
    return out


# ---------------------------------------------------------------------------- the session state file


def _state_file(plan: Plan, file: Path, data: dict[str, Any]) -> None:
    """A workflow session state file as an initiative: its structure snapshot, numbering base included."""
    shown = _rel(plan, file)
    structure = data["workflow_structure"]
    first = structure.get("starting_phase", 0)
    first = first if first in (0, 1) else 0
    completed = {int(n) for n in data.get("completed_phases") or [] if str(n).isdigit()}
    parts = _Parts(
        mapping(data.get("phase_timing")), mapping(data.get("phase_artifacts")), mapping(data.get("checkpoints"))
    )
    last = first + _phase_count(structure.get("total_phases"), first, completed, parts) - 1
    lifecycle = mapping(data.get("lifecycle"))
    finished = bool(lifecycle.get("completed"))
    current = data.get("current_phase")
    if not isinstance(current, int) or current < first or current > last:
        plan.leave(shown, f"current_phase {current}", f"not a phase ({first} to {last}): the position is phase {last}")
        current = last
    phases = [
        _numbered_phase(plan, shown, number, number == current and not finished, number in completed, parts)
        for number in range(first, last + 1)
    ]
    ident = str(data.get("session_id") or file.stem)
    kind = data.get("workflow_type")
    planned = Planned(
        slug=_slug(ident),
        title=f"{kind}: {data.get('target_file')}" if kind and data.get("target_file") else ident,
        origin=origin(SOURCE, shown, ident),
        phases=phases,
        first_phase=first,
        workflow=" ".join(str(v) for v in (kind, structure.get("workflow_version")) if v) or None,
    )
    planned.fields["created"] = timestamp(data.get("created_at"))
    status = phases[current - first]["status"]
    planned.fields["position"] = {
        "phase": current,
        "status": "done" if finished else "in_progress" if status == "active" else "pending",
    }
    planned.lifecycle = _lifecycle(lifecycle, data)
    if lifecycle.get("resume_count"):
        planned.lifecycle["resume_count"] = lifecycle["resume_count"]
        planned.lifecycle["resumed_at"] = timestamp(lifecycle.get("resumed_at"))
    for key in data:
        if key not in _STATE_KEYS:
            plan.leave(shown, key, "no place in the format")
    plan.initiatives.append(planned)


class _Parts(NamedTuple):
    """What a state file says of its phases, each keyed by phase number as text."""

    timing: dict[str, Any]
    artifacts: dict[str, Any]
    checkpoints: dict[str, Any]


def _phase_count(total: Any, first: int, completed: set[int], parts: _Parts) -> int:
    """How many phases a state file has: its `total_phases`, else as many as the highest phase it mentions."""
    if isinstance(total, int) and total > 0:
        return total
    numbers = [int(n) for n in (*parts.timing, *parts.checkpoints, *parts.artifacts) if str(n).isdigit()]
    numbers += completed
    return max(numbers) - first + 1 if numbers else 1


def _numbered_phase(plan: Plan, shown: str, number: int, current: bool, done: bool, parts: _Parts) -> dict[str, Any]:
    """Phase `number` of a state file: done when listed in `completed_phases`, with its timing and evidence."""
    key = str(number)
    times = mapping(parts.timing.get(key))
    status, checkpoint = _numbered_status(str(parts.checkpoints.get(key) or "pending"), current, done)
    started = timestamp(times.get("started_at")) if status != "pending" else None
    phase: dict[str, Any] = {"name": f"Phase {number}", "status": status}
    if started is not None:
        phase["started"] = started
    finished = timestamp(times.get("completed_at")) if status == "completed" else None
    if finished is not None:
        phase["completed"] = finished
    phase["checkpoint"] = checkpoint
    if status == "active" and checkpoint == "failed":
        phase["failed_at"] = timestamp(times.get("failed_at")) or started
    if status == "active" and checkpoint == "passed":
        phase["checkpoint"] = "pending"
    artifact = mapping(parts.artifacts.get(key))
    evidence = mapping(artifact.get("evidence"))
    scalars = {str(k): v for k, v in evidence.items() if isinstance(v, _SCALARS)}
    if scalars:
        phase["evidence"] = scalars
    others = [k for k in artifact if k not in ("phase_number", "evidence", "timestamp") and artifact[k]]
    others += [f"evidence.{k}" for k, v in evidence.items() if not isinstance(v, _SCALARS)]
    if others:
        plan.leave(shown, f"phase_artifacts.{key}: {', '.join(others)}", "no place in the format")
    phase["attempts"] = 0 if status == "pending" else 1
    phase["imported_from"] = origin(SOURCE, shown, number)
    return phase


def _numbered_status(checkpoint: str, current: bool, done: bool) -> tuple[str, str]:
    """A state file phase's status and checkpoint: completed (its checkpoint passed unless skipped), active (the
    current one, its checkpoint as written), else pending."""
    checkpoint = checkpoint if checkpoint in ("pending", "passed", "failed", "skipped") else "pending"
    if done:
        return "completed", "skipped" if checkpoint == "skipped" else "passed"
    if current:
        return "active", checkpoint
    return "pending", "pending"


def _lifecycle(flags: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """The explicit lifecycle flags as one state: completed, paused, error, else active."""
    updated: datetime | None = timestamp(data.get("updated_at"))
    if flags.get("completed"):
        return {"state": "completed", "completed_at": timestamp(flags.get("completed_at")) or updated}
    if flags.get("paused"):
        return {"state": "paused", "reason": flags.get("paused_reason"), "context": flags.get("paused_context")}
    if flags.get("last_error"):
        at = timestamp(flags.get("last_error_at"))
        return {"state": "error", "error": {"message": str(flags["last_error"]), "at": at}}
    return {"state": "active"}
