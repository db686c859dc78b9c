"""`planstate import backlog` on a project made with the real Backlog.md CLI (scripts/make_backlog_fixture.sh):
milestones become phases, the task in progress the position, the first task to do the next action, the blocked
task a blocker with the task's id, decisions keep their ids; a second import creates nothing."""

from __future__ import annotations

from pathlib import Path

from conftest import Run, json_data, ok
from test_import_gsd import staged, tree_digest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "backlog" / "demo-shop" / "backlog"


def test_backlog_project_tells_its_story_and_imports_once(run: Run, tmp_path: Path) -> None:
    src = staged(tmp_path, FIXTURE, "backlog")
    before = tree_digest(src)
    project = tmp_path / "proj"
    first = json_data(ok(run("import", "backlog", str(src), "--json", cwd=project)))
    assert [(a["action"], a["kind"], a["name"]) for a in first["actions"]] == [
        ("create", "initiative", "Demo Shop"),
        ("create", "blocker", "TASK-4 'Payment provider'"),
        ("create", "decision", "decision-1 'Use SQLite first'"),
        ("create", "decision", "decision-2 'Pay with Stripe'"),
    ]
    unmapped = {(u["path"], u["what"]) for u in first["unmapped"]}
    assert ("tasks/task-7 - Write-the-README.md", "task TASK-7") in unmapped  # no milestone
    assert ("tasks", "front matter key 'priority'") in unmapped
    ok(run("validate", cwd=project))
    ok(run("check", cwd=project))
    status = json_data(ok(run("status", "--json", cwd=project)))
    assert (status["phases_total"], status["phases_completed"]) == (2, 1)
    assert status["current_phase"]["name"] == "v2 Checkout" and status["current_phase"]["status"] == "active"
    assert status["position"]["task"] == "TASK-3: Cart API" and status["position"]["status"] == "in_progress"
    assert status["next_action"] == "TASK-6: Order history"  # To Do, lowest ordinal
    assert [b["id"] for b in status["blockers"]] == ["TASK-4"]
    decisions = json_data(ok(run("decision", "list", "--json", cwd=project)))["decisions"]
    stripe = next(d for d in decisions if d["id"] == "decision-2")
    assert stripe["status"] == "proposed" and stripe["decision"] == "Stripe Checkout."
    assert stripe["alternatives"] == ["Adyen: more setup", "PayPal only: fewer customers"]
    second = json_data(ok(run("import", "backlog", str(src), "--json", cwd=project)))
    assert second["counts"] == {"create": 0, "update": 0, "unchanged": 4}
    assert tree_digest(src) == before


def test_a_task_done_in_the_source_updates_the_phase_on_reimport(run: Run, tmp_path: Path) -> None:
    src = staged(tmp_path, FIXTURE, "backlog")
    project = tmp_path / "proj"
    ok(run("import", "backlog", str(src), cwd=project))
    task = next((src / "tasks").glob("task-3 *.md"))
    task.write_text(task.read_text(encoding="utf-8").replace("status: In Progress", "status: Done"), encoding="utf-8")
    again = json_data(ok(run("import", "backlog", str(src), "--json", cwd=project)))
    assert again["counts"] == {"create": 0, "update": 1, "unchanged": 3}
    ok(run("check", cwd=project))
    status = json_data(ok(run("status", "--json", cwd=project)))
    assert status["position"].get("task") is None and status["position"]["status"] == "pending"
