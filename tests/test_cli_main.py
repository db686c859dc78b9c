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
