"""`planstate import workflow` on the two session formats of the seeds (tests/fixtures/workflow, SOURCES.txt):
each registered session an initiative with its lifecycle and checkpoints, the state file an initiative numbered
from 0 as it was, its timing, evidence and checkpoints carried over."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import Run, json_data, ok
from test_import_gsd import _front, staged, tree_digest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "workflow"


def test_registry_and_state_file_become_initiatives(run: Run, tmp_path: Path) -> None:
    src = staged(tmp_path, FIXTURE)
    before = tree_digest(src)
    project = tmp_path / "proj"
    data = json_data(ok(run("import", "workflow", str(src), "--json", cwd=project)))
    assert [(a["initiative"], a["detail"]) for a in data["actions"]] == [
        ("wfs-user-profile", "3 phases, active"),  # the registry's one active session is the first initiative
        ("wfs-oauth-integration", "3 phases, paused"),
        ("wfs-bug-fix-123", "3 phases, completed"),
        ("abc-123", "6 phases, paused"),  # active in its own file, but one initiative is active at a time
    ]
    ok(run("validate", cwd=project))
    ok(run("check", cwd=project))
    oauth = _front(project / ".planning" / "initiatives" / "wfs-oauth-integration")
    assert [(p["name"], p["status"]) for p in oauth["phases"]] == [
        ("Plan", "completed"),
        ("Implement", "active"),
        ("Review", "pending"),
    ]
    assert oauth["phases"][0]["evidence"] == {"documents": "IMPL_PLAN.md, TASK_BREAKDOWN.md"}
    assert oauth["phases"][1]["evidence"]["todos"] == "8/12"
    assert oauth["progress"]["current_phase_tasks"] == 12 and oauth["lifecycle"]["context"] == "IMPLEMENT"
    done = _front(project / ".planning" / "initiatives" / "wfs-bug-fix-123")
    assert done["lifecycle"]["completed_at"].isoformat() == "2025-09-06T17:00:00+00:00"
    assert done["phases"][2]["evidence"] == {"code_quality": "passed", "test_coverage": "passed"}
    zero = _state(run, project, "abc-123")
    assert zero["structure"] == {"phases_total": 6, "first_phase": 0, "workflow": "spec_execution_v1 v1"}
    assert zero["position"]["phase"] == 3 and zero["phases_completed"] == 3
    assert tree_digest(src) == before
    again = json_data(ok(run("import", "workflow", str(src), "--json", cwd=project)))
    assert again["counts"] == {"create": 0, "update": 0, "unchanged": 4}


def test_zero_based_phases_keep_timing_evidence_and_checkpoints(run: Run, tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURE / ".praxis-os", src / ".praxis-os")
    project = tmp_path / "proj"
    project.mkdir()
    ok(run("import", "workflow", str(src), cwd=project))
    state = _front(project / ".planning")
    phase0, phase2, phase3 = state["phases"][0], state["phases"][2], state["phases"][3]
    assert phase0["duration_seconds"] == 1800 and phase0["checkpoint"] == "passed"
    assert phase2["evidence"] == {"tests": "42/45", "coverage": "65%"}
    assert phase3["status"] == "active" and phase3["imported_from"]["id"] == 3
    brief = json_data(ok(run("resume", "--json", cwd=project)))
    assert brief["current_phase"]["number"] == 3 and brief["progress"]["phases_completed"] == 3


def _state(run: Run, project: Path, initiative: str) -> dict[str, Any]:
    """`status --json` of an initiative, with its STATE.md's structure."""
    status: dict[str, Any] = json_data(ok(run("status", "--json", "--initiative", initiative, cwd=project)))
    status["structure"] = _front(project / ".planning" / "initiatives" / initiative)["structure"]
    return status


def test_import_with_dir_creates_the_workspace_there(run: Run, tmp_path: Path) -> None:
    (tmp_path / "new").mkdir()
    data = json_data(ok(run("import", "workflow", str(FIXTURE / ".workflow"), "--dir", "new", "--json")))
    assert [(a["action"], a["initiative"]) for a in data["actions"]] == [
        ("create", "wfs-user-profile"),  # the first initiative: `.planning/` itself
        ("create", "wfs-oauth-integration"),
        ("create", "wfs-bug-fix-123"),
    ]
    assert _front(tmp_path / "new" / ".planning")["initiative"] == "wfs-user-profile"
    listed = json_data(ok(run("initiative", "list", "--json", cwd=tmp_path / "new")))["initiatives"]
    assert [(i["initiative"], i["lifecycle"]["state"]) for i in listed] == [
        ("wfs-user-profile", "active"),
        ("wfs-bug-fix-123", "completed"),
        ("wfs-oauth-integration", "paused"),
    ]
    ok(run("check", cwd=tmp_path / "new"))
