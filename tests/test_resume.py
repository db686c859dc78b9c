"""The resume brief: status order, timing estimates, stall detection, verification, budget, trust, frozen time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from builders import (
    T0,
    blocker,
    decision,
    realistic,
    session,
    state_data,
    timed_phases,
    write_record,
    write_state,
)
from conftest import Run, json_data

from planstate.report.budget import DEFAULT_BUDGET, DROP_ORDER, MIN_BUDGET, duration_text
from planstate.workspace import Workspace

NAMES = ["Schema", "JWT", "OAuth", "Deploy"]


def brief_json(run: Run, project: Path, now: datetime, *args: str, code: int = 0) -> dict[str, Any]:
    """`planstate resume --json` at a frozen time (exit `code`: 1 when the state cannot be trusted)."""
    done = run("resume", "--json", *args, cwd=project, env={"PLANSTATE_NOW": now.isoformat()})
    assert done.returncode == code, done.stderr
    return json_data(done)  # type: ignore[no-any-return]


def brief_text(run: Run, project: Path, now: datetime, *args: str, code: int = 0) -> str:
    """`planstate resume` for people at a frozen time (exit `code`: 1 when the state cannot be trusted)."""
    done = run("resume", *args, cwd=project, env={"PLANSTATE_NOW": now.isoformat()})
    assert done.returncode == code, done.stderr
    assert done.stderr == ""
    return done.stdout


# ---------------------------------------------------------------------------- the status order


def test_status_completed_comes_first(run: Run, tmp_path: Path) -> None:
    phases = timed_phases(NAMES, done=4)
    end = phases[-1]["completed"]
    lifecycle = {"state": "completed", "since": end, "completed_at": end, "by": "alice"}
    # even a failed checkpoint of an earlier attempt does not outrank completion
    phases[1]["evidence"] = {"tests": "45/45"}
    write_state(tmp_path, state_data(phases=phases, current=4, lifecycle=lifecycle))
    data = brief_json(run, tmp_path, end + timedelta(days=3))
    assert data["status"] == "completed"
    assert data["progress"] == {
        "phases_total": 4,
        "phases_completed": 4,
        "percent": 100,
        "complete": True,
        "tasks_total": None,
        "tasks_completed": None,
    }
    assert data["timing"]["phases_remaining"] == 0
    assert data["timing"]["estimated_remaining_seconds"] == 0
    assert "reopen" in brief_text(run, tmp_path, end + timedelta(days=3))


def test_status_paused_outranks_a_failed_checkpoint(run: Run, tmp_path: Path) -> None:
    phases = timed_phases(NAMES, done=1)
    phases[1].update(checkpoint="failed", evidence={"tests": "42/45", "coverage": "65%"})
    lifecycle = {
        "state": "paused",
        "since": T0 + timedelta(hours=5),
        "reason": "waiting for OAuth credentials",
        "context": "Implement token rotation endpoint",
        "by": "alice",
    }
    write_state(tmp_path, state_data(phases=phases, current=2, lifecycle=lifecycle))
    now = T0 + timedelta(days=2)
    data = brief_json(run, tmp_path, now)
    assert data["status"] == "paused"
    assert data["lifecycle"]["reason"] == "waiting for OAuth credentials"
    text = brief_text(run, tmp_path, now)
    assert "why: waiting for OAuth credentials" in text
    assert "was working on: Implement token rotation endpoint" in text
    assert "planstate resume --activate" in text
    assert "paused since 2026-11-01 14:00 UTC (43h ago) by alice" in text
    assert "evidence: tests=42/45, coverage=65%" in text


def test_status_checkpoint_failed_outranks_a_stall(run: Run, tmp_path: Path) -> None:
    phases = timed_phases(NAMES, done=2, hours=1)
    phases[2].update(checkpoint="failed", evidence={"coverage": "65%"})
    write_state(tmp_path, state_data(phases=phases, current=3))
    now = phases[2]["started"] + timedelta(hours=10)  # 10x the average: stalled too
    data = brief_json(run, tmp_path, now)
    assert data["timing"]["possibly_stalled"] is True
    assert data["status"] == "checkpoint_failed"
    assert data["checkpoints"] == [
        {
            "number": 3,
            "name": "OAuth",
            "status": "active",
            "checkpoint": "failed",
            "evidence": {"coverage": "65%"},
            "failure": None,
        }
    ]


def test_status_possibly_stalled_and_active(run: Run, tmp_path: Path) -> None:
    phases = timed_phases(NAMES, done=2, hours=1)
    write_state(tmp_path, state_data(phases=phases, current=3))
    started = phases[2]["started"]
    assert brief_json(run, tmp_path, started + timedelta(hours=2))["status"] == "active"  # exactly 2x: not over
    stalled = brief_json(run, tmp_path, started + timedelta(hours=2, seconds=1))
    assert stalled["status"] == "possibly_stalled"
    text = brief_text(run, tmp_path, started + timedelta(hours=3))
    assert "WARNING possibly stalled: phase 3 has run 3h, over twice the average" in text


def test_status_blocked_names_the_blocker_of_the_current_phase(run: Run, tmp_path: Path) -> None:
    """Seed 003: an open (new or active) blocker that names the current phase, by number or by name, blocks it."""
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1, hours=1), current=2))
    first = write_record(tmp_path, "blocker", blocker(1, title="No signing key", affects=["JWT"]))
    write_record(tmp_path, "blocker", blocker(2, title="Later", affects=["phase 4"], status="new"))
    write_record(tmp_path, "blocker", blocker(3, affects=["phase 3"], status="bypassed", workaround="a stub"))
    now = T0 + timedelta(hours=5)  # 4x the average: stalled too, but blocked says why
    data = brief_json(run, tmp_path, now)
    assert data["status"] == "blocked" and data["timing"]["possibly_stalled"] is True
    assert data["blocked_phases"] == [
        {"number": 2, "name": "JWT", "current": True, "blockers": [{"id": first.stem, "title": "No signing key"}]},
        {
            "number": 4,
            "name": "Deploy",
            "current": False,
            "blockers": [{"id": data["blocked_phases"][1]["blockers"][0]["id"], "title": "Later"}],
        },
    ]
    assert data["escalate"] is False  # phase 3's blocker is bypassed: work can go on there
    text = brief_text(run, tmp_path, now)
    assert f"Status: blocked\n  phase 2 JWT waits on {first.stem} (No signing key)\n" in text
    assert "ESCALATE" not in text


def test_a_failed_checkpoint_outranks_blocked_and_a_bypassed_blocker_blocks_nothing(run: Run, tmp_path: Path) -> None:
    phases = timed_phases(NAMES, done=1)
    write_state(tmp_path, state_data(phases=phases, current=2))
    record = write_record(tmp_path, "blocker", blocker(1, affects=["phase 2"], status="bypassed", workaround="stub"))
    assert brief_json(run, tmp_path, T0 + timedelta(hours=3))["status"] == "active"
    record.write_text(record.read_text().replace("status: bypassed", "status: active"))
    assert brief_json(run, tmp_path, T0 + timedelta(hours=3))["status"] == "blocked"
    phases[1].update(checkpoint="failed")
    write_state(tmp_path, state_data(phases=phases, current=2))
    assert brief_json(run, tmp_path, T0 + timedelta(hours=3))["status"] == "checkpoint_failed"


def test_every_unfinished_phase_blocked_asks_for_a_person(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    write_record(tmp_path, "blocker", blocker(1, affects=["phase 2", "Phase 3: OAuth"]))
    write_record(tmp_path, "blocker", blocker(2, affects=["deploy"], status="new"))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=3))
    assert data["status"] == "blocked" and data["escalate"] is True
    assert [p["number"] for p in data["blocked_phases"]] == [2, 3, 4]
    text = brief_text(run, tmp_path, T0 + timedelta(hours=3))
    assert (
        "ESCALATE: every unfinished phase is blocked (phases 2, 3, 4): a person must resolve or bypass a blocker\n"
        in text
    )
    assert len(brief_text(run, tmp_path, T0 + timedelta(hours=3), "--budget", str(MIN_BUDGET))) <= MIN_BUDGET
    assert "ESCALATE: every unfinished phase" in brief_text(run, tmp_path, T0, "--budget", str(MIN_BUDGET))


@pytest.mark.parametrize("state", ["suspended", "error", "failed", "abandoned", "archived"])
def test_other_stopped_states_lead_with_why(run: Run, tmp_path: Path, state: str) -> None:
    lifecycle: dict[str, Any] = {"state": state, "since": T0, "reason": f"went {state}", "by": "bot"}
    if state == "error":
        lifecycle["error"] = {"message": "database unreachable", "at": T0, "retries": 2}
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2, lifecycle=lifecycle))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=3))
    assert data["status"] == state
    text = brief_text(run, tmp_path, T0 + timedelta(hours=3))
    assert f"why: went {state}" in text
    if state == "error":
        assert data["lifecycle"]["error"]["message"] == "database unreachable"
        assert "error: database unreachable" in text
        assert "2 retries so far" in text
        assert "planstate retry" in text


# ---------------------------------------------------------------------------- timing


def test_no_completed_phase_means_no_estimate(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=0), current=1))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=30))
    assert data["timing"]["average_phase_seconds"] is None
    assert data["timing"]["estimated_remaining_seconds"] is None
    assert data["timing"]["possibly_stalled"] is False  # no average, so no stall claim
    assert data["timing"]["no_timing_data"] is True  # as the text says, though the current phase has a start
    assert data["current_phase"]["running_seconds"] == 30 * 3600
    assert data["status"] == "active"
    assert "no timing data yet" in brief_text(run, tmp_path, T0 + timedelta(hours=30))


def test_estimate_from_one_completed_phase(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1, hours=3), current=2))
    timing = brief_json(run, tmp_path, T0 + timedelta(hours=4))["timing"]
    assert timing["timed_phases"] == 1
    assert timing["no_timing_data"] is False
    assert timing["average_phase_seconds"] == 3 * 3600
    assert timing["phases_remaining"] == 3
    assert timing["estimated_remaining_seconds"] == 9 * 3600


def test_estimate_averages_many_phases(run: Run, tmp_path: Path) -> None:
    phases = timed_phases(NAMES, done=3, hours=1)
    phases[1]["completed"] = phases[1]["started"] + timedelta(hours=4)  # 1h, 4h, 1h → 2h average
    write_state(tmp_path, state_data(phases=phases, current=4))
    timing = brief_json(run, tmp_path, T0 + timedelta(days=1))["timing"]
    assert timing["average_phase_seconds"] == 2 * 3600
    assert timing["estimated_remaining_seconds"] == 2 * 3600
    assert "about 2h left for 1 phase" in brief_text(run, tmp_path, T0 + timedelta(days=1))


def test_legacy_state_without_timing_or_structure(run: Run, tmp_path: Path) -> None:
    """A STATE.md from an older tool: no structure snapshot, no phase times. Clear words, no crash."""
    phases = [{"name": n, "status": "completed" if i < 2 else "pending"} for i, n in enumerate(NAMES)]
    write_state(tmp_path, state_data(phases=phases, current=3, structure=False))
    data = brief_json(run, tmp_path, T0)
    assert data["timing"]["no_timing_data"] is True
    assert data["progress"]["phases_total"] == 4
    assert data["progress"]["percent"] == 50
    text = brief_text(run, tmp_path, T0)
    assert "no timing data" in text
    assert "Progress: phase 3 of 4, 2 completed (50%)" in text


def test_legacy_state_answers_completion_from_its_phases(run: Run, tmp_path: Path) -> None:
    phases = [{"name": n, "status": "completed"} for n in NAMES]
    write_state(tmp_path, state_data(phases=phases, current=4, structure=False))
    assert brief_json(run, tmp_path, T0)["status"] == "completed"


def test_durations_read_well() -> None:
    """The brief shows durations the way regions and checks do (durations.show), and `unknown` for none."""
    assert [duration_text(s) for s in (0, 59, 60, 3599, 3600, 5400, 47 * 3600, 49 * 3600, 72 * 3600)] == [
        "0s",
        "59s",
        "1m",
        "59m",
        "1h",
        "1h 30m",
        "47h",
        "2d 1h",
        "3d",
    ]
    assert duration_text(None) == "unknown"


# ---------------------------------------------------------------------------- records in the brief


def test_records_in_the_brief(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    old = write_record(tmp_path, "decision", decision(1, title="Use jsonwebtoken", status="superseded"))
    write_record(tmp_path, "decision", decision(2, title="Use jose", supersedes=old.stem, reversible=False))
    write_record(
        tmp_path, "blocker", blocker(1, title="OAuth credentials", status="bypassed", workaround="email login")
    )
    write_record(tmp_path, "blocker", blocker(2, title="Old blocker", status="resolved", resolution="done"))
    write_record(tmp_path, "session", session(1, status="crashed", issues=["no heartbeat"]))
    write_record(tmp_path, "session", session(3, handoff_reason="Context limit reached", working_on="Phase 2"))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=8))
    assert [d["title"] for d in data["decisions"]["items"]] == ["Use jose"]
    assert data["decisions"]["superseded"] == 1
    assert [b["title"] for b in data["blockers"]["items"]] == ["OAuth credentials"]
    assert data["blockers"]["items"][0]["workaround"] == "email login"
    assert data["last_session"]["handoff_reason"] == "Context limit reached"
    text = brief_text(run, tmp_path, T0 + timedelta(hours=8))
    assert "workaround: email login" in text
    assert "handoff: Context limit reached" in text
    assert "Use jose: Chose option 2 over the others (irreversible)" in text
    assert "Use jsonwebtoken" not in text


def test_rejected_decisions_are_hidden_and_proposed_ones_marked(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    write_record(tmp_path, "decision", decision(1, title="Use sessions"))
    write_record(tmp_path, "decision", decision(2, title="Use Redis", status="rejected", rejection="too costly"))
    write_record(tmp_path, "decision", decision(3, title="Use jose", status="superseded"))
    write_record(tmp_path, "decision", decision(4, title="Use SQLite", status="proposed"))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=8))["decisions"]
    assert [(d["title"], d["status"]) for d in data["items"]] == [
        ("Use SQLite", "proposed"),
        ("Use sessions", "accepted"),
    ]
    assert (data["total"], data["superseded"], data["rejected"]) == (4, 1, 1)
    text = brief_text(run, tmp_path, T0 + timedelta(hours=8))
    assert "Recent decisions (2 of 2; 1 superseded and 1 rejected, hidden):\n" in text
    assert "[proposed] Use SQLite: Chose option 4 over the others\n" in text
    assert "Use Redis" not in text and "Use jose" not in text
    assert "[proposed] Use sessions" not in text


def test_a_decision_title_is_not_repeated_by_its_decision(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    same = write_record(tmp_path, "decision", decision(1, title="Use jose", decision="Use jose"))
    longer = write_record(
        tmp_path, "decision", decision(2, title="Use Redis", decision="use Redis for sessions, TTL 1d")
    )
    text = brief_text(run, tmp_path, T0 + timedelta(hours=8))
    assert f"{same.stem} Use jose\n" in text
    assert f"{longer.stem} use Redis for sessions, TTL 1d\n" in text and "Use Redis" not in text


# ---------------------------------------------------------------------------- verification


def test_verification_flags_missing_files(run: Run, tmp_path: Path) -> None:
    context = {"files_modified": ["src/kept.py", "src/gone.py"], "key_implementations": [], "open_questions": []}
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2, resume_context=context))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kept.py").write_text("x = 1\n")
    flags = brief_json(run, tmp_path, T0)["verification"]
    assert flags == [
        {
            "kind": "missing_files",
            "files": ["src/gone.py"],
            "count": 1,
            "message": "1 file is listed as modified but no longer exists",
        }
    ]
    text = brief_text(run, tmp_path, T0)
    assert "1 file is listed as modified but no longer exists: src/gone.py" in text
    assert "Files modified: src/kept.py (and the 1 missing one above)\n" in text  # each file named once
    assert brief_json(run, tmp_path, T0)["files_modified"] == {"total": 2, "missing": 1, "items": ["src/kept.py"]}


def test_verification_flags_a_blocker_on_a_completed_phase(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=2), current=3))
    kept = write_record(tmp_path, "blocker", blocker(1, affects=["Phase 1: Schema", "phase 3"]))
    named = write_record(tmp_path, "blocker", blocker(3, affects=["jwt"], status="bypassed", workaround="x"))
    write_record(tmp_path, "blocker", blocker(2, affects=["phase 1"], status="resolved", resolution="fixed"))
    flags = brief_json(run, tmp_path, T0)["verification"]
    assert sorted((f["kind"], f["blocker"], f["phase_number"]) for f in flags) == sorted(
        [("blocker_on_completed_phase", kept.stem, 1), ("blocker_on_completed_phase", named.stem, 2)]
    )  # a phase is named by number or by its name


def git(cwd: Path, *args: str, when: datetime | None = None) -> None:
    """Run git with a fixed identity (and commit time)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    if when is not None:
        env.update(GIT_AUTHOR_DATE=when.isoformat(), GIT_COMMITTER_DATE=when.isoformat())
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_verification_flags_git_changes_the_state_does_not_mention(run: Run, tmp_path: Path) -> None:
    ended = T0 + timedelta(hours=2)
    context = {"files_modified": ["src/mentioned.py"], "key_implementations": [], "open_questions": []}
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2, resume_context=context))
    write_record(tmp_path, "session", session(0))  # ended at T0 + 2h
    src = tmp_path / "src"
    src.mkdir()
    (src / "before.py").write_text("a\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "before the session ended", when=ended - timedelta(hours=1))
    (src / "mentioned.py").write_text("b\n")
    (src / "committed_after.py").write_text("c\n")
    (tmp_path / ".planning" / "notes.txt").write_text("a planning file\n")
    (tmp_path / ".planning-notes").mkdir()  # a folder whose name only starts with the planning folder's
    (tmp_path / ".planning-notes" / "kept.md").write_text("e\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "after", when=ended + timedelta(hours=1))
    (src / "uncommitted.py").write_text("d\n")
    (tmp_path / ".planning" / "STATE.md").write_text(
        (tmp_path / ".planning" / "STATE.md").read_text() + "\nnote\n"
    )  # planning files never count: committed, changed or untracked
    (tmp_path / ".planning" / "untracked.txt").write_text("f\n")
    flags = brief_json(run, tmp_path, ended + timedelta(hours=3))["verification"]
    assert len(flags) == 1
    assert flags[0]["kind"] == "unrecorded_changes"
    assert flags[0]["files"] == [".planning-notes/kept.md", "src/committed_after.py", "src/uncommitted.py"]
    assert flags[0]["since"] == "2026-11-01T11:00:00Z"


def crashed_mid_session(run: Run, project: Path, start: datetime) -> None:
    """A git project whose agent started a session on a fresh initiative, changed files and crashed (no end)."""
    git(project, "init", "-q", "-b", "main")
    (project / "a.py").write_text("a\n")
    git(project, "add", "a.py")
    git(project, "commit", "-qm", "before", when=start - timedelta(days=1))
    env = {"PLANSTATE_NOW": start.isoformat()}
    for args in (("init", "--title", "T", "--phase", "A", "--phase", "B"), ("session", "start", "--by", "worker-1")):
        done = run(*args, cwd=project, env=env)
        assert done.returncode == 0, done.stderr
    with (project / "a.py").open("a") as handle:
        handle.write("mod\n")
    (project / "new.py").write_text("n\n")


def test_uncommitted_changes_are_flagged_when_no_session_has_ended(run: Run, tmp_path: Path) -> None:
    """After a crash no session has ended: changes since the crashed session started are flagged all the same."""
    crashed_mid_session(run, tmp_path, T0)
    data = brief_json(run, tmp_path, T0 + timedelta(days=2, hours=12))
    (flag,) = [f for f in data["verification"] if f["kind"] == "unrecorded_changes"]
    assert flag["files"] == ["a.py", "new.py"]
    assert (flag["since"], flag["since_event"]) == ("2026-11-01T09:00:00Z", "session_started")
    text = brief_text(run, tmp_path, T0 + timedelta(days=2, hours=12))
    assert (
        "Check before you continue:\n  - 2 files changed in git since the oldest active session started "
        "(no session has ended) that the state does not mention: a.py, new.py\n" in text
    )


def test_without_sessions_changes_since_the_last_lifecycle_change_are_flagged(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))  # active since T0, no session
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "old.py").write_text("a\n")
    git(tmp_path, "add", "old.py")
    git(tmp_path, "commit", "-qm", "before", when=T0 - timedelta(hours=1))
    (tmp_path / "late.py").write_text("b\n")
    git(tmp_path, "add", "late.py")
    git(tmp_path, "commit", "-qm", "after", when=T0 + timedelta(hours=1))
    (tmp_path / "old.py").write_text("changed\n")
    (flag,) = brief_json(run, tmp_path, T0 + timedelta(days=1))["verification"]
    assert flag["files"] == ["late.py", "old.py"] and flag["since_event"] == "lifecycle_changed"
    assert (
        flag["message"] == "2 files changed in git since the last lifecycle change (no session yet) that the "
        "state does not mention"
    )


def test_git_file_names_come_through_unquoted(run: Run, tmp_path: Path) -> None:
    """Quotes, spaces and ` -> ` in file names are names, not git's quoting or rename arrows."""
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    write_record(tmp_path, "session", session(0))
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "old.py").write_text("a\n")
    git(tmp_path, "add", "old.py")
    git(tmp_path, "commit", "-qm", "before", when=T0)
    git(tmp_path, "mv", "old.py", "a -> b.py")
    (tmp_path / 'say "hi".py').write_text("b\n")
    (tmp_path / "two words.py").write_text("c\n")
    flags = brief_json(run, tmp_path, T0 + timedelta(days=1))["verification"]
    (flag,) = [f for f in flags if f["kind"] == "unrecorded_changes"]
    assert flag["files"] == ["a -> b.py", 'say "hi".py', "two words.py"]


def test_outside_git_there_is_no_git_flag(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    write_record(tmp_path, "session", session(0))
    assert brief_json(run, tmp_path, T0 + timedelta(days=1))["verification"] == []


# ---------------------------------------------------------------------------- sessions


def test_an_active_but_silent_session_is_said_to_have_probably_crashed(run: Run, tmp_path: Path) -> None:
    crashed_mid_session(run, tmp_path, T0)
    now = T0 + timedelta(days=2, hours=12)
    data = brief_json(run, tmp_path, now)
    last = data["last_session"]
    assert (last["status"], last["agent"], last["silent_seconds"]) == ("active", "worker-1", 60 * 3600)
    assert data["sessions"]["active"] == []
    text = brief_text(run, tmp_path, now)
    assert (
        f"Last session: {last['id']} by worker-1, active but silent for 2d 12h (probably crashed; "
        "`planstate session reap` marks it), started 2026-11-01 09:00 UTC (2d 12h ago)\n" in text
    )


def test_a_session_alive_now_is_not_the_last_session(run: Run, tmp_path: Path) -> None:
    """A session with a heartbeat within the stale threshold is active now, not a handoff to pick up."""
    crashed_mid_session(run, tmp_path, T0)
    data = brief_json(run, tmp_path, T0 + timedelta(minutes=10))
    assert data["last_session"] is None
    (active,) = data["sessions"]["active"]
    assert active["agent"] == "worker-1" and active["last_seen"] == "2026-11-01T09:00:00Z"
    assert "Active sessions (1):\n  - ses-" in brief_text(run, tmp_path, T0 + timedelta(minutes=10))


def test_only_active_sessions_are_judged_by_their_heartbeat(run: Run, tmp_path: Path) -> None:
    """A session that is over stays over whatever its heartbeat says (the brief looks at the heartbeats of active
    sessions and of the last one only), and the last one's heartbeat still tells when it was last seen."""
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    ended = session(1, handoff_reason="Done for today")
    write_record(tmp_path, "session", session(0))
    write_record(tmp_path, "session", ended)
    beats = tmp_path / ".planning" / ".local" / "heartbeats"
    beats.mkdir(parents=True)
    late = T0 + timedelta(hours=20)
    (beats / ended["id"]).write_text("x")
    os.utime(beats / ended["id"], (late.timestamp(), late.timestamp()))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=20, minutes=5))
    assert data["sessions"]["active"] == [] and data["sessions"]["total"] == 2
    last = data["last_session"]
    assert (last["id"], last["last_seen"], last["silent_seconds"]) == (ended["id"], f"{late:%Y-%m-%dT%H:%M:%SZ}", None)


def test_starting_a_session_keeps_the_previous_handoff_in_view(run: Run, project: Path) -> None:
    """The returning agent's first `session start` must not hide the handoff it is resuming from."""

    def at(hours: float, *args: str) -> None:
        done = run(*args, cwd=project, env={"PLANSTATE_NOW": (T0 + timedelta(hours=hours)).isoformat()})
        assert done.returncode == 0, done.stderr

    at(0, "session", "start", "--by", "worker-1", "--working-on", "Design review")
    at(1, "session", "end", "--handoff-reason", "Context limit reached", "--completed", "Wrote the design")
    at(30, "session", "start", "--by", "worker-2", "--working-on", "Build")
    data = brief_json(run, project, T0 + timedelta(hours=30, minutes=5))
    last, (mine,) = data["last_session"], data["sessions"]["active"]
    assert last["handoff_reason"] == "Context limit reached" and last["agent"] == "worker-1"
    assert mine["agent"] == "worker-2" and mine["resumed_from"] == last["id"]
    text = brief_text(run, project, T0 + timedelta(hours=30, minutes=5))
    assert f"Last session: {last['id']} by worker-1, ended," in text
    assert "  handoff: Context limit reached\n" in text
    assert (
        f"  - {mine['id']} by worker-2, started 2026-11-02 15:00 UTC (5m ago), resuming {last['id']}; "
        "working on: Build\n" in text
    )


def test_an_unreadable_session_is_counted_where_the_last_session_is_shown(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    broken = tmp_path / ".planning" / "sessions" / "ses-1b2k9qx7m4fa-bot.md"
    broken.write_text("---\nid: ses-1b2k9qx7m4fa\nagent: [half written\n")
    text = brief_text(run, tmp_path, T0 + timedelta(days=1), code=1)
    assert "Last session: none that can be read; 1 session file could not be read (see above)\n" in text
    write_record(tmp_path, "session", session(1, handoff_reason="Done for today"))
    data = brief_json(run, tmp_path, T0 + timedelta(days=1), code=1)
    assert data["sessions"]["unreadable"] == 1 and data["sessions"]["total"] == 1
    assert data["last_session"]["handoff_reason"] == "Done for today"
    text = brief_text(run, tmp_path, T0 + timedelta(days=1), code=1)
    assert "  and 1 session file could not be read (see above): the last session may be one of them\n" in text


# ---------------------------------------------------------------------------- size and budget


@pytest.fixture(scope="module")
def realistic_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The realistic initiative, built once per module with its front-matter cache warmed."""
    folder = tmp_path_factory.mktemp("realistic")
    realistic(folder)
    Workspace.find(folder).brief()  # fills .planning/.local/cache
    return folder


@pytest.fixture
def big(realistic_template: Path, tmp_path: Path) -> Path:
    """A private copy of the realistic initiative."""
    target = tmp_path / "big"
    shutil.copytree(realistic_template, target)
    return target


def test_realistic_initiative_brief_is_short(run: Run, big: Path) -> None:
    """10 phases, 200 decisions, 50 blockers, 300 sessions with real text lengths: the default brief stays under
    4,000 characters, keeps the most important parts whole, recent decisions included (the issue requires them),
    and says what it left out."""
    tmp_path = big
    now = T0 + timedelta(days=14)
    text = brief_text(run, tmp_path, now)
    assert len(text) <= DEFAULT_BUDGET
    assert "Status: possibly stalled\n" in text
    assert "Progress: phase 7 of 10, 6 completed (60%)" in text
    data = brief_json(run, tmp_path, now)  # --json without --budget is complete
    assert data["dropped"] == [] and data["blockers"]["open"] == 10 and len(data["decisions"]["items"]) == 5
    for line in data["next_action"].splitlines():
        assert f"  {line}\n" in text  # the next action is whole
    assert "Open blockers (10):" in text and "and 2 more" in text
    assert "Recent decisions (5 of 180; 20 superseded, hidden):\n" in text
    for item in data["decisions"]["items"]:
        assert f"  - {item['date']} {item['id']} {item['title']}: {item['decision']}\n" in text
    assert "Files modified" not in text  # all 12 are missing: listed once, under "Check before you continue"
    assert text.count("workaround: the same as above") == 2  # the same workaround is written out once
    full = brief_text(run, tmp_path, now, "--budget", "100000")
    assert len(full) > DEFAULT_BUDGET  # so the default budget is what keeps it short
    assert "Open questions:" in full and "Files modified" not in full
    assert (
        text.rstrip("\n")
        .splitlines()[-1]
        .startswith("(cut to fit the budget: key implementations, open questions, timing left out;")
    )


@pytest.mark.parametrize("budget", [2000, 1500, 900, MIN_BUDGET])
def test_budget_drops_the_least_important_parts_first(run: Run, big: Path, budget: int) -> None:
    tmp_path = big
    now = T0 + timedelta(days=14)
    full = brief_text(run, tmp_path, now)
    assert len(full) > 2000  # so every budget below cuts something
    text = brief_text(run, tmp_path, now, "--budget", str(budget))
    assert len(text) <= budget
    assert "cut " in text
    data = brief_json(run, tmp_path, now, "--budget", str(budget))
    dropped = [d for d in data["dropped"] if d not in ("text", "next_action", "trust")]
    whole = brief_json(run, tmp_path, now)
    shown = [p for p in DROP_ORDER if whole[p] not in (None, [])]
    # parts that show nothing are not dropped: every listed file is missing, and no session is active now
    shown = [p for p in shown if p not in ("files_modified", "sessions")]
    assert dropped == shown[: len(dropped)]  # least important first, none skipped
    for part in dropped:
        assert data[part] is None
    assert data["next_action"] is not None  # the most important facts stay
    assert data["status"] == "possibly_stalled"


def test_budget_that_fits_drops_nothing(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    text = brief_text(run, tmp_path, T0, "--budget", str(MIN_BUDGET + 2000))
    assert "cut" not in text


def test_budget_must_be_sane(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    done = run("resume", "--budget", "50", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--budget" in done.stderr


# ---------------------------------------------------------------------------- trust


def test_a_file_that_does_not_parse_is_said_first(run: Run, tmp_path: Path) -> None:
    path = write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    path.write_text(path.read_text().replace("title: User authentication", "title: [unclosed"))
    before = path.read_bytes()
    text = brief_text(run, tmp_path, T0, code=1)
    assert text.startswith("STOP: the state cannot be trusted yet.")
    assert ".planning/STATE.md:" in text and "fix:" in text
    assert "Progress:" not in text  # no guessing from a broken file
    assert "Nothing more is shown until the files read cleanly." in text
    data = brief_json(run, tmp_path, T0, code=1)
    assert data["trusted"] is False and data["status"] is None
    assert path.read_bytes() == before


def test_conflict_markers_are_said_first(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    record = write_record(tmp_path, "decision", decision(1))
    text = record.read_text()
    record.write_text(text.replace("---\n", "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n---\n", 1))
    out = brief_text(run, tmp_path, T0, code=1)
    assert out.startswith("STOP: the state cannot be trusted yet.")
    assert "unresolved git conflict" in out
    assert "keep the right side" in out and "then run `planstate check`" in out


def test_an_invalid_state_is_not_summarised(run: Run, tmp_path: Path) -> None:
    data = state_data(phases=timed_phases(NAMES, done=1), current=9)  # phase 9 does not exist
    write_state(tmp_path, data)
    out = brief_json(run, tmp_path, T0, code=1)
    assert out["trusted"] is False
    assert "position.phase" in out["trust"][0]["problem"]
    assert out["status"] is None


# ---------------------------------------------------------------------------- the template


def test_user_template_override(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2, next_action="Ship it"))
    templates = tmp_path / ".planning" / "templates"
    templates.mkdir()
    (templates / "resume.md.j2").write_text("{{ b.initiative }} is {{ b.status }}; next: {{ b.next_action }}\n")
    assert brief_text(run, tmp_path, T0) == "user-auth is active; next: Ship it\n"


def test_user_text_is_never_template_code(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2, next_action="{{ 7*7 }} {% raw %}"))
    assert "{{ 7*7 }} {% raw %}" in brief_text(run, tmp_path, T0)


def test_frozen_time_makes_the_brief_reproducible(run: Run, big: Path) -> None:
    tmp_path = big
    now = T0 + timedelta(days=3)
    assert brief_text(run, tmp_path, now) == brief_text(run, tmp_path, now)


def test_python_api_gives_the_same_brief(tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    now = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    b = Workspace.find(tmp_path).brief(now=now)
    assert b.status == "active"
    assert b.to_dict()["now"] == "2026-11-01T12:00:00Z"


def test_json_keys_are_documented(tmp_path: Path) -> None:
    """docs/cli.md's table of `planstate resume --json` names exactly the keys the code prints."""
    import re

    docs = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    table = docs.split("<!-- resume-json -->")[1].split("<!-- /resume-json -->")[0]
    documented = set()
    for cell in re.findall(r"^\| ((?:`\w+`(?:, )?)+) \|", table, re.MULTILINE):
        documented.update(re.findall(r"`(\w+)`", cell))
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    keys = set(Workspace.find(tmp_path).brief().to_dict())
    assert documented - {"activated"} == keys


# ---------------------------------------------------------------------------- review fixes


def test_an_unreadable_blocker_is_counted_where_blockers_are_listed(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    broken = tmp_path / ".planning" / "blockers" / "blk-1b2k9qx7m4fa-quota.md"
    broken.write_text("---\nid: blk-1b2k9qx7m4fa\ntitle: [half written\n")
    text = brief_text(run, tmp_path, T0, code=1)
    assert "Open blockers: none that can be read; 1 blocker file could not be read (see above)" in text
    assert "Open blockers: none\n" not in text
    data = brief_json(run, tmp_path, T0, code=1)
    assert data["blockers"]["unreadable"] == 1 and data["trust"][0]["code"] == "parse-error"


def test_trust_items_come_most_serious_first(run: Run, tmp_path: Path) -> None:
    path = write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    path.write_text(path.read_text().replace("created:", "progress:\n  percent: 99\ncreated:"))  # contradicts phases
    write_record(tmp_path, "session", session(1, status="maybe"))  # a value the format does not allow
    (tmp_path / ".planning" / "blockers" / "blk-1b2k9qx7m4fa-x.md").write_text("---\ntitle: [x\n---\n")
    record = write_record(tmp_path, "decision", decision(1))
    record.write_text(record.read_text() + "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n")
    data = brief_json(run, tmp_path, T0, code=1)
    assert [t["code"] for t in data["trust"]] == ["conflict-marker", "parse-error", "schema-error", "derived-mismatch"]
    assert all("`planstate check" in t["fix"] for t in data["trust"])
    assert data["status"] == "active"  # a readable, valid STATE.md is still summarised, after the problems
    text = brief_text(run, tmp_path, T0, code=1)
    assert text.startswith("STOP: the state cannot be trusted yet.") and "Status: active" in text


def test_schema_problems_ask_for_corrected_values_not_clean_reads(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=9))
    text = brief_text(run, tmp_path, T0, code=1)
    assert "Nothing more is shown until the values are corrected." in text
    assert "read cleanly" not in text


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"lifecycle": {"state": "completed", "since": T0, "completed_at": T0}}, "completion-mismatch"),
        ({"position": {"phase": 2, "phase_name": "Deploy"}}, "phase-name-mismatch"),
    ],
)
def test_a_state_that_contradicts_itself_is_not_trusted(
    run: Run, tmp_path: Path, change: dict[str, Any], code: str
) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2, **change))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=3), code=1)
    assert data["trusted"] is False and [t["code"] for t in data["trust"]] == [code]


def test_a_history_that_leads_elsewhere_is_not_trusted(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2))
    lines = [
        {"at": "2026-11-01T09:00:00Z", "from": None, "to": "active", "trigger": "init"},
        {"at": "2026-11-01T10:00:00Z", "from": "active", "to": "paused", "trigger": "pause"},
    ]
    (tmp_path / ".planning" / "history.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    data = brief_json(run, tmp_path, T0 + timedelta(hours=3), code=1)
    assert [t["code"] for t in data["trust"]] == ["history-mismatch"]


def test_a_legacy_state_is_flagged_in_the_verification(run: Run, tmp_path: Path) -> None:
    phases = [{"name": n, "status": "completed" if i < 2 else "pending"} for i, n in enumerate(NAMES)]
    write_state(tmp_path, state_data(phases=phases, current=3, structure=False))
    data = brief_json(run, tmp_path, T0)
    (note,) = [v for v in data["verification"] if v["kind"] == "legacy_format"]
    assert note["message"] == "legacy format: no structure snapshot; completion is inferred from completed phases"
    assert note["message"] in brief_text(run, tmp_path, T0)


def history_lines(project: Path, *moves: tuple[datetime, str | None, str]) -> None:
    """Write history.jsonl with one transition per (time, from, to)."""
    items = [{"at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "from": a, "to": b, "trigger": "t"} for at, a, b in moves]
    (project / ".planning" / "history.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))


def test_paused_time_is_not_time_in_the_phase(run: Run, tmp_path: Path) -> None:
    """Phase 2 ran 1 hour, the initiative was paused 3 days, then resumed 1 hour ago: it ran 2 hours, not stalled."""
    phases = timed_phases(NAMES, done=1, hours=2)  # phase 2 starts at T0 + 2h; the average phase takes 2h
    lifecycle = {"state": "active", "since": T0 + timedelta(days=3), "by": "alice"}
    write_state(tmp_path, state_data(phases=phases, current=2, lifecycle=lifecycle))
    history_lines(
        tmp_path,
        (T0, None, "active"),
        (T0 + timedelta(hours=3), "active", "paused"),
        (T0 + timedelta(days=3), "paused", "active"),
    )
    now = T0 + timedelta(days=3, hours=1)
    data = brief_json(run, tmp_path, now)
    assert data["current_phase"]["running_seconds"] == 2 * 3600
    assert data["timing"]["possibly_stalled"] is False and data["status"] == "active"


def test_time_since_a_pause_is_not_time_in_the_phase(run: Run, tmp_path: Path) -> None:
    phases = timed_phases(NAMES, done=1, hours=2)
    lifecycle = {"state": "paused", "since": T0 + timedelta(hours=3), "reason": "weekend", "by": "alice"}
    write_state(tmp_path, state_data(phases=phases, current=2, lifecycle=lifecycle))
    history_lines(tmp_path, (T0, None, "active"), (T0 + timedelta(hours=3), "active", "paused"))
    data = brief_json(run, tmp_path, T0 + timedelta(days=5))
    assert data["current_phase"]["running_seconds"] == 3600
    write_state(tmp_path, state_data(phases=phases, current=2, lifecycle=lifecycle))
    (tmp_path / ".planning" / "history.jsonl").unlink()  # without a history, the lifecycle's `since` says the same
    assert brief_json(run, tmp_path, T0 + timedelta(days=5))["current_phase"]["running_seconds"] == 3600


def test_activate_on_an_active_initiative_says_so_and_gives_the_brief(run: Run, tmp_path: Path) -> None:
    write_state(tmp_path, state_data(phases=timed_phases(NAMES, done=1), current=2, next_action="Ship it"))
    history_lines(tmp_path, (T0, None, "active"))
    before = (tmp_path / ".planning" / "STATE.md").read_bytes()
    text = brief_text(run, tmp_path, T0, "--activate")
    assert text.startswith("user-auth is already active; nothing to resume\n")
    assert "Status: active" in text and "Ship it" in text
    data = brief_json(run, tmp_path, T0, "--activate")
    assert data["activated"]["already_active"] is True and data["status"] == "active"
    assert (tmp_path / ".planning" / "STATE.md").read_bytes() == before


def test_activate_resumes_a_paused_initiative(run: Run, project: Path) -> None:
    paused = run("pause", "--reason", "lunch", cwd=project)
    assert paused.returncode == 0, paused.stderr
    data = json_data(run("resume", "--activate", "--reason", "back", "--json", cwd=project))
    assert data["activated"]["from"] == "paused" and data["activated"]["already_active"] is False
    assert data["lifecycle"]["state"] == "active"


@pytest.mark.parametrize("reason", ["back", "x" * 500])
def test_the_activate_line_counts_toward_the_budget(run: Run, big: Path, reason: str) -> None:
    now = T0 + timedelta(days=14)
    paused = run("pause", "--reason", "lunch", cwd=big, env={"PLANSTATE_NOW": now.isoformat()})
    assert paused.returncode == 0, paused.stderr
    text = brief_text(run, big, now, "--activate", "--reason", reason, "--budget", "1500")
    assert text.startswith("user-auth: paused → active (") and len(text) <= 1500
    assert len(text.splitlines()[0]) <= 120  # a long reason is shortened on screen; the history keeps it whole
    again = brief_text(run, big, now, "--activate", "--budget", str(MIN_BUDGET))
    assert again.startswith("user-auth is already active; nothing to resume\n") and len(again) <= MIN_BUDGET


def test_a_small_budget_never_cuts_the_status_or_the_next_action(run: Run, big: Path) -> None:
    now = T0 + timedelta(days=14)
    whole = brief_json(run, big, now)["next_action"]
    text = brief_text(run, big, now, "--budget", str(MIN_BUDGET))
    assert len(text) <= MIN_BUDGET
    assert "\nStatus: possibly stalled\n" in text and "Progress:" not in text and "Position:" not in text
    shown = text.split("Next action:\n", 1)[1].split("\n\n", 1)[0]
    lines = [line.removeprefix("  ") for line in shown.splitlines()]
    assert lines[-1].endswith("…") and whole.startswith("\n".join(lines).removesuffix("…"))
    data = brief_json(run, big, now, "--budget", str(MIN_BUDGET))
    assert "text" not in data["dropped"]
    assert data["dropped"][-1] == "next_action"  # shortened only once every droppable part was gone
    assert {"progress", "position", "current_phase"} <= set(data["dropped"])
    assert text.rstrip("\n").splitlines()[-1].startswith("(cut to fit the budget:")
    assert "next action shortened" in text
