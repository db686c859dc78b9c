"""Who acts, where $USER is unset (containers, CI): `--by`, then PLANSTATE_ACTOR, then git's `user.name`, then the
OS account, then `unknown`, the same through the command line and the MCP server.

Every command runs as `<venv python> -m planstate` in an environment without USER, USERNAME, LOGNAME, LNAME or
PLANSTATE_ACTOR, with a HOME of its own (no user-wide git config) and PATH `/usr/bin:/bin`, in a real git repository.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW, ok
from gitutil import git
from mcpclient import Client

PLAIN = "/usr/bin:/bin"
GIT_NAME = "Ada Lovelace"


def bare_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment without any name of the user: only PATH, a HOME without git config and the pinned clock."""
    return {
        "PATH": PLAIN,
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PLANSTATE_NOW": NOW,
        "NO_COLOR": "1",
        **extra,
    }


def cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`<venv python> -m planstate ARGS` in `cwd` with exactly `env`."""
    return subprocess.run(
        [sys.executable, "-m", "planstate", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def repo(tmp_path: Path, name: str | None) -> Path:
    """A git repository (with `user.name` set to `name`, unless None) and a home folder beside it."""
    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "home").mkdir()
    git(project, "init", "--quiet")
    if name is not None:
        git(project, "config", "user.name", name)
    return project


def who(project: Path) -> list[Any]:
    """Every `by` the workspace recorded: in the history, and in each decision's and blocker's front matter."""
    planning = project / ".planning"
    history = [json.loads(line)["by"] for line in (planning / "history.jsonl").read_text().splitlines()]
    fronts = []
    for kind in ("decisions", "blockers"):
        for path in sorted((planning / kind).glob("*.md")):
            line = next(t for t in path.read_text(encoding="utf-8").splitlines() if t.startswith("by: "))
            fronts.append(line.removeprefix("by: ").strip("'\""))
    return history + fronts


def write_some(project: Path, env: dict[str, str], *extra: str) -> None:
    """Make a workspace, a decision and a blocker, and pause the initiative (a history line), through the CLI."""
    ok(cli("init", "--title", "Demo", "--phase", "One", *extra, cwd=project, env=env))
    ok(cli("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", *extra, cwd=project, env=env))
    ok(cli("blocker", "add", "--description", "in the way", *extra, cwd=project, env=env))
    ok(cli("pause", "--reason", "lunch", *extra, cwd=project, env=env))


def test_without_user_the_records_name_gits_user_name(tmp_path: Path) -> None:
    project = repo(tmp_path, GIT_NAME)
    write_some(project, bare_env(tmp_path / "home"))
    assert who(project) == [GIT_NAME] * 4


def test_without_a_git_name_the_records_name_the_os_account(tmp_path: Path) -> None:
    project = repo(tmp_path, None)
    write_some(project, bare_env(tmp_path / "home"))
    assert set(who(project)) == {pwd.getpwuid(os.getuid()).pw_name}


@pytest.mark.parametrize(
    ("extra", "env", "expected"),
    [
        (("--by", "cli-name"), {"PLANSTATE_ACTOR": "env-name"}, "cli-name"),
        ((), {"PLANSTATE_ACTOR": "env-name", "USER": "account"}, "env-name"),
        ((), {"USER": "account"}, GIT_NAME),  # git's name before the account's
    ],
)
def test_by_then_planstate_actor_then_git_then_the_account(
    tmp_path: Path, extra: tuple[str, ...], env: dict[str, str], expected: str
) -> None:
    project = repo(tmp_path, GIT_NAME)
    write_some(project, bare_env(tmp_path / "home", **env), *extra)
    assert set(who(project)) == {expected}


def test_the_mcp_server_names_the_same_actor(tmp_path: Path) -> None:
    project = repo(tmp_path, GIT_NAME)
    env = bare_env(tmp_path / "home")
    ok(cli("init", "--title", "Demo", "--phase", "One", cwd=project, env=env))
    client = Client(["--dir", str(project)], cwd=project, env=env)
    try:
        result = client.call("decision", action="add", context="c", decision="by the server", reason="r")
        assert not result.is_error, result.content
        result = client.call("blocker", action="add", description="in the way")
        assert not result.is_error, result.content
    finally:
        client.close()
    assert set(who(project)) == {GIT_NAME} and len(who(project)) == 3


def test_git_is_asked_for_the_name_only_by_a_write(tmp_path: Path) -> None:
    project = repo(tmp_path, GIT_NAME)
    home = tmp_path / "home"
    ok(cli("init", "--title", "Demo", "--phase", "One", cwd=project, env=bare_env(home)))
    bin_folder, log = tmp_path / "bin", tmp_path / "git.log"
    bin_folder.mkdir()
    (bin_folder / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec /usr/bin/git "$@"\n', encoding="utf-8")
    (bin_folder / "git").chmod(0o755)
    env = bare_env(home, PATH=f"{bin_folder}:{PLAIN}")
    event = json.dumps({"session_id": "s-1", "cwd": str(project), "hook_event_name": "SessionStart"})
    for args in (("status",), ("resume",), ("decision", "list"), ("get", "position")):
        ok(cli(*args, cwd=project, env=env))
    started = subprocess.run(
        [sys.executable, "-m", "planstate", "hooks", "run", "SessionStart", "--agent", "claude"],
        cwd=project,
        env=env,
        input=event,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0 and "Next action:" in started.stdout  # a hook's session is named for its agent
    asked = log.read_text().splitlines() if log.exists() else []
    assert not [line for line in asked if "user.name" in line]
    ok(cli("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project, env=env))
    assert [line for line in log.read_text().splitlines() if "user.name" in line] == [
        "-c core.quotepath=off config user.name"
    ]
    assert who(project)[-1] == GIT_NAME
