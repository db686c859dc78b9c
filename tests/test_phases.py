"""Phases through the real CLI (seed 000): completion against the snapshot, checkpoints, timing, legacy files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, exits, front, json_data, json_envelope, ok, refused, state_file

from planstate.core.errors import UsageError
from planstate.model.kinds import State, is_complete
from planstate.workspace import Workspace

START = datetime(2026, 1, 1, tzinfo=UTC)


def at(minutes: int) -> dict[str, str]:
    """An environment pinning the clock `minutes` after START."""
    return {"PLANSTATE_NOW": (START + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")}


def stamp(minutes: int) -> datetime:
    """The time `minutes` after START."""
    return START + timedelta(minutes=minutes)


def status(run: Run, folder: Path) -> dict[str, Any]:
    """`planstate status --json`."""
    value: dict[str, Any] = json_data(ok(run("status", "--json", cwd=folder)))
    return value


def history(folder: Path) -> list[dict[str, Any]]:
    """The root initiative's history entries."""
    text = (folder / ".planning" / "history.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


SIX = ["Plan", "Setup", "Build", "Test", "Docs", "Ship"]


@pytest.mark.parametrize("first", [0, 1])
def test_seed_000_the_last_phase_completes_the_initiative(run: Run, tmp_path: Path, first: int) -> None:
    """Six phases numbered 0-5 (or 1-6): completing the last completes the initiative; nothing points past it."""
    phases = [arg for name in SIX for arg in ("--phase", name)]
    ok(run("init", "--title", "Seed", "--first-phase", str(first), *phases, env=at(0)))
    numbers = list(range(first, first + 6))
    for i, number in enumerate(numbers):
        before = status(run, tmp_path)
        assert (before["current_phase"]["number"], before["current_phase"]["status"]) == (number, "active")
        assert before["complete"] is False
        assert before["lifecycle"]["state"] == "active"
        out = ok(run("phase", "complete", str(number), env=at(30 * (i + 1)))).stdout
        if number != numbers[-1]:
            assert out == f"phase {number} ({SIX[i]}): active → completed in 30m, checkpoint passed; " + (
                f"phase {number + 1} ({SIX[i + 1]}) started\n"
            )
    last = numbers[-1]
    assert out == f"phase {last} (Ship): active → completed in 30m, checkpoint passed; initiative seed completed\n"
    final = status(run, tmp_path)
    assert final["complete"] is True
    assert final["lifecycle"]["state"] == "completed"
    assert final["lifecycle"]["completed_at"] == "2026-01-01T03:00:00Z"
    assert (final["current_phase"]["number"], final["current_phase"]["name"]) == (last, "Ship")
    assert (final["phases_total"], final["phases_completed"], final["percent"]) == (6, 6, 100)
    state = front(tmp_path)
    assert state["position"]["phase"] == last
    assert state["structure"] == {"phases_total": 6, "first_phase": first}
    assert f"phase: {last + 1}" not in state_file(tmp_path).read_text()
    for i, phase in enumerate(state["phases"]):
        assert phase["status"] == "completed"
        assert phase["checkpoint"] == "passed"
        assert phase["started"] == stamp(30 * i)
        assert phase["completed"] == stamp(30 * (i + 1))
        assert phase["duration_seconds"] == 1800
        assert phase["attempts"] == 1
        assert "previous" not in phase  # a first start keeps no earlier attempt
    assert state["lifecycle"]["completed_at"] == stamp(180)
    assert history(tmp_path)[-1] == {
        "at": "2026-01-01T03:00:00Z",
        "from": "active",
        "to": "completed",
        "trigger": "phase complete",
        "reason": f"last phase finished: {last} (Ship)",
        "by": "tester",
    }
    ok(run("validate"))
    refused(run("phase", "complete", str(last)), "initiative seed is completed (read-only)", "`planstate reopen` first")
    assert Workspace.find(tmp_path).state().position.phase == last


def test_completing_a_phase_that_is_not_current_is_refused(run: Run, project: Path) -> None:
    before = state_file(project).read_bytes()
    refused(
        run("phase", "complete", "3", cwd=project),
        ".planning/STATE.md:",
        "position.phase: cannot complete phase 3: phase 1 is the current phase; phase 3 is pending",
    )
    refused(run("phase", "complete", "4", cwd=project), "cannot complete phase 4: phases are numbered 1 to 3")
    refused(run("phase", "complete", "0", cwd=project), "phases are numbered 1 to 3")
    refused(run("phase", "complete", "one", cwd=project), "invalid int value")
    refused(run("phase", "complete", "1", "--checkpoint", "maybe", cwd=project), "invalid choice")
    assert state_file(project).read_bytes() == before


def test_a_failed_checkpoint_is_retried_then_passed(run: Run, project: Path) -> None:
    out = ok(
        run(
            "phase",
            "complete",
            "1",
            "--checkpoint",
            "failed",
            "--evidence",
            "tests=42/45",
            "--evidence",
            "coverage=65",
            cwd=project,
            env=at(60),
        )
    ).stdout
    assert (
        out
        == "phase 1 (Design): checkpoint failed; the phase stays active (`planstate phase retry 1` starts it again)\n"
    )
    phase = front(project)["phases"][0]
    assert (phase["status"], phase["checkpoint"]) == ("active", "failed")
    assert phase["evidence"] == {"tests": "42/45", "coverage": 65}
    assert "completed" not in phase
    report = status(run, project)
    assert (report["current_phase"]["number"], report["current_phase"]["checkpoint"]) == (1, "failed")
    refused(run("phase", "start", "2", cwd=project), "phase 1 (Design) is active")
    before = state_file(project).read_bytes()
    for checkpoint in ("passed", "failed"):  # a failed checkpoint is retried, never passed over
        line = refused(
            run("phase", "complete", "1", "--checkpoint", checkpoint, "--evidence", "coverage=82", cwd=project),
            "phases.1.checkpoint:",
            "phase 1's checkpoint failed; `planstate phase retry 1` first",
        )
        assert line.startswith("planstate: .planning/STATE.md:")
    assert state_file(project).read_bytes() == before

    out = ok(run("phase", "retry", "1", cwd=project, env=at(90))).stdout
    assert out == "phase 1 (Design): retrying after a failed checkpoint (attempt 2)\n"
    phase = front(project)["phases"][0]
    assert (phase["status"], phase["checkpoint"], phase["attempts"], phase["started"]) == (
        "active",
        "pending",
        2,
        stamp(90),
    )
    # the failed attempt is history (seed 000): kept whole in `previous`, not mixed into the new attempt
    assert "evidence" not in phase
    assert "failed_at" not in phase or phase["failed_at"] is None
    assert phase["previous"] == [
        {
            "started": stamp(0),
            "ended": stamp(60),
            "checkpoint": "failed",
            "evidence": {"tests": "42/45", "coverage": 65},
            "failure": None,
        }
    ]
    refused(run("phase", "retry", "1", cwd=project), "cannot retry phase 1: it is active with checkpoint pending")

    ok(run("phase", "complete", "1", "--evidence", "coverage=82", cwd=project, env=at(150)))
    phase = front(project)["phases"][0]
    assert (phase["status"], phase["checkpoint"]) == ("completed", "passed")
    assert phase["evidence"] == {"coverage": 82}
    assert phase["previous"][0]["evidence"] == {"tests": "42/45", "coverage": 65}
    assert phase["duration_seconds"] == 3600  # measured from the last start
    assert front(project)["position"]["phase"] == 2


def test_fail_and_retry(run: Run, project: Path) -> None:
    refused(run("phase", "fail", "1", cwd=project), "--reason")
    out = ok(run("phase", "fail", "1", "--reason", "tests are red", cwd=project, env=at(20))).stdout
    assert out == "phase 1 (Design): active → failed (tests are red)\n"
    phase = front(project)["phases"][0]
    assert (phase["status"], phase["failure"], phase["failed_at"]) == ("failed", "tests are red", stamp(20))
    assert front(project)["lifecycle"]["state"] == "active"  # a failed phase is not a failed initiative
    refused(run("phase", "complete", "1", cwd=project), "phase 1 failed; `planstate phase retry 1` first")
    refused(run("phase", "fail", "1", "--reason", "again", cwd=project), "cannot fail phase 1: it is failed")
    out = ok(run("phase", "retry", "1", cwd=project, env=at(30))).stdout
    assert out == "phase 1 (Design): failed → active (attempt 2)\n"
    phase = front(project)["phases"][0]
    assert (phase["status"], phase["failure"], phase["failed_at"], phase["attempts"]) == ("active", None, None, 2)
    assert phase["previous"] == [
        {"started": stamp(0), "ended": stamp(20), "checkpoint": "pending", "evidence": {}, "failure": "tests are red"}
    ]
    refused(run("phase", "retry", "2", cwd=project), "phase 1 is the current phase; phase 2 is pending")


def test_skip_moves_on_and_the_last_skip_completes(run: Run, project: Path) -> None:
    out = ok(run("phase", "skip", "1", "--reason", "design exists", cwd=project)).stdout
    assert out == "phase 1 (Design): active → skipped; phase 2 (Build) started\n"
    phase = front(project)["phases"][0]
    assert (phase["status"], phase["checkpoint"], phase["skip_reason"]) == ("skipped", "skipped", "design exists")
    ok(run("phase", "complete", "2", cwd=project))
    out = ok(run("phase", "skip", "3", cwd=project)).stdout
    assert out == "phase 3 (Ship): active → skipped; initiative demo completed\n"
    assert history(project)[-1]["trigger"] == "phase skip"
    report = status(run, project)
    assert (report["complete"], report["current_phase"]["number"]) == (True, 3)


def test_phase_commands_need_an_active_initiative(run: Run, project: Path) -> None:
    ok(run("pause", cwd=project))
    before = state_file(project).read_bytes()
    line = refused(run("phase", "complete", "1", cwd=project), "lifecycle.state:", "the initiative is paused")
    assert "`planstate resume --activate` makes it active" in line
    refused(run("phase", "start", "2", cwd=project), "the initiative is paused")
    assert state_file(project).read_bytes() == before
    ok(run("resume", "--activate", cwd=project))
    ok(run("error", "--reason", "oops", cwd=project))
    refused(run("phase", "skip", "1", cwd=project), "the initiative is error", "`planstate retry`")


def test_a_phase_command_resumes_a_suspended_initiative_by_itself(run: Run, project: Path) -> None:
    """Seed 002: suspended is a technical pause that resumes when work goes on; paused is not."""
    ok(run("suspend", "--reason", "server restart", cwd=project, env=at(10)))
    out = ok(run("phase", "complete", "1", cwd=project, env=at(20))).stdout
    assert out.splitlines()[0] == "demo: suspended → active (auto-resume: work went on)"
    assert out.splitlines()[1].startswith("phase 1 (")
    last = history(project)[-1]
    assert (last["from"], last["to"], last["trigger"]) == ("suspended", "active", "auto-resume")
    assert last["reason"] == "work went on: planstate phase complete 1"
    assert front(project)["lifecycle"]["state"] == "active"
    ok(run("suspend", cwd=project, env=at(30)))
    result = json_data(ok(run("phase", "fail", "2", "--reason", "x", "--json", cwd=project, env=at(40))))
    assert (result["auto_resumed"], result["lifecycle"]) == (True, {"state": "active"})
    ok(run("suspend", cwd=project, env=at(50)))
    refused(run("phase", "complete", "7", cwd=project, env=at(60)), "phases are numbered")
    assert front(project)["lifecycle"]["state"] == "suspended"  # a refused command resumes nothing
    ok(run("check", cwd=project, env=at(60)))


def test_start_rules_and_redoing_work_after_a_reopen(run: Run, project: Path) -> None:
    refused(run("phase", "start", "1", cwd=project), "phase 1 is already active")
    refused(run("phase", "start", "2", cwd=project), "cannot start phase 2: phase 1 (Design) is active")
    for number in (1, 2, 3):
        ok(run("phase", "complete", str(number), cwd=project, env=at(10 * number)))
    assert front(project)["lifecycle"]["state"] == "completed"
    ok(run("reopen", "--reason", "one more fix", cwd=project))
    refused(
        run("phase", "start", "1", cwd=project),
        "cannot start phase 1: it is completed",
        "`planstate position --phase 1`",
    )
    out = ok(run("phase", "start", "3", cwd=project, env=at(100))).stdout
    assert out == "phase 3 (Ship): completed → active (attempt 2)\n"
    ship = front(project)["phases"][2]
    assert (ship["status"], ship["checkpoint"], ship["completed"], ship["started"]) == (
        "active",
        "pending",
        None,
        stamp(100),
    )
    assert front(project)["lifecycle"]["completed_at"] is None
    ok(run("phase", "complete", "3", cwd=project, env=at(130)))
    assert front(project)["lifecycle"]["state"] == "completed"
    assert front(project)["phases"][2]["duration_seconds"] == 1800
    assert [e["trigger"] for e in history(project)] == ["init", "phase complete", "reopen", "phase complete"]


def test_completing_resets_the_task_level_position(run: Run, project: Path) -> None:
    ok(run("position", "--plan", "2", "--plan-name", "Parser", "--wave", "1", "--step", "tuning", cwd=project))
    ok(run("task", "start", "Write the parser", cwd=project))
    ok(run("set", "progress.current_phase_tasks", "5", cwd=project))
    ok(run("task", "done", cwd=project))
    ok(run("phase", "complete", "1", cwd=project))
    state = front(project)
    assert state["position"] == {
        "phase": 2,
        "phase_name": "Build",
        "plan": None,
        "plan_name": None,
        "task": None,
        "wave": None,
        "status": "pending",
        "step": None,
    }
    assert (state["progress"]["current_phase_tasks"], state["progress"]["current_phase_completed"]) == (None, 0)


def test_the_generated_next_action_moves_on_but_written_text_stays(run: Run, project: Path) -> None:
    assert front(project)["next_action"] == "Start phase 1: Design"
    ok(run("phase", "complete", "1", cwd=project))
    assert front(project)["next_action"] == "Start phase 2: Build"
    ok(run("next", "Wire the parser into the CLI", cwd=project))
    done = exits(run("phase", "complete", "2", cwd=project))
    assert "the next action was written before phase 2 completed" in done.stderr
    assert front(project)["next_action"] == "Wire the parser into the CLI"


def test_phase_json_output(run: Run, project: Path) -> None:
    result = json_data(ok(run("phase", "complete", "1", "--evidence", "tests=3/3", "--json", cwd=project)))
    assert result["initiative"] == "demo"
    phase = result["phase"]  # a phase is an object, its number under `number`
    assert (result["action"], phase["number"], phase["name"], result["from"], result["to"]) == (
        "complete",
        1,
        "Design",
        "active",
        "completed",
    )
    assert (phase["status"], phase["evidence"]) == ("completed", {"tests": "3/3"})
    assert (result["current_phase_number"], result["next_phase"]) == (2, {"number": 2, "name": "Build"})
    assert (result["initiative_completed"], result["lifecycle"]) == (False, {"state": "active"})
    assert result["unfinished_phase_numbers"] == [2, 3]


def test_the_python_api(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.find(project)
    monkeypatch.setenv("PLANSTATE_NOW", "2026-01-01T00:45:00Z")
    done = ws.phase.complete(1, checkpoint="passed", evidence={"tests": "42/45"})
    assert (done.status, done.duration_seconds, done.next_phase) == ("completed", 2700, 2)
    assert ws.phase.fail(2, reason="red").status == "failed"
    assert ws.phase.retry(2).attempts == 2
    assert ws.phase.skip(2, reason="later").status == "skipped"
    with pytest.raises(UsageError, match="checkpoint must be passed or failed"):
        ws.phase.complete(3, checkpoint="maybe")
    last = ws.phase.complete(3)
    assert last.initiative_completed and last.current_phase == 3
    assert ws.state().lifecycle.state == "completed"
    with pytest.raises(UsageError) as caught:
        ws.phase.start(1)
    assert caught.value.field == "lifecycle.state"
    assert caught.value.line is not None


LEGACY_DONE = """---
schema_version: 1
initiative: legacy
title: Written by an older tool
phases:
  - name: One
    status: completed
  - name: Two
    status: completed
  - name: Three
    status: completed
position:
  phase: 3
lifecycle:
  state: active
---
"""


def test_a_legacy_file_without_structure_answers_completion(run: Run, tmp_path: Path) -> None:
    planning = tmp_path / ".planning"
    planning.mkdir()
    (planning / "STATE.md").write_text(LEGACY_DONE)
    ok(run("validate"))
    report = status(run, tmp_path)
    assert report["complete"] is True
    assert report["lifecycle"]["state"] == "active"  # the file says so; completion comes from its phases
    assert (
        report["phases_total"],
        report["phases_completed"],
        report["percent"],
        report["current_phase"]["number"],
    ) == (
        3,
        3,
        100,
        3,
    )
    assert is_complete(State(front(tmp_path)))
    assert (planning / "STATE.md").read_text() == LEGACY_DONE  # reading never rewrites


def test_a_legacy_file_completes_by_its_last_phase(run: Run, tmp_path: Path) -> None:
    planning = tmp_path / ".planning"
    planning.mkdir()
    text = LEGACY_DONE.replace("  - name: Three\n    status: completed\n", "  - name: Three\n    status: active\n")
    (planning / "STATE.md").write_text(text)
    assert status(run, tmp_path)["complete"] is False
    refused(run("phase", "complete", "4"), "phases are numbered 1 to 3")
    out = ok(run("phase", "complete", "3")).stdout
    assert out.endswith("; initiative legacy completed\n")
    report = status(run, tmp_path)
    assert (report["complete"], report["lifecycle"]["state"], report["current_phase"]["number"]) == (
        True,
        "completed",
        3,
    )
    assert "structure" not in front(tmp_path)  # planstate does not invent a snapshot for an old file


LEGACY_ZERO = """---
schema_version: 1
initiative: legacy
title: Numbered from 0 by an older tool
phases:
  - name: Zero
    status: completed
  - name: One
    status: active
  - name: Two
    status: pending
position:
  phase: 1
lifecycle:
  state: active
---
"""


@pytest.mark.parametrize(
    "position",
    ["  phase: 0\n", "  phase: 1\n", "  phase: 2\n  phase_name: Two\n"],
    ids=["at-zero", "by-active-phase", "by-phase-name"],
)
def test_a_legacy_file_numbered_from_zero_loads_and_completes(run: Run, tmp_path: Path, position: str) -> None:
    planning = tmp_path / ".planning"
    planning.mkdir()
    text = LEGACY_ZERO.replace("  phase: 1\n", position)
    if position.startswith("  phase: 0"):
        text = text.replace("  - name: One\n    status: active\n", "  - name: One\n    status: pending\n")
        text = text.replace("  - name: Zero\n    status: completed\n", "  - name: Zero\n    status: active\n")
    elif "Two" in position:
        text = text.replace("  - name: One\n    status: active\n", "  - name: One\n    status: completed\n")
        text = text.replace("  - name: Two\n    status: pending\n", "  - name: Two\n    status: active\n")
    (planning / "STATE.md").write_text(text)
    ok(run("validate"))
    current = int(position.split()[1])
    report = status(run, tmp_path)
    assert report["current_phase"]["number"] == current and report["complete"] is False
    assert (planning / "STATE.md").read_text() == text  # reading never rewrites
    for number in range(current, 3):
        ok(run("phase", "complete", str(number)))
    report = status(run, tmp_path)
    assert (report["complete"], report["lifecycle"]["state"], report["current_phase"]["number"]) == (
        True,
        "completed",
        2,
    )
    # The first write pinned the inferred numbering, which the position alone would no longer tell.
    assert front(tmp_path)["structure"] == {"phases_total": 3, "first_phase": 0}
    ok(run("check", "--fix"))  # the missing history of a hand-made file is the only finding
    ok(run("check"))


def test_out_of_order_work_never_points_past_the_end(run: Run, project: Path) -> None:
    """Phases finished out of order: the position stays on valid phases and completion waits for all."""
    ok(run("phase", "fail", "1", "--reason", "blocked on design review", cwd=project))
    ok(run("phase", "start", "3", cwd=project))  # nothing is active, 3 is pending: allowed
    out = ok(run("phase", "complete", "3", cwd=project)).stdout
    assert out.endswith("; still unfinished: phase 1, 2\n")
    state = front(project)
    assert (state["position"]["phase"], state["lifecycle"]["state"]) == (3, "active")
    ok(run("phase", "start", "2", cwd=project))
    ok(run("phase", "complete", "2", cwd=project))
    assert front(project)["position"]["phase"] == 2
    ok(run("position", "--phase", "1", cwd=project))
    ok(run("phase", "retry", "1", cwd=project))
    out = ok(run("phase", "complete", "1", cwd=project)).stdout
    assert out.endswith("; initiative demo completed\n")
    report = status(run, project)
    assert (report["complete"], report["current_phase"]["number"], report["percent"]) == (True, 1, 100)


def blocker(run: Run, folder: Path, *args: str) -> str:
    """Record a blocker through the CLI; return its id."""
    made = json_data(ok(run("blocker", "add", *args, "--json", cwd=folder)))
    return str(made["id"])


def test_open_blockers_on_a_phase_are_warned_about_not_enforced(run: Run, project: Path) -> None:
    """Seed 003's blocker impact: starting or completing a phase an open blocker affects works, and says so."""
    on_one = blocker(run, project, "--description", "review pending", "--affects", "Phase 1: Design")
    on_two = blocker(run, project, "--description", "no sandbox", "--affects", "phase:2", "--active")
    bypassed = blocker(run, project, "--description", "slow CI", "--affects", "phase 2", "--active")
    ok(run("blocker", "bypass", bypassed, "--workaround", "run locally", cwd=project))
    done = blocker(run, project, "--description", "old", "--affects", "phase 2")
    ok(run("blocker", "resolve", done, "--resolution", "fixed", cwd=project))
    blocker(run, project, "--description", "elsewhere", "--affects", "the payment team")

    result = run("phase", "complete", "1", cwd=project, env=at(45))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "phase 1 (Design): active → completed in 45m, checkpoint passed; phase 2 (Build) started\n"
    assert result.stderr == (
        f"planstate: warning: blocker {on_one} still affects phase 1: resolve or bypass it\n"
        f"planstate: warning: blocker {on_two} still affects phase 2: resolve or bypass it\n"
    )
    ok(run("phase", "fail", "2", "--reason", "red", cwd=project))
    retried = run("phase", "retry", "2", "--json", cwd=project)
    assert retried.returncode == 0
    assert json_envelope(retried)["warnings"] == [f"blocker {on_two} still affects phase 2: resolve or bypass it"]
    ok(run("phase", "fail", "2", "--reason", "red again", cwd=project))
    started = run("phase", "start", "3", "--json", cwd=project)
    assert started.returncode == 0 and started.stderr == ""
    assert json_envelope(started)["warnings"] == []
    ok(run("blocker", "resolve", on_two, "--resolution", "keys arrived", cwd=project))
    ok(run("phase", "complete", "3", cwd=project))


def test_phase_warnings_and_the_brief_read_affects_the_same_way(run: Run, project: Path) -> None:
    """A blocker naming a phase by its name is one the phase commands warn about and the brief shows as blocking."""
    by_name = blocker(run, project, "--description", "design review", "--affects", "  build ", "--active")
    started = run("phase", "complete", "1", "--json", cwd=project)
    assert started.returncode == 0, started.stderr
    assert json_envelope(started)["warnings"] == [f"blocker {by_name} still affects phase 2: resolve or bypass it"]
    brief = json_data(run("resume", "--json", cwd=project))
    assert [p["number"] for p in brief["blocked_phases"]] == [2]


def test_a_rerun_after_reopen_keeps_the_completed_run(run: Run, project: Path) -> None:
    for number, minutes in (("1", 10), ("2", 20), ("3", 30)):
        ok(run("phase", "complete", number, "--evidence", f"run={number}", cwd=project, env=at(minutes)))
    done = front(project)
    assert done["lifecycle"]["total_duration_seconds"] == 30 * 60  # seed 000: from `created` to completion
    ok(run("reopen", cwd=project, env=at(40)))
    assert "total_duration_seconds" not in front(project)["lifecycle"] or (
        front(project)["lifecycle"]["total_duration_seconds"] is None
    )
    ok(run("phase", "start", "3", cwd=project, env=at(50)))
    phase = front(project)["phases"][2]
    assert (phase["status"], phase["started"], phase["attempts"], phase.get("completed")) == (
        "active",
        stamp(50),
        2,
        None,
    )
    assert "evidence" not in phase
    assert phase["previous"] == [
        {"started": stamp(20), "ended": stamp(30), "checkpoint": "passed", "evidence": {"run": 3}, "failure": None}
    ]
    ok(run("phase", "complete", "3", cwd=project, env=at(60)))
    assert front(project)["lifecycle"]["total_duration_seconds"] == 60 * 60
    ok(run("validate", cwd=project))


def test_evidence_written_before_a_first_start_stays_with_it(run: Run, project: Path) -> None:
    ok(run("set", "phases.2.evidence.design_doc", "docs/build.md", cwd=project))
    ok(run("phase", "complete", "1", cwd=project))
    phase = front(project)["phases"][1]
    assert (phase["status"], phase["evidence"]) == ("active", {"design_doc": "docs/build.md"})
    assert "previous" not in phase
