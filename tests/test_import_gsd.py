"""`planstate import gsd` on real GSD trees (tests/fixtures/gsd, SOURCES.txt names each): the workspace it makes
validates and checks clean, status and resume tell the source's story, a second import creates nothing, the source
stays byte-identical, and everything without a place in the format is reported."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, exits, json_data, ok, refused

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gsd"
NOW = {"PLANSTATE_NOW": "2026-11-26T12:00:00Z"}


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file under `folder` (relative path) with the SHA-256 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def staged(tmp_path: Path, fixture: Path, name: str = "src") -> Path:
    """A copy of the source folder `fixture` as tmp_path/`name`, beside an empty project folder tmp_path/proj."""
    target = tmp_path / name
    shutil.copytree(fixture, target)
    (tmp_path / "proj").mkdir()
    return target


def source(tmp_path: Path, name: str) -> Path:
    """A copy of a GSD fixture's `.planning/` folder, as `src/` in tmp_path (the project folder is `proj/`)."""
    return staged(tmp_path, FIXTURES / name / ".planning")


def imported(run: Run, tmp_path: Path, name: str) -> dict[str, Any]:
    """Import a fixture into a new workspace in tmp_path/proj; the `--json` data of the import."""
    src = source(tmp_path, name)
    data: dict[str, Any] = json_data(ok(run("import", "gsd", str(src), "--json", cwd=tmp_path / "proj", env=NOW)))
    return data


def story(run: Run, project: Path, initiative: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """`status --json` and `resume --json` of the workspace, after validate and check found nothing."""
    where = ("--initiative", initiative) if initiative else ()
    ok(run("validate", cwd=project))
    ok(run("check", cwd=project))
    status = json_data(ok(run("status", "--json", *where, cwd=project, env=NOW)))
    brief = json_data(exits(run("resume", "--json", *where, cwd=project, env=NOW), 0))
    return status, brief


def test_gsd_town_phases_position_decisions_and_blockers(run: Run, tmp_path: Path) -> None:
    src = source(tmp_path, "PloganNV+gsd-town")
    before = tree_digest(src)
    project = tmp_path / "proj"
    printed = ok(run("import", "gsd", str(src), cwd=project, env=NOW)).stdout
    assert "create initiative GSD-Town: 5 phases, active" in printed
    assert "Not mapped" in printed and "REQUIREMENTS.md: file: no mapping for it" in printed
    status, brief = story(run, project)
    # ROADMAP leaves phases 1 and 2 unchecked, but every plan of theirs has a SUMMARY: they are done
    assert (status["phases_total"], status["phases_completed"]) == (5, 3)
    assert status["current_phase"]["number"] == 3 and status["current_phase"]["name"] == "Auto-Setup"
    assert status["position"]["status"] == "verifying"  # "Phase complete — ready for verification"
    assert brief["blockers"]["open"] == 3
    decisions = json_data(ok(run("decision", "list", "--json", cwd=project)))["decisions"]
    titles = {d["title"] for d in decisions}
    assert "One polecat per plan" in titles  # PROJECT.md Key Decisions
    assert "Managed Town Location" in titles  # 03-CONTEXT.md <decisions>
    assert sum(d["context"].startswith("STATE.md Decisions") for d in decisions) == 17  # 4 `Init:` and 13 by phase
    assert tree_digest(src) == before


def test_a_second_import_creates_nothing_and_the_source_stays_byte_identical(run: Run, tmp_path: Path) -> None:
    src = source(tmp_path, "PostHog+posthog-vscode")
    before = tree_digest(src)
    project = tmp_path / "proj"
    first = json_data(ok(run("import", "gsd", str(src), "--json", cwd=project, env=NOW)))
    files = tree_digest(project / ".planning")
    second = json_data(ok(run("import", "gsd", str(src), "--json", cwd=project, env=NOW)))
    assert first["counts"]["create"] == len(first["actions"]) > 10
    assert second["counts"] == {"create": 0, "update": 0, "unchanged": len(first["actions"])}
    after = tree_digest(project / ".planning")
    assert {k: v for k, v in after.items() if ".local" not in k} == {
        k: v for k, v in files.items() if ".local" not in k
    }
    assert tree_digest(src) == before


def test_posthog_tells_one_of_five_phases_and_the_oauth_blocker(run: Run, tmp_path: Path) -> None:
    imported(run, tmp_path, "PostHog+posthog-vscode")
    status, brief = story(run, tmp_path / "proj")
    assert (status["phases_total"], status["phases_completed"]) == (5, 1)
    assert status["current_phase"]["number"] == 1  # the body says `Phase: 1 of 5`
    blockers = json_data(ok(run("blocker", "list", "--json", cwd=tmp_path / "proj")))["blockers"]
    oauth = next(b for b in blockers if "OAuth" in b["title"])
    assert oauth["status"] == "active" and oauth["affects"] == ["phase 4"]
    assert brief["blockers"]["open"] == 2


def test_schoolcare_shipped_milestone_becomes_a_completed_initiative(run: Run, tmp_path: Path) -> None:
    data = imported(run, tmp_path, "Playbits+schoolcare-v2")
    project = tmp_path / "proj"
    created = [a for a in data["actions"] if a["kind"] == "initiative"]
    assert [(a["initiative"], a["detail"]) for a in created] == [
        ("schoolcare", "4 phases, active"),
        ("schoolcare-v2-0", "7 phases, completed"),
    ]
    status, _ = story(run, project)
    assert status["title"] == "SchoolCare v2.1 — Backend Hardening"  # numbering starts late: phase 8 is our 1
    assert status["current_phase"]["name"] == "Error Propagation"
    assert status["next_action"] == "Plan phase 1: Error Propagation (GSD phase 8)"
    shipped, _ = story(run, project, "schoolcare-v2-0")
    assert (
        shipped["lifecycle"]["state"] == "completed" and shipped["lifecycle"]["completed_at"] == "2026-07-02T00:00:00Z"
    )
    assert (shipped["phases_total"], shipped["phases_completed"]) == (7, 7)
    labels = [p["imported_from"]["id"] for p in _front(project / ".planning/initiatives/schoolcare-v2-0")["phases"]]
    assert labels == ["1", "2", "3", "4", "5", "6", "7"]
    unmapped = {(u["path"], u["what"]) for u in data["unmapped"]}
    assert ("phases/07-validation-rollout/07-ROLLOUT.md", "file") in unmapped
    assert ("SUMMARY files", "front matter key 'tech-stack'") in unmapped


def test_a_decimal_phase_made_by_gsd_tools_gets_the_next_number_and_keeps_its_label(run: Run, tmp_path: Path) -> None:
    data = imported(run, tmp_path, "made-with-gsd-tools")
    project = tmp_path / "proj"
    state = _front(project / ".planning")
    assert [(p["name"], p["imported_from"]["id"]) for p in state["phases"]] == [
        ("Foundation", "1"),
        ("Checkout API", "2"),
        ("Payment hotfix", "2.1"),
        ("Deploy", "3"),
    ]
    status, brief = story(run, project)
    assert status["current_phase"]["number"] == 2 and status["current_phase"]["status"] == "active"
    assert status["next_action"] == "Start with: call the payment provider from the checkout endpoint"  # .continue-here
    blocker = json_data(ok(run("blocker", "list", "--json", cwd=project)))["blockers"][0]
    assert blocker["affects"] == ["phase 4"]  # "Phase 3: waiting for hosting credentials": GSD's 3 is our 4
    sessions = json_data(ok(run("session", "list", "--json", cwd=project)))["sessions"]
    handoff = next(s for s in sessions if s.get("handoff_reason"))
    assert handoff["completed"] == [
        "Task 1: Cart model - Done",
        "Task 2: Checkout endpoint - In progress, validation written",
    ]
    assert brief["last_session"] is not None
    assert data["counts"]["create"] == 6


def test_dry_run_prints_the_plan_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    src = source(tmp_path, "PloganNV+gsd-town")
    project = tmp_path / "proj"
    printed = ok(run("import", "gsd", str(src), "--dry-run", cwd=project)).stdout
    assert printed.startswith("Import from gsd (") and "dry run, nothing written" in printed
    assert "38 would create, 0 would update, 0 unchanged" in printed
    assert list(project.iterdir()) == []


def test_import_into_an_existing_workspace_adds_a_paused_initiative(run: Run, project: Path, tmp_path: Path) -> None:
    src = tmp_path / "gsd-town"
    shutil.copytree(FIXTURES / "PloganNV+gsd-town" / ".planning", src)
    ok(run("import", "gsd", str(src), cwd=project, env=NOW))
    listed = json_data(ok(run("initiative", "list", "--json", cwd=project)))["initiatives"]
    assert [(i["initiative"], i["lifecycle"]["state"]) for i in listed] == [("demo", "active"), ("gsd-town", "paused")]
    status, _ = story(run, project, "gsd-town")
    assert status["lifecycle"]["reason"] == "imported while demo is active"
    assert status["phases_completed"] == 3
    again = json_data(ok(run("import", "gsd", str(src), "--json", cwd=project)))
    assert again["counts"]["create"] == again["counts"]["update"] == 0


def test_a_source_inside_the_workspace_is_refused(run: Run, tmp_path: Path) -> None:
    project = tmp_path / "in-place"
    shutil.copytree(FIXTURES / "PloganNV+gsd-town", project)
    before = tree_digest(project)
    refused(run("import", "gsd", ".planning", cwd=project), "overlap", "git mv .planning .gsd-planning")
    assert tree_digest(project) == before


@pytest.mark.parametrize("source_name", ["gsd", "gsdd"])
def test_an_unknown_source_is_refused(run: Run, tmp_path: Path, source_name: str) -> None:
    result = run("import", source_name, str(tmp_path), cwd=tmp_path)
    if source_name == "gsd":
        refused(result, "nothing to import")
    else:
        assert result.returncode == 2 and "invalid choice: 'gsdd'" in result.stderr


def _front(folder: Path) -> dict[str, Any]:
    """The front matter of the STATE.md in an initiative folder."""
    from planstate.text.document import Document

    value = Document.from_bytes((folder / "STATE.md").read_bytes()).data
    assert isinstance(value, dict)
    return value


def test_a_changed_shipped_milestone_is_refused_before_anything_is_written(run: Run, tmp_path: Path) -> None:
    imported(run, tmp_path, "Playbits+schoolcare-v2")
    project = tmp_path / "proj"
    roadmap = tmp_path / "src" / "ROADMAP.md"
    roadmap.write_text(roadmap.read_text(encoding="utf-8").replace("Phase 1: Foundation", "Phase 1: Base"), "utf-8")
    (tmp_path / "src" / "phases" / "09-security-hardening" / "09-01-SUMMARY.md").write_text(
        "---\nphase: 09-security-hardening\nplan: 01\ncompleted: 2026-07-10\n---\nDone.\n", encoding="utf-8"
    )
    before = committed(project)
    refused(run("import", "gsd", str(tmp_path / "src"), cwd=project), "schoolcare-v2-0 is completed (read-only)")
    assert committed(project) == before


def committed(project: Path) -> dict[str, str]:
    """The digests of a workspace's files, without the machine-local `.local/` (lock, cache)."""
    return {k: v for k, v in tree_digest(project / ".planning").items() if not k.startswith(".local")}


def test_the_plan_is_shown_before_anything_is_written(project: Path, tmp_path: Path) -> None:
    from planstate.interop.write import Imported
    from planstate.workspace import Workspace

    src = tmp_path / "gsd-town"
    shutil.copytree(FIXTURES / "PloganNV+gsd-town" / ".planning", src)
    seen: list[tuple[int, bool]] = []

    def look(plan: Imported) -> None:
        seen.append((plan.counts()["create"], (project / ".planning" / "initiatives").exists()))

    result = Workspace.find(project, actor="tester").import_from("gsd", src, on_plan=look)
    assert seen == [(38, False)]
    assert (project / ".planning" / "initiatives" / "gsd-town" / "STATE.md").is_file()
    assert result.counts()["create"] == 38


def test_a_plan_filed_under_the_wrong_phase_counts_for_the_phase_it_names(run: Run, tmp_path: Path) -> None:
    src = source(tmp_path, "PloganNV+gsd-town")
    for name in ("03-01-PLAN.md", "03-01-SUMMARY.md"):
        (src / "phases" / "03-auto-setup" / name).rename(src / "phases" / "02-npm-package" / name)
    data = json_data(ok(run("import", "gsd", str(src), "--dry-run", "--json", cwd=tmp_path / "proj")))
    wrong = [u for u in data["unmapped"] if u["what"] == "filed under phase 2"]
    assert [u["path"] for u in wrong] == [
        "phases/02-npm-package/03-01-PLAN.md",
        "phases/02-npm-package/03-01-SUMMARY.md",
    ]
    assert all(u["why"] == "its front matter names phase 3: counted there" for u in wrong)


def test_a_state_file_of_66000_characters_tells_the_same_story(run: Run, tmp_path: Path) -> None:
    """Real STATE.md files grow long (one public tree's holds 66,000 characters, most of it metrics tables)."""
    src = source(tmp_path, "PloganNV+gsd-town")
    state = src / "STATE.md"
    text = state.read_text(encoding="utf-8")
    rows = "".join(f"| 03-{i:03d} | {i % 50} min | {i % 7} tasks | {i % 11} files |\n" for i in range(1800))
    state.write_text(text.replace("## Accumulated Context", rows + "\n## Accumulated Context", 1), encoding="utf-8")
    assert len(state.read_text(encoding="utf-8")) > 66_000
    project = tmp_path / "proj"
    ok(run("import", "gsd", str(src), cwd=project, env=NOW))
    status, brief = story(run, project)
    assert (status["phases_total"], status["phases_completed"], status["current_phase"]["number"]) == (5, 3, 3)
    assert brief["blockers"]["open"] == 3
