"""The command line's entry point: one module per command, only the run command's module imported."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Run, json_error

from planstate.cli.commands import COMMANDS
from planstate.cli.main import build_parser


def commands_of(parser: argparse.ArgumentParser) -> list[str]:
    """The command names a parser was built with, in the order its help lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def test_the_table_lists_every_command_in_help_order() -> None:
    assert commands_of(build_parser()) == list(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_is_built_from_its_own_module_alone(name: str) -> None:
    assert commands_of(build_parser(only=name)) == [name]


def test_a_command_imports_only_its_own_module(project: Path) -> None:
    code = (
        "import sys\n"
        "from planstate.cli.main import main\n"
        "code = main(['get', 'title'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('planstate.cli.commands.')), code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "['planstate.cli.commands.get'] 0"


def test_an_internal_error_leaves_a_crash_log_for_the_bug_report(
    project: Path, broken_status: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug inside a command (here a status computation that raises) is one line on stderr, exit 4, and a log
    with what a bug report needs."""
    import platform
    import re

    from planstate import __version__
    from planstate.cli.main import main

    logs = broken_status
    code = main(["--dir", str(project), "status", "--json"])
    captured = capsys.readouterr()
    assert code == 4
    answer = json.loads(captured.out)  # with --json, the error envelope too
    assert (answer["exit"], answer["error"]["type"]) == (4, "InternalError")
    assert answer["error"]["text"] == captured.err.rstrip("\n")
    found = re.fullmatch(
        r"planstate: internal error: RuntimeError: status went wrong \(traceback: (.+)\)\n", captured.err
    )
    assert found, captured.err
    log = Path(found.group(1))
    assert log.parent == logs and log.name.startswith("planstate-crash-")
    text = log.read_text(encoding="utf-8")
    assert f"planstate version: {__version__}\n" in text
    assert f"sys.version:\n    {sys.version.splitlines()[0]}" in text
    assert f"sys.platform: {sys.platform}\n" in text
    assert f"platform: {platform.platform()}\n" in text
    assert f"command line: planstate --dir {project} status --json\n" in text
    assert "internal error: RuntimeError: status went wrong\n" in text
    assert "Traceback (most recent call last):\n" in text
    assert "in broken\n" in text and text.rstrip().endswith("RuntimeError: status went wrong\n```")


# ---------------------------------------------------------------------------- errors about an argument


def without_position(project: Path) -> None:
    """Remove the `position:` block from the project's STATE.md, as a hand edit might."""
    import re

    state = project / ".planning" / "STATE.md"
    text = state.read_text(encoding="utf-8")
    edited = re.sub(r"\nposition:\n(?:  .*\n)+", "\n", text, count=1)
    assert edited != text
    state.write_text(edited, encoding="utf-8")


def test_api_errors_name_the_argument_as_python_spells_it(project: Path, tmp_path: Path) -> None:
    """The API's errors speak of its keyword arguments, never of command-line options; `argument` names the one
    each is about."""
    from datetime import timedelta

    from planstate.core.errors import UsageError
    from planstate.workspace import Workspace

    ws = Workspace.find(project, actor="tester")
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        (lambda: ws.decision.list(since="last week"), "since", "since 'last week' is not a date"),
        (lambda: ws.blocker.list(since="99999999d"), "since", "since '99999999d' is too long"),
        (lambda: ws.session.reap(stale_after="soon"), "stale_after", "stale_after 'soon' is not a duration"),
        (lambda: ws.session.reap(abandon_after=timedelta(0)), "abandon_after", "abandon_after must be longer"),
        (lambda: ws.phase.fail(1, reason=" "), "reason", "phase fail needs a reason (reason=R)"),
        (lambda: Workspace.find(empty), "explicit", "or pass explicit=PATH (or set PLANSTATE_DIR)"),
    ]
    for call, argument, text in cases:
        with pytest.raises(UsageError) as caught:
            call()
        assert (caught.value.argument, "--" in caught.value.message) == (argument, False), caught.value
        assert text in caught.value.message
    ws.session.start()
    ws.session.start()
    with pytest.raises(UsageError, match=r"refusing to start another \(exclusive=True\)") as caught:
        ws.session.start(exclusive=True)
    assert caught.value.argument == "exclusive"
    with pytest.raises(UsageError, match=r"; name one with session=ID or PLANSTATE_SESSION$") as caught:
        ws.session.heartbeat()
    assert caught.value.argument == "session"
    without_position(project)
    with pytest.raises(UsageError, match=r"no position yet; give the phase too: phase=N$") as caught:
        ws.position(task="t")
    assert (caught.value.argument, caught.value.field) == ("phase", "position")


def test_the_command_line_names_the_option(run: Run, project: Path) -> None:
    """A bad value of an option points at the command's help, as argparse's own refusals do; a hint that names an
    option is printed like any other error, in the option's words."""
    result = run("session", "reap", "--abandon-after", "0s", cwd=project)
    assert (result.returncode, result.stderr) == (
        2,
        "planstate: session reap: --abandon-after '0s' must be longer than zero "
        "(see `planstate session reap --help`)\n",
    )
    result = run("phase", "fail", "1", "--reason", " ", cwd=project)
    assert (result.returncode, result.stderr) == (2, "planstate: phase fail needs a reason (--reason R)\n")
    result = run("decision", "list", "--since", "since=x", cwd=project)  # only the leading name is the argument
    assert result.stderr.startswith("planstate: decision list: --since 'since=x' is not a date")
    result = run("status", cwd=project.parent)  # no .planning/ here or above
    assert result.returncode == 2
    assert result.stderr.startswith(f"planstate: no .planning/ folder in {project.parent} or any parent")
    assert result.stderr.endswith("run `planstate init` or pass --dir PATH (or set PLANSTATE_DIR)\n")
    without_position(project)
    result = run("position", "--task", "t", "--json", cwd=project)
    error = json_error(result)
    assert (error["path"], error["field"]) == (".planning/STATE.md", "position")
    assert error["message"] == "cannot set the position: STATE.md has no position yet; give the phase too: --phase N"
    result = run("task", "start", "t", cwd=project)  # task start has no --phase: the hint is a command to run
    assert result.stderr.endswith("no position yet; set the phase first (`planstate position --phase N`)\n")
