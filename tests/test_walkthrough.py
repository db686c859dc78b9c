"""A whole initiative through the real CLI: init, sessions, decisions, blockers, phases, pause and resume,
completion and archive, with the files on disk checked after every step."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conftest import Run, outside_regions

from planstate.text.document import Document


class Walk:
    """Runs steps one hour apart on a pinned clock and reads the files back."""

    def __init__(self, run: Run, project: Path) -> None:
        self.run = run
        self.project = project
        self.planning = project / ".planning"
        self.hour = 0

    def step(self, *args: str, stderr: str = "", code: int = 0) -> str:
        """Run one command an hour after the previous one; it must exit with `code` and print `stderr` exactly."""
        self.hour += 1
        when = f"2026-03-01T{self.hour:02d}:00:00Z"
        done = self.run(*args, cwd=self.project, env={"PLANSTATE_NOW": when, "PLANSTATE_ACTOR": "alice"})
        assert done.returncode == code, (args, done.stdout, done.stderr)
        assert done.stderr == stderr, (args, done.stderr)
        return done.stdout

    def refused(self, *args: str, needle: str) -> None:
        """Run a command that must be refused: exit 2, one line on stderr containing `needle`, no file changed."""
        before = {p: p.read_bytes() for p in self.planning.rglob("*") if p.is_file() and ".local" not in p.parts}
        done = self.run(*args, cwd=self.project, env={"PLANSTATE_ACTOR": "alice"})
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stdout == "" and len(done.stderr.splitlines()) == 1 and needle in done.stderr, done.stderr
        after = {p: p.read_bytes() for p in self.planning.rglob("*") if p.is_file() and ".local" not in p.parts}
        assert after == before

    def state(self) -> dict[str, Any]:
        """STATE.md's front matter."""
        data = Document.from_bytes((self.planning / "STATE.md").read_bytes()).data
        assert isinstance(data, dict)
        return data

    def record(self, folder: str) -> tuple[Path, dict[str, Any]]:
        """The only record file of a folder, and its front matter."""
        files = sorted(p for p in (self.planning / folder).glob("*.md"))
        assert len(files) == 1, files
        data = Document.from_bytes(files[0].read_bytes()).data
        assert isinstance(data, dict)
        return files[0], data

    def history(self) -> list[tuple[str | None, str, str]]:
        """(from, to, trigger) of every history line."""
        lines = (self.planning / "history.jsonl").read_text().splitlines()
        return [(e["from"], e["to"], e["trigger"]) for e in map(json.loads, lines)]


def test_a_whole_initiative_through_the_cli(run: Run, tmp_path: Path) -> None:
    w = Walk(run, tmp_path)

    w.step("init", "--title", "Checkout", "--phase", "Cart", "--phase", "Payment", "--phase", "Receipts")
    state = w.state()
    assert state["structure"] == {"phases_total": 3, "first_phase": 1}
    assert [p["status"] for p in state["phases"]] == ["active", "pending", "pending"]
    assert state["position"]["phase"] == 1
    assert w.history() == [(None, "active", "init")]
    assert {p.name for p in w.planning.iterdir()} >= {"decisions", "blockers", "sessions", ".gitattributes"}

    w.step("session", "start", "--agent", "worker-1", "--working-on", "the cart")
    session_file, session = w.record("sessions")
    assert (session["status"], session["agent"], session["working_on"]) == ("active", "worker-1", "the cart")
    assert (w.planning / ".local" / "heartbeats" / session["id"]).is_file()

    state_text = outside_regions(w.planning / "STATE.md")
    w.step("decision", "add", "--context", "Cart storage", "--decision", "Server-side carts", "--reason", "Sync")
    _, decision = w.record("decisions")
    assert (decision["decision"], decision["status"], decision["phase"]) == ("Server-side carts", "accepted", 1)
    w.step("blocker", "add", "--description", "No payment sandbox", "--affects", "phase 2", "--active")
    _, blocker = w.record("blockers")
    assert (blocker["status"], blocker["affects"]) == ("active", ["phase 2"])
    assert outside_regions(w.planning / "STATE.md") == state_text  # record commands render only the regions

    w.step("task", "start", "Cart model")
    assert (w.state()["position"]["task"], w.state()["position"]["status"]) == ("Cart model", "in_progress")
    w.step("context", "--file", "src/cart.py", "--question", "Guest carts?")
    assert w.state()["resume_context"]["files_modified"] == ["src/cart.py"]

    # phase 2 starts while the blocker still affects it: allowed, with a warning naming the blocker
    warning = f"planstate: warning: blocker {blocker['id']} still affects phase 2: resolve or bypass it\n"
    w.step("phase", "complete", "1", "--evidence", "tests=12/12", stderr=warning)
    state = w.state()
    assert state["phases"][0]["status"] == "completed"
    assert state["phases"][0]["evidence"] == {"tests": "12/12"}
    assert state["phases"][0]["duration_seconds"] == 6 * 3600  # started at init (hour 1), completed at hour 7
    assert (state["phases"][1]["status"], state["position"]["phase"]) == ("active", 2)
    assert state["position"]["task"] is None  # task-level position resets with the phase

    w.step("blocker", "bypass", blocker["id"], "--workaround", "Use a fake gateway")
    _, blocker = w.record("blockers")
    assert (blocker["status"], blocker["workaround"]) == ("bypassed", "Use a fake gateway")

    w.step("session", "end", "--session", session["id"], "--completed", "Phase 1", "--handoff-reason", "end of day")
    _, session = w.record("sessions")
    assert (session["status"], session["completed"], session["handoff_reason"]) == (
        "ended",
        ["Phase 1"],
        "end of day",
    )
    assert not (w.planning / ".local" / "heartbeats" / session["id"]).exists()
    assert session_file.exists()

    w.step("pause", "--reason", "waiting for the gateway")
    lifecycle = w.state()["lifecycle"]
    assert (lifecycle["state"], lifecycle["reason"]) == ("paused", "waiting for the gateway")
    brief = json.loads(w.step("resume", "--json"))["data"]
    assert brief["status"] == "paused"
    assert brief["last_session"]["handoff_reason"] == "end of day"
    assert [b["id"] for b in brief["blockers"]["items"]] == [blocker["id"]]

    w.step("resume", "--activate", "--reason", "gateway sandbox arrived")
    lifecycle = w.state()["lifecycle"]
    assert (lifecycle["state"], lifecycle["resume_count"]) == ("active", 1)

    w.step("phase", "complete", "2", "--checkpoint", "failed", "--evidence", "tests=7/9")
    state = w.state()
    assert (state["phases"][1]["status"], state["phases"][1]["checkpoint"], state["position"]["phase"]) == (
        "active",
        "failed",
        2,
    )
    w.step("phase", "retry", "2")
    phase = w.state()["phases"][1]
    assert phase["attempts"] == 2
    assert phase["previous"] == [  # the failed attempt stays on record
        {
            "started": datetime(2026, 3, 1, 7, tzinfo=UTC),  # when phase 1's completion started it
            "ended": datetime(2026, 3, 1, 13, tzinfo=UTC),  # when its checkpoint failed
            "checkpoint": "failed",
            "evidence": {"tests": "7/9"},
            "failure": None,
        }
    ]
    w.step("phase", "complete", "2", "--evidence", "tests=9/9")
    assert w.state()["position"]["phase"] == 3

    w.step("blocker", "resolve", blocker["id"], "--resolution", "Real sandbox keys")
    _, blocker = w.record("blockers")
    assert blocker["status"] == "resolved"
    assert blocker["resolved"] is not None

    w.step("phase", "complete", "3")
    state = w.state()
    assert state["lifecycle"]["state"] == "completed"
    assert state["lifecycle"]["completed_at"] is not None
    assert state["lifecycle"]["total_duration_seconds"] == (w.hour - 1) * 3600  # from init at hour 1
    assert state["position"]["phase"] == 3  # never past the last phase
    assert (state["progress"]["phases_completed"], state["progress"]["percent"]) == (3, 100)

    w.step("archive", "--reason", "shipped")
    assert w.state()["lifecycle"]["state"] == "archived"
    for refused in (("next", "More work"), ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r")):
        w.refused(*refused, needle="initiative checkout is archived (read-only): `planstate reopen` first")
    assert json.loads(w.step("initiative", "list", "--json"))["data"]["initiatives"] == []
    assert [
        i["initiative"] for i in json.loads(w.step("initiative", "list", "--all", "--json"))["data"]["initiatives"]
    ] == ["checkout"]

    assert w.history() == [
        (None, "active", "init"),
        ("active", "paused", "pause"),
        ("paused", "active", "resume"),
        ("active", "completed", "phase complete"),
        ("completed", "archived", "archive"),
    ]
    assert "files valid" in w.step("validate")
    w.step("check", "--fix")  # the record regions caught up at the last STATE.md writes; nothing is left
    assert "0 errors" in w.step("check")
