"""`planstate hooks`: installing agent hooks into real settings files, and running them as the agents do.

No agent is needed: each test writes or reads the agent's settings file in a tmp project (and a tmp HOME), and
feeds `planstate hooks run` the JSON event each agent documents on stdin. The end-to-end test takes the command
string from the written settings file and runs it with `sh -c`, as the agents do.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import Run, exits, ok, planstate_command, refused, state_file

from planstate.agents.instructions import BLOCK
from planstate.workspace import Workspace

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HARD_CAP = 8000
CODEX_SCHEMAS = FIXTURES / "codex"
SETTINGS = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}

# Another tool's hooks, as such tools write them (two-space JSON with a final newline).
OTHER_TOOL = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "other-tool start"}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "other-tool log"}]}],
    },
}


def event(project: Path, name: str, session: str = "agent-session-1", **extra: Any) -> str:
    """An agent's event on stdin: the fields every agent sends (session id, cwd, event name) and more."""
    return json.dumps(
        {"session_id": session, "transcript_path": None, "cwd": str(project), "hook_event_name": name, **extra}
    )


def hook(run: Run, project: Path, agent: str, name: str, stdin: str | None = None, **extra: Any) -> str:
    """Run one hook as the agent would (through the fork server); it always exits 0 and says nothing on stderr."""
    given = stdin if stdin is not None else event(project, name, **extra)
    done = ok(run("hooks", "run", name, "--agent", agent, cwd=project, input=given))
    return done.stdout


def context(stdout: str, name: str) -> str:
    """The additionalContext of one JSON document for event `name`."""
    data = json.loads(stdout)
    assert data["hookSpecificOutput"]["hookEventName"] == name
    text: str = data["hookSpecificOutput"]["additionalContext"]
    assert 0 < len(text) <= HARD_CAP
    return text


def sessions(project: Path) -> list[dict[str, Any]]:
    """The planstate sessions of the project, as data."""
    return [e.data for e in Workspace.find(project).session.list()]


def snapshot(folder: Path, *, cache: bool = True) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (without `cache`, leaving out the front-matter cache, which every
    read fills, `planstate resume` too)."""
    files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return files if cache else {k: v for k, v in files.items() if not k.startswith(".planning/.local/cache/")}


def bin_path() -> str:
    """PATH with the tested `planstate` first, as an agent started in the project would find it."""
    return f"{Path(planstate_command()[0]).parent}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.fixture(autouse=True)
def _planstate_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command here runs where the tested `planstate` is on PATH, as install requires
    (tests/test_hooks_path.py is about where it is not)."""
    monkeypatch.setenv("PATH", bin_path())
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)


def codex_valid(stdout: str, schema: str) -> None:
    """Raise unless `stdout` is one JSON document that Codex's published output schema accepts."""
    loaded = json.loads((CODEX_SCHEMAS / f"{schema}.command.output.schema.json").read_text())
    jsonschema.Draft7Validator(loaded).validate(json.loads(stdout))


# ---------------------------------------------------------------------------- the command the agent runs


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_the_installed_command_briefs_a_new_session(agent: str, run: Run, project: Path) -> None:
    ok(run("hooks", "install", agent, cwd=project))
    settings = json.loads((project / SETTINGS[agent]).read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    stdin = event(project, "SessionStart", source="startup", model="m", permission_mode="default")
    path = bin_path()
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=project,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, "PLANSTATE_ACTOR": "tester"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = context(done.stdout, "SessionStart")
    assert "Next action:" in text and Workspace.find(project).brief().next_action in text
    if agent == "codex":
        codex_valid(done.stdout, "session-start")
    [session] = sessions(project)
    assert (session["agent"], session["status"]) == (agent, "active")
    ok(run("check", cwd=project))


# ---------------------------------------------------------------------------- what each event does


def test_claude_session_is_briefed_once_per_source_heartbeated_and_ended(run: Run, project: Path) -> None:
    text = context(hook(run, project, "claude", "SessionStart", source="startup"), "SessionStart")
    [session] = sessions(project)
    assert session["id"] in text
    assert hook(run, project, "claude", "SessionStart", source="startup") == ""  # a second install: no second brief
    assert hook(run, project, "claude", "Stop") == ""
    heartbeats = project / ".planning" / ".local" / "heartbeats"
    assert (heartbeats / session["id"]).exists()
    assert hook(run, project, "claude", "PreCompact", trigger="auto") == ""
    context(hook(run, project, "claude", "SessionStart", source="compact"), "SessionStart")  # after the compaction
    assert hook(run, project, "claude", "SessionStart", source="compact") == ""
    assert hook(run, project, "claude", "SessionStart", source="resume") != ""
    assert len(sessions(project)) == 1  # the same agent session kept its planstate session
    Workspace.find(project).session.end(session["id"])  # ended by hand (or reaped): the next start makes another
    assert hook(run, project, "claude", "SessionStart", source="clear") != ""
    [session] = [s for s in sessions(project) if s["status"] == "active"]
    assert session["resumed_from"] is not None
    assert hook(run, project, "claude", "SessionEnd", reason="exit") == ""
    [ended] = [s for s in sessions(project) if s["id"] == session["id"]]
    assert ended["status"] == "ended" and "Claude Code session ended (exit)" in ended["handoff_reason"]
    assert list((project / ".planning" / ".local" / "hooks").iterdir()) == []  # the ended session's notes are gone
    ok(run("check", cwd=project))
    context(hook(run, project, "claude", "SessionStart", source="startup", session="agent-session-2"), "SessionStart")
    assert sorted(s["status"] for s in sessions(project)) == ["active", "ended", "ended"]


def test_codex_briefs_again_on_the_first_prompt_after_a_compaction(run: Run, project: Path) -> None:
    codex_valid(hook(run, project, "codex", "SessionStart", source="startup"), "session-start")
    assert hook(run, project, "codex", "UserPromptSubmit", prompt="go on") == ""
    assert hook(run, project, "codex", "PostCompact", trigger="auto", model="m", turn_id="t") == ""
    again = hook(run, project, "codex", "UserPromptSubmit", prompt="go on")
    codex_valid(again, "user-prompt-submit")
    assert "Next action:" in context(again, "UserPromptSubmit")
    assert hook(run, project, "codex", "UserPromptSubmit", prompt="go on") == ""
    assert hook(run, project, "codex", "Stop") == ""
    assert [s["status"] for s in sessions(project)] == ["active"]  # Codex has no end hook: reap or end it


def test_gemini_prints_one_json_document_for_every_event(run: Run, project: Path) -> None:
    assert "Next action:" in context(hook(run, project, "gemini", "SessionStart", source="startup"), "SessionStart")
    assert json.loads(hook(run, project, "gemini", "BeforeAgent", prompt="hi")) == {}
    assert json.loads(hook(run, project, "gemini", "PreCompress", trigger="auto")) == {}
    context(hook(run, project, "gemini", "BeforeAgent", prompt="hi"), "BeforeAgent")
    assert json.loads(hook(run, project, "gemini", "SessionEnd", reason="exit")) == {}
    assert json.loads(hook(run, project, "gemini", "AfterTool")) == {}  # an event planstate does not install
    assert [s["status"] for s in sessions(project)] == ["ended"]


def test_a_long_brief_stays_under_the_cap(run: Run, project: Path) -> None:
    ws = Workspace.find(project)
    ws.next("Write the parser " * 300)
    for n in range(6):
        ws.decision.add(context=f"Question {n} " * 20, decision=f"Answer {n} " * 20, reason="because " * 20)
    text = context(hook(run, project, "claude", "SessionStart", source="startup"), "SessionStart")
    assert len(text) <= 3000  # about 600 tokens of brief and the lines above it


# ---------------------------------------------------------------------------- never breaking a session


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_garbage_no_workspace_and_a_broken_state_write_nothing(agent: str, run: Run, project: Path) -> None:
    silent = "{}\n" if agent == "gemini" else ""
    before = snapshot(project)
    for stdin in ("not json", "[1, 2]", "", '{"session_id": 7}', "\x00\xff"):
        assert hook(run, project, agent, "SessionStart", stdin=stdin) == silent
    assert snapshot(project) == before
    bare = project.parent / "bare"
    bare.mkdir()
    assert hook(run, bare, agent, "SessionStart", stdin=event(bare, "SessionStart", source="startup")) == silent
    state = state_file(project)
    state.write_text(state.read_text().replace("title: Demo\n", "title: [Demo\n", 1))
    before = snapshot(project)
    text = context(hook(run, project, agent, "SessionStart", source="startup"), "SessionStart")
    assert text.startswith("planstate could not brief this session: .planning/STATE.md:") and "planstate check" in text
    for name in ("Stop", "UserPromptSubmit", "BeforeAgent", "SessionEnd", "PreCompact", "PostCompact"):
        hook(run, project, agent, name)
    assert snapshot(project) == before
    assert list(bare.iterdir()) == []


def test_an_unreadable_record_gives_one_line_instead_of_the_brief(run: Run, project: Path) -> None:
    (project / ".planning" / "decisions" / "dec-broken.md").write_text("---\nid: dec-broken\n<<<<<<< ours\n")
    before = snapshot(project, cache=False)
    text = context(hook(run, project, "codex", "SessionStart", source="startup"), "SessionStart")
    assert text.startswith("planstate could not brief this session: .planning/decisions/dec-broken.md:")
    assert snapshot(project, cache=False) == before


# ---------------------------------------------------------------------------- install and uninstall


@pytest.mark.parametrize(
    ("agent", "layout"), [("claude", "two spaces"), ("codex", "tabs, CRLF"), ("gemini", "BOM, no final newline")]
)
def test_install_keeps_other_hooks_twice_changes_nothing_uninstall_restores(
    agent: str, layout: str, run: Run, tmp_path: Path
) -> None:
    settings = tmp_path / SETTINGS[agent]
    settings.parent.mkdir()
    text = {
        "two spaces": json.dumps(OTHER_TOOL, indent=2) + "\n",
        "tabs, CRLF": json.dumps(OTHER_TOOL, indent="\t").replace("\n", "\r\n") + "\r\n",
        "BOM, no final newline": "\ufeff" + json.dumps(OTHER_TOOL, indent=4),
    }[layout]
    original = text.encode()
    settings.write_bytes(original)
    ok(run("hooks", "install", agent))
    once = settings.read_bytes()
    data = json.loads(once)
    assert data["permissions"] == OTHER_TOOL["permissions"]
    assert data["hooks"]["SessionStart"][0] == OTHER_TOOL["hooks"]["SessionStart"][0]  # theirs first, kept
    assert data["hooks"]["PostToolUse"] == OTHER_TOOL["hooks"]["PostToolUse"]
    assert "planstate hooks run SessionStart" in data["hooks"]["SessionStart"][1]["hooks"][0]["command"]
    again = ok(run("hooks", "install", agent))
    assert "nothing changed" in again.stdout and settings.read_bytes() == once
    ok(run("hooks", "uninstall", agent))
    assert settings.read_bytes() == original
    assert "nothing changed" in ok(run("hooks", "uninstall", agent)).stdout


def test_uninstall_of_a_file_planstate_made_removes_it(run: Run, tmp_path: Path) -> None:
    ok(run("hooks", "install", "gemini"))
    hooks = json.loads((tmp_path / ".gemini" / "settings.json").read_text())["hooks"]
    assert hooks["BeforeAgent"][0]["hooks"][0]["timeout"] == 10000  # Gemini counts milliseconds
    assert hooks["BeforeAgent"][0]["hooks"][0]["name"] == "planstate-BeforeAgent"
    assert set(hooks) == {"SessionStart", "PreCompress", "BeforeAgent", "SessionEnd"}
    ok(run("hooks", "uninstall", "gemini"))
    assert list(tmp_path.iterdir()) == []


def test_install_puts_an_edited_entry_back_in_its_place(run: Run, tmp_path: Path) -> None:
    ok(run("hooks", "install", "claude"))
    settings = tmp_path / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 99
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "other-tool stop"}]})
    settings.write_text(json.dumps(data, indent=2) + "\n")
    ok(run("hooks", "install", "claude"))
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert stop[0]["hooks"][0]["timeout"] == 10 and stop[1]["hooks"][0]["command"] == "other-tool stop"


def test_global_install_writes_the_home_folder(run: Run, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = ok(run("hooks", "install", "codex", "--global", "--json", env={"HOME": str(home)}))
    data = json.loads(done.stdout)["data"]
    assert (data["scope"], data["path"], data["changed"]) == ("global", "~/.codex/hooks.json", True)
    assert (home / ".codex" / "hooks.json").is_file() and not (tmp_path / ".codex").exists()


def test_dry_run_shows_the_change_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    done = ok(run("hooks", "install", "claude", "--dry-run"))
    assert done.stdout.startswith("would install planstate's claude hooks")
    assert "+++ b/.claude/settings.json" in done.stdout and "planstate hooks run Stop" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_symlinked_or_invalid_settings_file_is_refused(run: Run, tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    real = tmp_path / "elsewhere.json"
    real.write_text("{}\n")
    (tmp_path / ".claude" / "settings.json").symlink_to(real)
    refused(run("hooks", "install", "claude"), ".claude/settings.json", "symlink")
    assert real.read_text() == "{}\n"
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "hooks.json").write_text('{\n  "hooks": [,]\n}\n')
    refused(run("hooks", "install", "codex"), ".codex/hooks.json:2:", "not valid JSON")


def test_cursor_gets_a_rule_file(run: Run, tmp_path: Path) -> None:
    ok(run("hooks", "install", "cursor"))
    rule = tmp_path / ".cursor" / "rules" / "planstate.mdc"
    text = rule.read_text()
    assert text.startswith("---\n") and "alwaysApply: true\n" in text and "`planstate resume`" in text
    assert "nothing changed" in ok(run("hooks", "install", "cursor")).stdout
    refused(run("hooks", "install", "cursor", "--global"), "Cursor", "leave out --global")
    ok(run("hooks", "uninstall", "cursor"))
    assert not rule.exists()
    rule.parent.mkdir(parents=True, exist_ok=True)
    rule.write_text("my own rule\n")
    refused(run("hooks", "install", "cursor"), "planstate.mdc", "not planstate's")
    assert rule.read_text() == "my own rule\n"


# ---------------------------------------------------------------------------- status


def test_status_reports_duplicates_a_missing_planstate_and_an_untrusted_codex(run: Run, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    project = tmp_path / "proj"
    project.mkdir()
    ok(run("hooks", "install", "claude", cwd=project, env=env))
    ok(run("hooks", "install", "claude", "--global", cwd=project, env=env))
    ok(run("hooks", "install", "codex", cwd=project, env=env))
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["Stop"].append(data["hooks"]["Stop"][0])
    settings.write_text(json.dumps(data, indent=2) + "\n")
    done = exits(run("hooks", "status", "--json", cwd=project, env={**env, "PATH": str(tmp_path / "nowhere")}), 1)
    answer = json.loads(done.stdout)["data"]
    assert answer["executable"] is None
    assert [(e["agent"], e["scope"]) for e in answer["installed"]] == [
        ("claude", "project"),
        ("claude", "global"),
        ("codex", "project"),
    ]
    problems = "\n".join(answer["problems"])
    assert "`planstate` is not on PATH" in problems
    assert ".claude/settings.json: 2 planstate hooks for Stop (duplicates)" in problems
    assert "claude hooks are installed in .claude/settings.json and ~/.claude/settings.json" in problems
    assert "Codex does not trust" in problems
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    ok(run("hooks", "uninstall", "claude", "--global", cwd=project, env=env))
    data["hooks"]["Stop"].pop()
    settings.write_text(json.dumps(data, indent=2) + "\n")
    clean = ok(run("hooks", "status", cwd=project, env={**env, "PATH": bin_path()}))
    assert "problem" not in clean.stdout and "claude (project): .claude/settings.json:" in clean.stdout


# ---------------------------------------------------------------------------- the docs show what is written


def test_agents_md_shows_the_files_install_writes(run: Run, tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "agents.md").read_text(encoding="utf-8")
    for agent in ("claude", "codex", "gemini", "cursor"):
        ok(run("hooks", "install", agent))
    for path in (*SETTINGS.values(), ".cursor/rules/planstate.mdc"):
        written = (tmp_path / path).read_text()
        assert f"\n{written}```\n" in text, path
    assert f"```markdown\n{BLOCK}```\n" in text


# ---------------------------------------------------------------------------- the instructions block


def test_the_instructions_block_goes_first_and_comes_out_byte_for_byte(run: Run, tmp_path: Path) -> None:
    claude_md = tmp_path / "CLAUDE.md"
    original = b"# Project rules\n\nUse tabs.\r\nNo trailing newline"
    claude_md.write_bytes(original)
    done = ok(run("hooks", "install", "claude", "--instructions", "--json"))
    assert json.loads(done.stdout)["data"]["instructions"] == {"path": "CLAUDE.md", "changed": True}
    written = claude_md.read_bytes()
    assert written.startswith(b"<!-- BEGIN PLANSTATE -->\n") and written.endswith(
        b"<!-- END PLANSTATE -->\n\n" + original
    )
    assert b"planstate resume" in written
    assert "block is already in CLAUDE.md" in ok(run("hooks", "install", "claude", "--instructions")).stdout
    block = written[: -len(original)].decode()
    claude_md.write_text("mine\n" + block.replace("planstate resume", "planstate resume!"))  # moved and edited
    ok(run("hooks", "install", "claude", "--instructions"))
    assert claude_md.read_text() == "mine\n" + block  # put back as it should be, where it stands
    claude_md.write_bytes(written)
    assert "removed planstate's block from CLAUDE.md" in ok(run("hooks", "uninstall", "claude")).stdout
    assert claude_md.read_bytes() == original
    ok(run("hooks", "install", "gemini", "--instructions"))
    assert (tmp_path / "GEMINI.md").read_text().startswith("<!-- BEGIN PLANSTATE -->\n")
    ok(run("hooks", "uninstall", "gemini"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CLAUDE.md"]  # what planstate made is gone
    refused(run("hooks", "install", "cursor", "--instructions"), "leave out --instructions")
    claude_md.unlink()
    claude_md.symlink_to(tmp_path / "AGENTS.md")  # a common setup: one file for every agent
    refused(run("hooks", "install", "claude", "--instructions"), "CLAUDE.md", "symlink")
    ok(run("hooks", "install", "claude"))
    done = ok(run("hooks", "uninstall", "claude"))
    assert "left alone: CLAUDE.md: is a symlink" in done.stdout and not (tmp_path / ".claude").exists()
