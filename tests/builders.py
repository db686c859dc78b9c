"""Build `.planning/` folders by writing files directly, as a person or another tool would, for tests of readers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from planstate import ids, yamltext

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def front_matter(data: dict[str, Any], body: str = "") -> str:
    """A markdown file with `data` as YAML front matter and `body` after it."""
    return "---\n" + "\n".join(yamltext.block(data, 0, yamltext.Indent())) + "\n---\n" + body


def state_data(
    *,
    phases: list[dict[str, Any]],
    current: int,
    first_phase: int = 1,
    lifecycle: dict[str, Any] | None = None,
    structure: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """STATE.md front matter with the given phases (dicts with at least `name`)."""
    data: dict[str, Any] = {
        "schema_version": 1,
        "initiative": extra.pop("initiative", "user-auth"),
        "title": extra.pop("title", "User authentication"),
        "created": T0,
        "updated": T0,
    }
    if structure:
        data["structure"] = {"phases_total": len(phases), "first_phase": first_phase}
    data["phases"] = phases
    data["position"] = {"phase": current, "status": "in_progress"}
    data["lifecycle"] = lifecycle or {"state": "active", "since": T0, "by": "alice"}
    data.update(extra)
    return data


def timed_phases(names: list[str], done: int, *, hours: float = 2.0, start: datetime = T0) -> list[dict[str, Any]]:
    """Phases where the first `done` completed in `hours` each and the next one is active since it ended."""
    out: list[dict[str, Any]] = []
    at = start
    for i, name in enumerate(names):
        if i < done:
            end = at + timedelta(hours=hours)
            out.append({"name": name, "status": "completed", "started": at, "completed": end, "checkpoint": "passed"})
            at = end
        elif i == done:
            out.append({"name": name, "status": "active", "started": at, "checkpoint": "pending", "attempts": 1})
        else:
            out.append({"name": name, "status": "pending", "checkpoint": "pending"})
    return out


def write_state(project: Path, data: dict[str, Any], body: str = "# Notes\n") -> Path:
    """Write `.planning/STATE.md` (and the record folders) under `project`; return the STATE.md path."""
    planning = project / ".planning"
    for folder in ("decisions", "blockers", "sessions"):
        (planning / folder).mkdir(parents=True, exist_ok=True)
    path = planning / "STATE.md"
    path.write_text(front_matter(data, body), encoding="utf-8")
    return path


def write_record(project: Path, kind: str, data: dict[str, Any], body: str = "") -> Path:
    """Write one record file named after its id (a made id when `data` has none)."""
    folder = {"decision": "decisions", "blocker": "blockers", "session": "sessions"}[kind]
    when = data.get("started") or data.get("identified") or T0
    stamp = when.timestamp() if isinstance(when, datetime) else T0.timestamp()
    data = {"schema_version": 1, "id": data.get("id") or ids.new_id(kind, stamp), **data}
    path = project / ".planning" / folder / f"{data['id']}.md"
    path.write_text(front_matter(data, body), encoding="utf-8")
    return path


def decision(i: int, **extra: Any) -> dict[str, Any]:
    """A decision made `i` hours after T0."""
    at = T0 + timedelta(hours=i)
    return {
        "id": ids.new_id("decision", at.timestamp()),
        "title": f"Decision number {i}",
        "date": at.date(),
        "status": "accepted",
        "context": f"Context of decision {i}, which needed settling before the next step",
        "decision": f"Chose option {i} over the others",
        "reason": f"Option {i} is simpler to operate",
        **extra,
    }


def blocker(i: int, **extra: Any) -> dict[str, Any]:
    """A blocker identified `i` hours after T0."""
    at = T0 + timedelta(hours=i)
    return {
        "id": ids.new_id("blocker", at.timestamp()),
        "title": f"Blocker number {i}",
        "status": "active",
        "description": f"Waiting on an outside team for item {i}",
        "identified": at,
        **extra,
    }


def session(i: int, **extra: Any) -> dict[str, Any]:
    """A two-hour session that started `i` hours after T0 and ended."""
    at = T0 + timedelta(hours=i)
    return {
        "id": ids.new_id("session", at.timestamp()),
        "agent": f"worker-{i % 7}",
        "status": "ended",
        "started": at,
        "ended": at + timedelta(hours=2),
        "completed": [f"Task {i}"],
        **extra,
    }


def realistic(project: Path) -> None:
    """The issue's realistic initiative: 10 phases, 200 decisions, 50 blockers, 300 sessions."""
    names = [f"Phase {n} of the rollout" for n in range(1, 11)]
    data = state_data(
        phases=timed_phases(names, done=6),
        current=7,
        next_action="Finish the OAuth callback handler.\nThen run the phase 7 verification suite.",
        resume_context={
            "files_modified": [f"src/module_{n}.py" for n in range(12)],
            "key_implementations": ["Refresh tokens rotate on every use"],
            "open_questions": ["Do we keep the legacy session cookie?", "Who owns the OAuth app?"],
        },
    )
    write_state(project, data)
    for i in range(200):
        write_record(project, "decision", decision(i, status="superseded" if i % 10 == 0 else "accepted"))
    for i in range(50):
        status = "resolved" if i < 40 else ("bypassed" if i % 2 else "active")
        extra: dict[str, Any] = {"status": status, "affects": [f"phase {8 + i % 3}"]}
        if status == "bypassed":
            extra["workaround"] = "Using a stub provider until the credentials arrive"
        write_record(project, "blocker", blocker(i, **extra))
    for i in range(300):
        write_record(project, "session", session(i, handoff_reason="Context limit reached" if i == 299 else None))


def realistic_rendered(project: Path) -> None:
    """The realistic initiative with the body `planstate init` writes (every generated region, rendered) and a
    history, as a workspace that planstate manages looks: what the watcher benchmark runs against."""
    import json
    import tempfile

    from planstate.document import Document
    from planstate.workspace import Workspace

    realistic(project)
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Workspace.init(Path(scratch), title="scratch", phases=["One"], actor="alice")
        body = Document.from_bytes(fresh.state_path.read_bytes()).body
    state = project / ".planning" / "STATE.md"
    doc = Document.from_bytes(state.read_bytes())
    doc.set_body(body)
    state.write_bytes(doc.to_bytes())
    line = {"at": "2026-11-01T09:00:00Z", "from": None, "to": "active", "trigger": "init", "by": "alice"}
    (project / ".planning" / "history.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    ws = Workspace.find(project)
    ws.set({"position.task": "Wire the OAuth callback"})  # a write: derived copies computed, regions rendered
    ws.render()  # and the regions that show records
