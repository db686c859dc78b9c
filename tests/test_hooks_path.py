"""`planstate hooks install` where the agent's shell would not find `planstate`: refused in one line, nothing written.

Every command runs as `<venv python> -m planstate` (it runs whatever PATH holds) in an environment whose PATH is
only `/usr/bin:/bin`, as a shell without the venv has it, or that with the venv's bin folder in front; `hooks
status` gives the verdict install acts on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NOW, exits, json_error, ok, planstate_command, refused

PLAIN = "/usr/bin:/bin"  # a shell without the venv
BIN = str(Path(planstate_command()[0]).parent)  # the folder of the tested `planstate`
AGENTS = ("claude", "codex", "gemini", "cursor")
FILES = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/rules/planstate.mdc",
}


def cli(*args: str, cwd: Path, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`<venv python> -m planstate ARGS` with PATH `path` and a HOME of its own (next to `cwd`), nothing else."""
    home = cwd.parent / "home"
    home.mkdir(exist_ok=True)
    full = {"PATH": path, "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "PLANSTATE_NOW": NOW, **env}
    return subprocess.run(
        [sys.executable, "-m", "planstate", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120
    )


def files(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (the project and the home folder) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("agent", AGENTS)
def test_install_is_refused_in_one_line_and_writes_nothing_where_planstate_is_not_on_path(
    agent: str, project: Path
) -> None:
    (project.parent / "home").mkdir()
    before = files(project.parent)
    for extra in ((), ("--dry-run",)):
        line = refused(cli("hooks", "install", agent, *extra, cwd=project, path=PLAIN), "`planstate` is not on PATH")
        assert "pipx install planstate" in line and "uv tool install planstate" in line and "activate" in line
    error = json_error(exits(cli("hooks", "install", agent, "--json", cwd=project, path=PLAIN), 2))
    assert error["type"] == "UsageError" and error["message"] == line.removeprefix("planstate: ")
    if agent != "cursor":
        refused(cli("hooks", "install", agent, "--global", cwd=project, path=PLAIN), "`planstate` is not on PATH")
    assert files(project.parent) == before


@pytest.mark.parametrize("agent", AGENTS)
def test_with_planstate_on_path_install_writes_the_bare_name(agent: str, project: Path) -> None:
    done = ok(cli("hooks", "install", agent, cwd=project, path=f"{BIN}:{PLAIN}"))
    assert "only while" not in done.stdout and "not this one" not in done.stdout
    written = (project / FILES[agent]).read_text(encoding="utf-8")
    ok(cli("hooks", "uninstall", agent, cwd=project, path=PLAIN))  # taking them out needs no `planstate` on PATH
    assert not (project / FILES[agent]).exists()
    if agent == "cursor":
        assert "run `planstate resume`" in written
        return
    commands = [h["command"] for groups in json.loads(written)["hooks"].values() for g in groups for h in g["hooks"]]
    assert commands and all(
        c.startswith("planstate hooks run ") and c.endswith(f" --agent {agent} || true") for c in commands
    )


def test_the_hook_runs_from_the_agents_shell_and_status_gives_the_verdict_install_acts_on(project: Path) -> None:
    ok(cli("hooks", "install", "claude", cwd=project, path=f"{BIN}:{PLAIN}"))
    settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    stdin = json.dumps({"session_id": "s-1", "cwd": str(project), "hook_event_name": "SessionStart"})
    env = {"PATH": f"{BIN}:{PLAIN}", "HOME": str(project.parent / "home"), "PLANSTATE_NOW": NOW}
    shell = ["sh", "-c", command]
    briefed = subprocess.run(shell, cwd=project, env=env, input=stdin, capture_output=True, text=True, timeout=120)
    assert briefed.returncode == 0 and "Next action:" in briefed.stdout, briefed.stderr
    # From a shell without planstate the hook still never fails the agent; status is what says so.
    silent = subprocess.run(shell, cwd=project, env={**env, "PATH": PLAIN}, input=stdin, capture_output=True, text=True)
    assert (silent.returncode, silent.stdout) == (0, "")
    status = json.loads(exits(cli("hooks", "status", "--json", cwd=project, path=PLAIN), 1).stdout)["data"]
    line = refused(cli("hooks", "install", "claude", cwd=project, path=PLAIN))
    assert status["executable"] is None and line.removeprefix("planstate: ") in status["problems"]
    text = exits(cli("hooks", "status", cwd=project, path=PLAIN), 1).stdout
    assert "planstate: not found on PATH\n" in text and f"problem: {line.removeprefix('planstate: ')}\n" in text
    good = ok(cli("hooks", "status", "--json", cwd=project, path=f"{BIN}:{PLAIN}"))
    assert json.loads(good.stdout)["data"] | {"installed": None} == {
        "executable": f"{BIN}/planstate",
        "installed": None,
        "problems": [],
        "notes": [],
    }


def test_a_planstate_found_only_in_the_active_venv_or_another_installation_is_named(project: Path) -> None:
    venv = str(Path(BIN).parent)
    done = ok(cli("hooks", "install", "gemini", cwd=project, path=f"{BIN}:{PLAIN}", VIRTUAL_ENV=venv))
    assert f"`planstate` is on PATH only while the virtual environment {venv} is active" in done.stdout
    status = ok(cli("hooks", "status", cwd=project, path=f"{BIN}:{PLAIN}", VIRTUAL_ENV=venv)).stdout
    assert f"note: `planstate` is on PATH only while the virtual environment {venv} is active" in status
    other = project.parent / "other-bin"
    other.mkdir()
    (other / "planstate").write_text("#!/opt/elsewhere/bin/python3\n", encoding="utf-8")
    (other / "planstate").chmod(0o755)
    done = ok(cli("hooks", "install", "claude", cwd=project, path=f"{other}:{PLAIN}"))
    assert (
        f"the hooks run the `planstate` on PATH, {other}/planstate (Python /opt/elsewhere/bin/python3)" in done.stdout
    )
