"""The command line's entry point: one module per command, only the run command's module imported."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

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
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug inside a command (here a status computation that raises) is one line on stderr, exit 4, and a log
    with what a bug report needs."""
    import platform
    import re
    import tempfile

    from planstate import __version__
    from planstate.cli.main import main
    from planstate.workspace import Workspace

    def broken_status(self: Workspace) -> None:
        raise RuntimeError("status went wrong")

    logs = tmp_path / "logs"
    logs.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(logs))
    monkeypatch.setattr(Workspace, "status", broken_status)
    code = main(["--dir", str(project), "status", "--json"])
    captured = capsys.readouterr()
    assert code == 4
    assert captured.out == ""
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
    assert "in broken_status\n" in text and text.rstrip().endswith("RuntimeError: status went wrong\n```")
