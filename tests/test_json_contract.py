"""One JSON contract (docs/json.md): every command's `--json` answer is one envelope on stdout, its `data` matches
the command's JSON Schema in planstate/schemas/, errors are envelopes too, and the words mean one thing everywhere.

The commands are found by walking the real parser, so a new command without a schema (or a case here) fails;
each runs the real entry point through the fork server (tests/forkserver.py), set up as tests/test_parity.py sets it
up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import forkserver
import jsonschema
import pytest
from conftest import PINNED_NOW, json_envelope, json_error, planstate_command, state_file
from gitutil import commit_all, new_repo
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from test_parity import ACTOR, CASES, _env, _id, _ids_of

from planstate.agents.install import install
from planstate.cli.main import build_parser
from planstate.workspace import Workspace

SCHEMAS = Path(__file__).resolve().parent.parent / "planstate" / "schemas"

# Commands whose answer is not one envelope, each with the reason.
NO_JSON = {  # with arguments that would run it
    "completion": ("prints a shell script", ("completion", "bash")),
    "__complete": ("prints words for the shell, one per line", ("__complete", "--", "planstate", "st")),
    "git textconv": ("git reads its output as the file's text", ("git", "textconv", ".planning/STATE.md")),
    "git merge-driver": ("git reads its exit code and the file it writes", ("git", "merge-driver", "a", "b", "c")),
    "hooks run": ("the agent reads its output", ("hooks", "run", "SessionStart", "--agent", "claude")),
    "mcp": ("speaks MCP on stdin and stdout; each tool answers in the envelope (tests/test_mcp.py)", ("mcp",)),
}
STREAMS = {"watch": "one event per line until stopped; tests/test_watch.py reads the events"}

# Keys the vocabulary has retired (docs/json.md): a file is `path`, success is the envelope's `ok`.
RETIRED = {"file", "dir", "folder", "workspace", "clean", "empty", "ok"}


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every runnable command of the parser (`decision add`, not `decision`), by name."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = commands(sub, f"{prefix}{name} ")
                found.update(inner or {f"{prefix}{name}": sub})
    return found


ALL = commands(build_parser())
JSON_COMMANDS = sorted(name for name in ALL if name not in NO_JSON)


@cache
def registry() -> Registry:  # type: ignore[type-arg]
    """Every schema file, by its file name: the commands' schemas refer to `envelope.json#/$defs/...`."""
    resources = [
        (path.name, Resource.from_contents(json.loads(path.read_text()), default_specification=DRAFT202012))
        for path in SCHEMAS.glob("*.json")
    ]
    return Registry().with_resources(resources)


def schema_of(name: str) -> dict[str, Any]:
    """The JSON Schema of a command's `data`, or of the envelope."""
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name.replace(' ', '-')}.json").read_text())
    return loaded


def validate(instance: Any, name: str) -> None:
    """Raise when `instance` does not match the schema `name`."""
    jsonschema.Draft202012Validator(schema_of(name), registry=registry()).validate(instance)


def vocabulary(value: Any, where: str = "data") -> None:
    """The same key means the same thing everywhere: no retired key, `lifecycle` and `current_phase` are objects,
    `path` is text, `field` a field path."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            vocabulary(item, f"{where}[{i}]")
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        at = f"{where}.{key}"
        assert key not in RETIRED, at
        if key in ("lifecycle", "current_phase", "next_phase"):
            assert item is None or (isinstance(item, dict) and ("state" in item or "number" in item)), at
        if key in ("path", "field"):
            assert item is None or isinstance(item, str), at
        vocabulary(item, at)


def test_every_command_has_a_schema_and_every_schema_a_command() -> None:
    files = {path.stem for path in SCHEMAS.glob("*.json")}
    assert files == {"envelope"} | {name.replace(" ", "-") for name in JSON_COMMANDS}
    for path in SCHEMAS.glob("*.json"):
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", path.name


# ---------------------------------------------------------------------------- every command's real answer


def _git_repo(project: Path) -> None:
    """Make the project a git repository with one commit, then change STATE.md (for `diff`)."""
    new_repo(project)
    commit_all(project, "start")
    Workspace.find(project, actor=ACTOR).next("Changed after the commit")


def _installed(project: Path) -> None:
    _git_repo(project)
    Workspace.find(project, actor=ACTOR).git_install()


# Commands tests/test_parity.py has no case for, as (arguments, setup).
EXTRA: dict[str, tuple[tuple[str, ...], Callable[[Path], None] | None]] = {
    "init": (("init", "--dir", "fresh", "--title", "Fresh", "--phase", "One"), lambda p: (p / "fresh").mkdir()),
    "schema": (("schema", "decision"), None),
    "diff": (("diff",), _git_repo),
    "git install": (("git", "install"), _git_repo),
    "git uninstall": (("git", "uninstall"), _installed),
    "git status": (("git", "status"), _installed),
    "hooks install": (("hooks", "install", "claude"), None),
    "hooks uninstall": (("hooks", "uninstall", "claude"), lambda p: install("claude", p)),
    "hooks status": (("hooks", "status"), lambda p: install("gemini", p)),
}


def _arguments(name: str, project: Path) -> list[str]:
    """The command line of a case, its record placeholders replaced by the ids the setup made."""
    if name in EXTRA:
        args, setup = EXTRA[name]
        if setup is not None:
            setup(project)
        return list(args)
    case = CASES[name]
    if case.setup is not None:
        case.setup(Workspace.find(project, actor=ACTOR))
    ws = Workspace.find(project, actor=ACTOR)
    kinds = {"@dec": "decision", "@blk": "blocker", "@ses": "session"}
    picks = {
        "@old": lambda: _ids_of(ws, "decision")[0],
        "@new": lambda: _ids_of(ws, "decision")[1],
        "@tsk": lambda: _ids_of(ws, "task")[0],
    }
    return [_id(ws, kinds[a]) if a in kinds else picks[a]() if a in picks else a for a in case.args]


def test_every_json_command_has_a_case() -> None:
    assert set(JSON_COMMANDS) - set(STREAMS) == set(CASES) | set(EXTRA)


@pytest.mark.parametrize("name", sorted(set(JSON_COMMANDS) - set(STREAMS)))
def test_the_real_answer_matches_the_schema(name: str, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", PINNED_NOW)
    if name.startswith("hooks"):  # install refuses where the agent's shell would not find `planstate`
        monkeypatch.setenv("PATH", f"{Path(planstate_command()[0]).parent}{os.pathsep}{os.environ['PATH']}")
    args = _arguments(name, project)
    done = forkserver.run([*args, "--json"], cwd=project, env=_env(), timeout=60)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    answer = json_envelope(done)
    validate(answer, "envelope")
    assert answer["command"] == name
    validate(answer["data"], name)
    if name not in ("get", "schema"):  # these answer with a value as it is in a file
        vocabulary(answer["data"])


@pytest.mark.parametrize("name", ["next", "position", "context"])
def test_a_command_given_nothing_to_change_answers_with_the_value_its_schema_describes(
    name: str, run: Callable[..., Any], project: Path
) -> None:
    answer = json_envelope(run(name, "--json", cwd=project))
    validate(answer, "envelope")
    assert answer["command"] == name and "changes" not in (answer["data"] or {})
    validate(answer["data"], name)


def test_json_before_the_command_is_the_same_answer(run: Callable[..., Any], project: Path) -> None:
    after = run("status", "--json", cwd=project)
    before = run("--json", "status", cwd=project)
    assert json_envelope(before) == json_envelope(after)


@pytest.mark.parametrize("name", sorted(NO_JSON))
def test_a_command_without_json_refuses_it_as_json(name: str, run: Callable[..., Any], project: Path) -> None:
    error = json_error(run("--json", *NO_JSON[name][1], cwd=project))
    assert error["type"] == "UsageError" and "no JSON output" in error["message"]


# ---------------------------------------------------------------------------- errors


def _error_answer(done: subprocess.CompletedProcess[str], kind: str, code: int) -> dict[str, Any]:
    """Check an error answer against the envelope's schema; return its error object."""
    assert done.returncode == code, done.stdout + done.stderr
    answer = json_envelope(done)
    validate(answer, "envelope")
    error = json_error(done)
    assert error["type"] == kind
    assert error["text"].startswith("planstate: ") and "\n" not in error["text"]
    return error


def test_a_usage_error(run: Callable[..., Any], project: Path) -> None:
    done = run("get", "nope", "--json", cwd=project)
    error = _error_answer(done, "UsageError", 2)
    assert error["text"] == run("get", "nope", cwd=project).stderr.rstrip("\n")  # the line printed without --json


def test_a_refused_command_line(run: Callable[..., Any], project: Path) -> None:
    error = _error_answer(run("--json", "stauts", cwd=project), "UsageError", 2)
    assert "did you mean" in error["message"]
    assert json_envelope(run("--json", "stauts", cwd=project))["command"] is None  # no command was recognised
    _error_answer(run("decision", "add", "--json", cwd=project), "UsageError", 2)


def test_a_parse_error(run: Callable[..., Any], project: Path) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("title: Demo\n", "title: [Demo\n", 1))
    error = _error_answer(run("status", "--json", cwd=project), "ParseError", 2)
    assert error["path"] == ".planning/STATE.md" and isinstance(error["line"], int)


def test_a_validation_error(run: Callable[..., Any], project: Path) -> None:
    error = _error_answer(run("set", "position.status", "bogus", "--json", cwd=project), "ValidationError", 2)
    assert (error["path"], error["field"]) == (".planning/STATE.md", "position.status")


def test_a_lock_timeout(run: Callable[..., Any], project: Path) -> None:
    with Workspace.find(project).transaction():  # holds the workspace lock while the command waits for it
        done = run("next", "Later", "--lock-timeout", "0.2", "--json", cwd=project, env={**os.environ})
    error = _error_answer(done, "LockTimeout", 3)
    assert "--lock-timeout" in error["message"]
