"""The examples at the end of each command's --help are command lines that planstate accepts as written."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator

from planstate.cli.main import build_parser


def parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every command's parser, groups' subcommands included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield sub
                yield from parsers(sub)


def test_every_help_example_parses_as_the_command_it_illustrates() -> None:
    parser = build_parser()
    seen = 0
    for command in parsers(parser):
        if not command.epilog:
            continue
        heading, *lines = command.epilog.splitlines()
        assert heading == "examples:"
        for line in lines:
            words = shlex.split(line.split(" > ")[0])  # a redirection is the shell's, not planstate's
            assert words[0] == "planstate"
            assert " ".join(words[1:]).startswith(command.prog.removeprefix("planstate "))
            args = parser.parse_args(words[1:])
            assert args._prog == command.prog
            seen += 1
    assert seen >= 20
