"""Archived and completed initiatives are read-only (seed 004), enforced for every write in transaction.py.

An archived initiative can only be reopened; a completed one only reopened or archived. Ending or
reaping a session that was still running is allowed: the session really ended.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Run, exits
from test_bad_input import refuses, snapshot

from planstate.core.errors import UsageError
from planstate.workspace import Workspace

WRITES: list[tuple[str, ...]] = [
    ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r"),
    ("blocker", "add", "--description", "d"),
    ("task", "start", "write the tests"),
    ("next", "something new"),
    ("set", "title", "Renamed"),
    ("append", "resume_context.files_modified", "a.py"),
    ("unset", "next_action"),
    ("position", "--task", "t"),
    ("session", "start", "--agent", "late"),
]


def complete_every_phase(run: Run, project: Path) -> None:
    """Complete phases 1 to 3 of the `project` fixture (each completion starts the next; the last completes it)."""
    for number in ("1", "2", "3"):
        exits(run("phase", "complete", number, "--checkpoint", "passed", cwd=project))
    assert exits(run("get", "lifecycle.state", cwd=project)).stdout == "completed\n"


@pytest.mark.parametrize("args", WRITES, ids=[" ".join(a[:2]) for a in WRITES])
def test_archived_refuses_every_write(run: Run, project: Path, args: tuple[str, ...]) -> None:
    exits(run("archive", cwd=project))
    line = refuses(run, project, args, 2, "initiative demo is archived (read-only): `planstate reopen` first")
    assert line.startswith(".planning/STATE.md:")
    assert "lifecycle.state" in line


@pytest.mark.parametrize("args", WRITES, ids=[" ".join(a[:2]) for a in WRITES])
def test_completed_refuses_every_write(run: Run, project: Path, args: tuple[str, ...]) -> None:
    complete_every_phase(run, project)
    refuses(run, project, args, 2, "initiative demo is completed (read-only): `planstate reopen` first")


def test_reopen_and_archive_still_work(run: Run, project: Path) -> None:
    complete_every_phase(run, project)
    exits(run("archive", cwd=project))
    refuses(run, project, ("pause",), 2, "cannot pause")  # the lifecycle table, not the read-only rule, says no
    exits(run("reopen", cwd=project))
    assert exits(run("get", "lifecycle.state", cwd=project)).stdout == "active\n"
    exits(run("set", "title", "Working again", cwd=project))
    history = (project / ".planning" / "history.jsonl").read_text()
    assert [line.split('"to": "')[1].split('"')[0] for line in history.splitlines()] == [
        "active",
        "completed",
        "archived",
        "active",
    ]


def test_a_running_session_can_still_end(run: Run, project: Path) -> None:
    exits(run("session", "start", "--agent", "worker", cwd=project))
    exits(run("archive", cwd=project))
    result = exits(run("session", "end", "--completed", "wrapped up", cwd=project))
    assert "Ended session" in result.stdout
    before = snapshot(project)
    refuses(run, project, ("session", "start", "--agent", "worker"), 2, "archived (read-only)")
    assert snapshot(project) == before


def test_a_running_session_can_still_be_reaped(run: Run, project: Path) -> None:
    exits(run("session", "start", "--agent", "worker", cwd=project, env={"PLANSTATE_NOW": "2026-01-01T00:00:00Z"}))
    complete_every_phase(run, project)
    result = exits(run("session", "reap", "--json", cwd=project, env={"PLANSTATE_NOW": "2026-01-03T00:00:00Z"}))
    assert '"crashed"' in result.stdout
    sessions = list((project / ".planning" / "sessions").glob("ses-*.md"))
    assert len(sessions) == 1
    assert "status: crashed" in sessions[0].read_text()


def test_check_fix_may_still_repair_derived_values(run: Run, project: Path) -> None:
    exits(run("archive", cwd=project))
    path = project / ".planning" / "STATE.md"
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    exits(run("check", "--fix", cwd=project))
    assert "  percent: 0\n" in path.read_text()


def test_an_archived_initiative_beside_an_active_one(run: Run, project: Path) -> None:
    exits(run("initiative", "new", "side", "--phase", "X", cwd=project))
    exits(run("archive", "--initiative", "side", cwd=project))
    refuses(run, project, ("--initiative", "side", "decision", "add", "--context", "c", "--decision", "d",
                           "--reason", "r"), 2, "side is archived")  # fmt: skip
    exits(run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project))


def test_the_api_refuses_too(project: Path) -> None:
    ws = Workspace.find(project)
    ws.archive()
    before = snapshot(project)
    with pytest.raises(UsageError, match=r"archived \(read-only\)"), ws.edit() as state:
        state.next_action = "sneak in"
    assert snapshot(project) == before
    with pytest.raises(UsageError, match="archived"):
        ws.decision.add(context="c", decision="d", reason="r")
    assert snapshot(project) == before
    ws.reopen()
    assert ws.state().lifecycle.state == "active"
