"""The lifecycle through the real CLI: every (state, command) pair of the table, error info, history, docs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, Run, front, json_data, json_error, state_file

from planstate.model.kinds import LIFECYCLE_STATES
from planstate.ops.lifecycle import COMMANDS, TABLE, allowed
from planstate.text.document import Document
from planstate.workspace import Workspace

SINCE = "2026-01-02T00:00:00Z"
NOW = "2026-01-03T04:05:06Z"


def hand_written(state: str, *, phases: tuple[str, str] = ("completed", "completed")) -> str:
    """A STATE.md as a person would write it, in lifecycle `state` (phase statuses as given)."""
    completed_at = f"  completed_at: {SINCE}\n" if state == "completed" else ""
    error = f"  error:\n    message: disk full\n    at: {SINCE}\n    retries: 0\n" if state == "error" else ""
    rows = []
    for name, status in zip(("Design", "Build"), phases, strict=True):
        done = status == "completed"
        rows.append(
            f"  - name: {name}\n    status: {status}\n"
            + ("    started: 2026-01-01T00:00:00Z\n" if status != "pending" else "")
            + ("    completed: 2026-01-01T01:00:00Z\n" if done else "")
            + f"    checkpoint: {'passed' if done else 'pending'}\n"
            + f"    attempts: {0 if status == 'pending' else 1}\n"
        )
    return (
        "---\n"
        "# written by hand\n"
        "schema_version: 1\n"
        "initiative: demo\n"
        "title: Demo\n"
        "structure:\n  phases_total: 2\n  first_phase: 1\n"
        "phases:\n" + "".join(rows) + "position:\n  phase: 2\n  task: Write the docs\n  status: in_progress\n"
        "lifecycle:\n"
        f"  state: {state}   # set by hand\n"
        f"  since: {SINCE}\n"
        "  by: alice\n" + completed_at + error + "---\nNotes that stay.\n"
    )


def make_workspace(folder: Path, state: str, **options: tuple[str, str]) -> Path:
    """A project folder whose .planning/ holds a hand-written STATE.md and a one-line history."""
    planning = folder / ".planning"
    planning.mkdir(parents=True)
    (planning / "STATE.md").write_text(hand_written(state, **options))
    line = {"at": SINCE, "from": None, "to": state, "trigger": "init", "reason": None, "by": "alice"}
    (planning / "history.jsonl").write_text(json.dumps(line) + "\n")
    return folder


def history(folder: Path) -> list[dict[str, object]]:
    """The entries of the root initiative's history."""
    text = (folder / ".planning" / "history.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def lifecycle_of(folder: Path) -> dict[str, object]:
    """The lifecycle mapping of the root STATE.md."""
    value = front(folder)["lifecycle"]
    assert isinstance(value, dict)
    return value


def command_line(command: str) -> list[str]:
    """The CLI words for a lifecycle command (`resume` performs the transition only with --activate)."""
    return ["resume", "--activate"] if command == "resume" else [command]


CASES = [(state, command) for state in LIFECYCLE_STATES for command in COMMANDS]


def test_the_matrix_covers_eight_states_and_ten_commands() -> None:
    assert len(LIFECYCLE_STATES) == 8
    assert sorted(COMMANDS) == sorted(
        ["pause", "suspend", "error", "fail", "retry", "complete", "abandon", "archive", "reopen", "resume"]
    )


@pytest.mark.parametrize(("state", "command"), CASES, ids=[f"{s}-{c}" for s, c in CASES])
def test_every_state_and_command(run: Run, tmp_path: Path, state: str, command: str) -> None:
    folder = make_workspace(tmp_path / "proj", state)
    before = {p: p.read_bytes() for p in (state_file(folder), folder / ".planning" / "history.jsonl")}
    targets = {t.command: t.target for t in allowed(state)}
    args = [*command_line(command), "--reason", "because", "--by", "bob"]
    result = run(*args, cwd=folder, env={"PLANSTATE_NOW": NOW})
    if command in targets:
        target = targets[command]
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        first, *rest = result.stdout.splitlines()
        assert first == f"demo: {state} → {target} (because)"
        assert command == "resume" or not rest  # `resume --activate` goes on to print the brief
        lifecycle = lifecycle_of(folder)
        assert lifecycle["state"] == target
        assert (lifecycle["reason"], lifecycle["by"]) == ("because", "bob")
        assert (
            Document.from_bytes(state_file(folder).read_bytes())
            .get("lifecycle.since")
            .isoformat()
            .startswith("2026-01-03T04:05:06")
        )
        old = before[folder / ".planning" / "history.jsonl"]
        new = (folder / ".planning" / "history.jsonl").read_bytes()
        assert new.startswith(old)  # no earlier line rewritten
        added = [json.loads(line) for line in new[len(old) :].decode().splitlines()]
        assert added == [{"at": NOW, "from": state, "to": target, "trigger": command, "reason": "because", "by": "bob"}]
        assert "# set by hand" in state_file(folder).read_text()  # the person's comment survives
        assert run("validate", cwd=folder).returncode == 0
    elif (state, command) == ("active", "resume"):  # `resume --activate` of an active initiative: nothing to do
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("demo is already active; nothing to resume\n")
        assert {p: p.read_bytes() for p in before} == before
    else:
        assert result.returncode == 2, result.stdout
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1
        assert lines[0].startswith("planstate: .planning/STATE.md:")
        assert f"cannot {command} an initiative that is {state}" in lines[0]
        assert f"allowed from {state}: " in lines[0]
        for move in allowed(state):
            assert f"{move.command} (→ {move.target})" in lines[0]
        assert "Traceback" not in result.stderr
        assert {p: p.read_bytes() for p in before} == before


def test_refusal_as_json(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "completed")
    result = run("pause", "--json", cwd=folder)
    assert result.returncode == 2
    error = json_error(result)
    assert error["type"] == "UsageError"
    assert error["field"] == "lifecycle.state"
    assert error["path"] == ".planning/STATE.md"
    assert "allowed from completed: reopen (→ active), archive (→ archived)" in error["message"]


def test_transition_json(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "active")
    result = run("pause", "--reason", "lunch", "--json", cwd=folder, env={"PLANSTATE_NOW": NOW})
    assert result.returncode == 0, result.stderr
    assert json_data(result) == {
        "initiative": "demo",
        "from": "active",
        "to": "paused",
        "reason": "lunch",
        "at": NOW,
    }


def test_complete_is_refused_while_phases_are_unfinished(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "active", phases=("completed", "active"))
    before = state_file(folder).read_bytes()
    result = run("complete", cwd=folder)
    assert result.returncode == 2
    assert "1 phase is not finished (Build)" in result.stderr
    assert state_file(folder).read_bytes() == before


def test_completed_can_only_be_reopened_or_archived() -> None:
    assert sorted(t.command for t in allowed("completed")) == ["archive", "reopen"]
    # only an explicit command completes: no exit, session or crash path leads to `completed`
    assert [(t.source, t.command) for t in TABLE if t.target == "completed"] == [("active", "complete")]


def test_reopen_clears_completed_at_and_keeps_the_position(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "completed")
    assert run("reopen", cwd=folder).returncode == 0
    lifecycle = lifecycle_of(folder)
    assert lifecycle["state"] == "active"
    assert lifecycle["completed_at"] is None
    position = front(folder)["position"]
    assert isinstance(position, dict) and position["phase"] == 2


def test_error_info_is_kept_and_retries_are_counted(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "active")
    env = {"PLANSTATE_NOW": NOW}
    result = run(
        "error", "--reason", "database gone", "--detail", "code=500", "--detail", "host=db1", cwd=folder, env=env
    )
    assert result.returncode == 0, result.stderr
    error = lifecycle_of(folder)["error"]
    assert isinstance(error, dict)
    assert error["message"] == "database gone"
    assert error["at"].isoformat().startswith("2026-01-03T04:05:06")  # type: ignore[attr-defined]
    assert (error["retries"], error["details"]) == (0, {"code": 500, "host": "db1"})
    assert run("retry", cwd=folder).returncode == 0
    assert run("error", "--reason", "gone again", cwd=folder).returncode == 0
    error = lifecycle_of(folder)["error"]
    assert isinstance(error, dict)
    assert (error["message"], error["retries"]) == ("gone again", 1)
    status = json_data(run("status", "--json", cwd=folder))
    assert status["lifecycle"]["error"]["message"] == "gone again"
    assert status["lifecycle"]["error"]["retries"] == 1
    bad = run("pause", "--detail", "x=1", cwd=folder)
    assert bad.returncode == 2 and "unrecognized arguments" in bad.stderr
    bad = run("error", "--detail", "no-equals-sign", cwd=folder)
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def test_pause_keeps_the_context_and_resume_counts(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "active")
    assert run("pause", cwd=folder, env={"PLANSTATE_NOW": NOW}).returncode == 0  # the clock the resume uses
    assert lifecycle_of(folder)["context"] == "Write the docs"  # the current task by default
    assert run("resume", "--activate", cwd=folder, env={"PLANSTATE_NOW": NOW}).returncode == 0
    lifecycle = lifecycle_of(folder)
    assert lifecycle["context"] is None
    assert lifecycle["resume_count"] == 1
    assert lifecycle["resumed_at"].isoformat().startswith("2026-01-03T04:05:06")  # type: ignore[attr-defined]
    assert run("suspend", "--context", "halfway through the docs", cwd=folder).returncode == 0
    assert lifecycle_of(folder)["context"] == "halfway through the docs"
    assert run("resume", "--activate", cwd=folder).returncode == 0
    assert lifecycle_of(folder)["resume_count"] == 2


def test_resume_without_activate_shows_the_brief_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "paused")
    before = state_file(folder).read_bytes()
    result = run("resume", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "Status: paused" in result.stdout
    assert "to continue: planstate resume --activate" in result.stdout
    data = json_data(run("resume", "--json", cwd=folder))
    assert data["status"] == "paused"
    assert state_file(folder).read_bytes() == before
    bad = run("resume", "--reason", "back", cwd=folder)
    assert bad.returncode == 2 and "add --activate" in bad.stderr
    folder2 = make_workspace(tmp_path / "other", "failed")
    assert "to continue: planstate retry" in run("resume", cwd=folder2).stdout


def test_the_python_api_uses_the_same_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_workspace(tmp_path / "proj", "active")
    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    ws = Workspace.find(folder, actor="carol")
    moved = ws.pause(reason="lunch", context="reading")
    assert moved.to_dict() == {"initiative": "demo", "from": "active", "to": "paused", "reason": "lunch", "at": NOW}
    assert ws.resume().target == "active"
    assert ws.suspend().target == "suspended"
    assert ws.error("boom", details={"code": 1}).target == "error"
    assert ws.retry().target == "active"
    assert ws.fail("no way").target == "failed"
    assert ws.retry().target == "active"
    assert ws.complete().target == "completed"
    assert ws.archive().target == "archived"
    assert ws.reopen().target == "active"
    assert ws.abandon().target == "abandoned"
    assert ws.transition("resume", "back").target == "active"
    entries = history(folder)
    assert [e["trigger"] for e in entries[1:]] == [
        "pause",
        "resume",
        "suspend",
        "error",
        "retry",
        "fail",
        "retry",
        "complete",
        "archive",
        "reopen",
        "abandon",
        "resume",
    ]
    assert {e["by"] for e in entries[1:]} == {"carol"}
    from planstate.core.errors import UsageError

    with pytest.raises(UsageError, match="cannot reopen an initiative that is active"):
        ws.reopen()
    with pytest.raises(UsageError, match="not a lifecycle command"):
        ws.transition("explode")


def test_an_agent_process_exiting_never_completes(tmp_path: Path) -> None:
    """An agent that updates the state and exits (cleanly, or killed) leaves the lifecycle as it was."""
    folder = make_workspace(tmp_path / "proj", "active", phases=("completed", "active"))
    code = (
        "import os, signal, sys\n"
        "from planstate.workspace import Workspace\n"
        f"ws = Workspace.find({str(folder)!r})\n"
        "ws.task.start('last task')\n"
        "if sys.argv[1] == 'kill':\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "sys.exit(int(sys.argv[1]))\n"
    )
    for how in ("0", "1", "kill"):
        subprocess.run([sys.executable, "-c", code, how], check=False, timeout=60)
        assert lifecycle_of(folder)["state"] == "active"
    assert [e["to"] for e in history(folder)] == ["active"]


def test_validate_flags_completed_without_completed_at(run: Run, tmp_path: Path) -> None:
    folder = make_workspace(tmp_path / "proj", "active")
    path = state_file(folder)
    path.write_text(path.read_text().replace("state: active", "state: completed"))
    result = run("validate", cwd=folder)
    assert result.returncode == 1
    assert "lifecycle.completed_at: is required when the state is completed" in result.stdout


# ---------------------------------------------------------------------------- docs/lifecycle.md

LIFECYCLE_DOC = (REPO / "docs" / "lifecycle.md").read_text(encoding="utf-8")


def test_lifecycle_doc_is_generated_from_the_table() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "docgen.py"), "--check"], capture_output=True)
    assert done.returncode == 0, done.stdout.decode()


def test_lifecycle_doc_table_and_diagram_match_the_code() -> None:
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| `(\w+)` \|$", LIFECYCLE_DOC, re.MULTILINE)
    assert [tuple(r) for r in rows] == [tuple(t) for t in TABLE]
    diagram = re.search(r"```mermaid\nstateDiagram-v2\n(.*?)```", LIFECYCLE_DOC, re.DOTALL)
    assert diagram is not None
    arrows = re.findall(r"^    (\w+) --> (\w+): (\w+)$", diagram.group(1), re.MULTILINE)
    assert sorted(arrows) == sorted((t.source, t.target, t.command) for t in TABLE)
    assert "[*] --> active" in diagram.group(1)


def test_lifecycle_doc_describes_every_state_and_command() -> None:
    for state in LIFECYCLE_STATES:
        assert re.search(rf"^\| `{state}` \| ", LIFECYCLE_DOC, re.MULTILINE), state
    for command in COMMANDS:
        assert f"`{command}`" in LIFECYCLE_DOC


def test_docgen_check_fails_on_a_stale_lifecycle_doc(tmp_path: Path) -> None:
    """The check is real: a doc whose table differs from TABLE is reported."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import docgen
    finally:
        sys.path.remove(str(REPO / "scripts"))
    stale = LIFECYCLE_DOC.replace("| `paused` | `resume` | `active` |", "| `paused` | `resume` | `failed` |")
    assert docgen.render_lifecycle(stale) == LIFECYCLE_DOC
    assert docgen.render_lifecycle(LIFECYCLE_DOC) == LIFECYCLE_DOC


def test_states_table_names_every_way_out_of_each_state() -> None:
    """The States table's "how it is left" column lists exactly the moves TABLE allows, for every state."""
    block = LIFECYCLE_DOC.split("<!-- lifecycle:states -->\n", 1)[1].split("<!-- /lifecycle:states -->", 1)[0]
    rows = {}
    for line in block.splitlines()[2:]:
        state, _meaning, exits = line.strip("| ").split(" | ")
        rows[state.strip("`")] = re.findall(r"`(\w+)` \(→ `(\w+)`\)", exits)
    assert rows == {state: [(t.command, t.target) for t in allowed(state)] for state in LIFECYCLE_STATES}


def test_docgen_regenerates_a_stale_states_column() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import docgen
    finally:
        sys.path.remove(str(REPO / "scripts"))
    row = next(line for line in LIFECYCLE_DOC.splitlines() if line.startswith("| `completed` | the work is done"))
    stale = LIFECYCLE_DOC.replace(row, row.rsplit(" | ", 1)[0] + " | `reopen` only |")
    assert stale != LIFECYCLE_DOC
    assert docgen.render_lifecycle(stale) == LIFECYCLE_DOC
    missing = LIFECYCLE_DOC.replace(row + "\n", "")
    with pytest.raises(SystemExit, match="no row for completed"):
        docgen.render_lifecycle(missing)


def test_lifecycle_commands_have_help(run: Run) -> None:
    for command in COMMANDS:
        result = run(command, "--help")
        assert result.returncode == 0
        assert result.stdout.startswith(f"usage: planstate {command}")


# ---------------------------------------------------------------------------- read-only initiatives

READ_ONLY_COMMANDS = [
    ("phase", "start", "1"),
    ("phase", "complete", "2"),
    ("task", "start", "More docs"),
    ("task", "done"),
    ("position", "--task", "x"),
    ("position", "--phase", "1"),
    ("next", "Ship it again"),
    ("context", "--file", "src/a.py"),
    ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r"),
    ("blocker", "add", "--description", "waiting"),
    ("session", "start", "--agent", "late"),
]


@pytest.mark.parametrize("state", ["archived", "completed"])
def test_a_read_only_initiative_refuses_work_but_closes_sessions(run: Run, tmp_path: Path, state: str) -> None:
    folder = make_workspace(tmp_path / "proj", "active")
    env = {"PLANSTATE_NOW": NOW}
    session = json_data(run("session", "start", "--agent", "w1", "--json", cwd=folder, env=env))["id"]
    stale = json_data(run("session", "start", "--agent", "w2", "--json", cwd=folder, env=env))["id"]
    blocker = json_data(run("blocker", "add", "--description", "b", "--json", cwd=folder, env=env))["id"]
    assert run("complete" if state == "completed" else "archive", cwd=folder, env=env).returncode == 0
    planning = folder / ".planning"
    snapshot = {p: p.read_bytes() for p in planning.rglob("*") if p.is_file() and ".local" not in p.parts}
    line = next(
        i for i, text in enumerate(state_file(folder).read_text().splitlines(), 1) if text.startswith("  state:")
    )
    where = f".planning/STATE.md:{line}:3: lifecycle.state"
    message = f"{where}: initiative demo is {state} (read-only): `planstate reopen` first"
    for args in [*READ_ONLY_COMMANDS, ("blocker", "resolve", blocker, "--resolution", "r")]:
        result = run(*args, cwd=folder, env=env)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stdout == ""
        assert result.stderr.splitlines() == [f"planstate: {message}"], args
    assert {p: p.read_bytes() for p in snapshot} == snapshot
    assert not [p for p in planning.rglob("*.md") if p not in snapshot]

    ended = run("session", "end", "--session", session, "--notes", "closed after the fact", cwd=folder, env=env)
    assert ended.returncode == 0, ended.stderr
    later = {"PLANSTATE_NOW": "2026-01-04T04:05:06Z"}
    reaped = run("session", "reap", "--stale-after", "1h", cwd=folder, env=later)
    assert reaped.returncode == 0, reaped.stderr
    assert f"marked session {stale} of w2 crashed" in reaped.stdout
    assert lifecycle_of(folder)["state"] == state


def test_help_texts_speak_to_users_not_to_the_design_notes(run: Run) -> None:
    """`--help` says what a command does; "(seed 000)" is design jargon that only the docs may cite."""
    for words in (("phase",), ("task",), ("initiative",), ("phase", "complete"), ("pause",), ("initiative", "new")):
        result = run(*words, "--help")
        assert result.returncode == 0
        assert "seed" not in result.stdout.lower(), words
