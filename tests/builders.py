"""Build `.planning/` folders by writing files directly, as a person or another tool would, for tests of readers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from planstate.core import ids
from planstate.text import yamltext

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
    folder = {"decision": "decisions", "blocker": "blockers", "session": "sessions", "task": "tasks"}[kind]
    (project / ".planning" / folder).mkdir(parents=True, exist_ok=True)
    when = data.get("started") or data.get("identified") or data.get("created") or T0
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


def task(i: int, **extra: Any) -> dict[str, Any]:
    """A pending task added `i` minutes after T0."""
    at = T0 + timedelta(minutes=i)
    return {
        "id": ids.new_id("task", at.timestamp()),
        "title": f"Task number {i}",
        "status": "pending",
        "created": at,
        **extra,
    }


# Text as long as people and agents write it: real decisions carry a sentence of context and a reason or two.
AREAS = ["token refresh", "session storage", "rate limiting", "audit logging", "password reset", "OAuth callbacks"]
CHOICES = ["a token-bucket limiter per API key", "SQLite with a nightly vacuum", "signed cookies", "an outbox table"]


def realistic_decision(i: int) -> dict[str, Any]:
    """A decision with the lengths real ones have (title ~60, reason ~200 characters)."""
    area, choice = AREAS[i % len(AREAS)], CHOICES[i % len(CHOICES)]
    return decision(
        i,
        status="superseded" if i % 10 == 0 else "accepted",
        title=f"Use {choice} for {area} (decision {i})",
        context=f"{area.capitalize()} needed a settled design before phase {1 + i % 10} could start; two clients "
        "already depend on the current behaviour and the load test showed p99 latency regressions.",
        decision=f"Adopt {choice} for {area}, behind a feature flag, with a migration path for existing data",
        reason=f"It keeps {area} consistent across replicas without a new service to operate, the team knows it "
        "well, and the benchmark on production-sized data was within 5% of the fastest alternative we tried.",
        alternatives=[
            f"Keep the current {area} code: rejected, it cannot scale past one node",
            "Buy a SaaS: too costly",
        ],
    )


def realistic_blocker(i: int) -> dict[str, Any]:
    """A blocker with the lengths real ones have."""
    status = "resolved" if i < 40 else ("bypassed" if i % 2 else "active")
    extra: dict[str, Any] = {"status": status, "affects": [f"phase {8 + i % 3}"]}
    if status == "bypassed":
        extra["workaround"] = "Using a stub OAuth provider in staging until the customer's credentials arrive"
    return blocker(
        i,
        title=f"Waiting for the customer's OAuth client credentials for tenant {i}",
        description=f"The identity team of tenant {i} has not issued client credentials for the staging "
        "environment, so the OAuth callback cannot be tested end to end.",
        **extra,
    )


def realistic_session(i: int) -> dict[str, Any]:
    """A session with the lengths real ones have; the last one handed off at its context limit."""
    return session(
        i,
        working_on=f"Phase {1 + i % 10}: {AREAS[i % len(AREAS)]}, plan {1 + i % 4}",
        completed=[f"Implemented the {AREAS[i % len(AREAS)]} handler with tests", "Updated the API documentation"],
        handoff_reason="Context limit reached after finishing the callback handler" if i == 299 else None,
        notes="Left the rotation endpoint with one failing test (`rotates family on reuse`); see the PR "
        "description for the reproduction steps.",
    )


def realistic(project: Path) -> None:
    """The issue's realistic initiative: 10 phases, 200 decisions, 50 blockers, 300 sessions, with text as long as
    real records have."""
    names = [f"Phase {n}: {AREAS[n % len(AREAS)]} rollout and verification" for n in range(1, 11)]
    data = state_data(
        phases=timed_phases(names, done=6),
        current=7,
        next_action="Finish the OAuth callback handler: validate the state parameter, exchange the code for tokens "
        "and store the refresh token encrypted.\nThen run the phase 7 verification suite against staging and "
        "record the evidence (tests, coverage) with `planstate phase complete 7`.\nIf staging is still down, "
        "switch to the stub provider and note it in the session.",
        resume_context={
            "files_modified": [f"src/auth/{AREAS[n % len(AREAS)].replace(' ', '_')}/module_{n}.py" for n in range(12)],
            "key_implementations": ["Refresh tokens rotate on every use and the old one is revoked at once"],
            "open_questions": [
                "Do we keep the legacy session cookie for the mobile clients that cannot upgrade this quarter?",
                "Who owns the OAuth application registration once the project is handed over to operations?",
            ],
        },
    )
    write_state(project, data)
    for i in range(200):
        write_record(project, "decision", realistic_decision(i))
    for i in range(50):
        write_record(project, "blocker", realistic_blocker(i))
    for i in range(300):
        write_record(project, "session", realistic_session(i))


def realistic_rendered(project: Path) -> None:
    """The realistic initiative with the body `planstate init` writes (every generated region, rendered) and a
    history, as a workspace that planstate manages looks: what the watcher benchmark runs against."""
    import json
    import tempfile

    from planstate.text.document import Document
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
