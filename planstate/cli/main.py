"""`planstate`: parse the command line, build only the parser of the command being run, and dispatch to it.

Command modules only parse arguments, call the Workspace API and format results. They import what a command
needs inside the command, so starting the process stays cheap. Every error goes through the boundary in
cli/errors.py.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from planstate.cli import output
from planstate.cli.commands import COMMANDS
from planstate.cli.errors import Boundary
from planstate.cli.parser import VALUED, Handler, Parser, Registrar, common_options, usage_error
from planstate.core import collector
from planstate.core.errors import EXIT_USAGE

LONG_LIVED = ("watch", "mcp")  # the commands that run until stopped: see core/collector.py


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    output.tolerant_streams()
    output.REPLY = output.Reply()  # a fresh answer for each run (tests call main() many times in one process)
    arguments = list(sys.argv[1:] if argv is None else argv)
    with Boundary(arguments) as boundary:
        boundary.code = _dispatch(arguments, boundary)
    return boundary.code


def _dispatch(arguments: list[str], boundary: Boundary) -> int:
    """Parse `arguments` and run the command's handler."""
    _refuse_undecodable(arguments)
    name = _command_name(arguments)
    parser = build_parser(only=name if name in COMMANDS else None)  # not a command: the full parser says so
    args, extras = parser.parse_known_args(arguments)
    boundary.args = args
    if extras:  # reported by the command's own parser, so the pointer names its --help
        usage_error(f"unrecognized arguments: {' '.join(extras)}", getattr(args, "_prog", parser.prog))
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    collector.freezing(name not in LONG_LIVED)
    args.json = getattr(args, "json", False)  # given before the command or after it, or not at all
    if args.json and not getattr(args, "_json", True):
        usage_error("this command has no JSON output; leave out --json", args._prog)
    code = handler(args)
    if output.REPLY.given:  # the command answered as JSON (--json, or check's --format json)
        from planstate.cli.display import dump_json
        from planstate.cli.envelope import envelope

        reply = output.REPLY
        output.out(dump_json(envelope(command_of(args._prog), code, reply.data, warnings=reply.warnings)))
    return code


def command_of(prog: str) -> str | None:
    """The command as the envelope names it (`decision add`), from its usage name (`planstate decision add`)."""
    return prog.removeprefix("planstate").strip() or None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Build the argument parser with every command (or, with `only`, just that one: only its module is imported)."""
    from planstate import __version__

    common = common_options(by=True)
    without_by = common_options(by=False)
    json_flag = Parser(add_help=False)
    # SUPPRESS, so a --json given before the command is not reset by the command's own default
    json_flag.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for programs and agents"
    )

    parser: argparse.ArgumentParser = Parser(
        prog="planstate",
        description="Keep the execution state of software work in plain files under .planning/.",
        epilog="Exit codes: 0 ok, 1 findings, 2 usage/validation/parse error, 3 lock timeout or "
        "concurrent change, 4 internal error. See docs/cli.md.",
        parents=[common, json_flag],
    )
    parser.add_argument("-V", "--version", action="version", version=f"planstate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    cli = Registrar(sub, [common], json_flag, only, without_by=[without_by])
    modules = [COMMANDS[only]] if only is not None else dict.fromkeys(COMMANDS.values())
    for module in modules:
        importlib.import_module(f"planstate.cli.commands.{module}").register(cli)
    return parser


def _command_name(argv: Sequence[str]) -> str | None:
    """The first word of `argv` that is not an option or an option's value: the command to build."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--":
            return None
        elif arg in VALUED:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _refuse_undecodable(arguments: list[str]) -> None:
    """Refuse arguments and PLANSTATE_* settings that are not UTF-8 text (Python keeps their bad bytes as lone
    surrogates): they cannot be written to a UTF-8 file, and the reader would refuse the file they made."""
    import os

    found = [
        f"argument {i} ({arg.encode('utf-8', 'surrogateescape')!r})"
        for i, arg in enumerate(arguments, 1)
        if _undecodable(arg)
    ]
    found += [name for name, value in os.environ.items() if name.startswith("PLANSTATE_") and _undecodable(value)]
    if found:
        usage_error(f"{found[0]} is not UTF-8 text; planstate files are UTF-8", "planstate")


def _undecodable(text: str) -> bool:
    """Whether `text` holds a byte that was not UTF-8 (decoded as a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
