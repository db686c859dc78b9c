"""The argparse toolkit of the command modules: the parser and help formatter, `Registrar`, the common options.

Parsing refusals are raised as `CommandLineError`, never printed here: the error boundary (cli/errors.py) prints
every error, these included.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from planstate.core.errors import EXIT_USAGE
from planstate.core.lock import DEFAULT_TIMEOUT

Handler = Callable[[argparse.Namespace], int]

# argparse's own words stay English, like every message of ours. Its translation lookup would also import
# `locale` and search for message catalogs in every process, before any command runs.
argparse._ = str  # type: ignore[attr-defined]
argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural  # type: ignore[attr-defined]


class CommandLineError(Exception):
    """A command line that cannot be run as given: printed as one line that points at the help of `prog`."""

    def __init__(self, message: str, prog: str) -> None:
        super().__init__(message)
        self.message = message
        self.prog = prog


def usage_error(message: str, prog: str) -> NoReturn:
    """Refuse the command line: `planstate: <command>: <message> (see `<prog> --help`)`, exit 2."""
    raise CommandLineError(message, prog)


def option_error(args: argparse.Namespace, message: str) -> NoReturn:
    """Refuse options that parsed but do not go together (or a value out of range), as argparse refuses its own."""
    raise CommandLineError(message, getattr(args, "_prog", "planstate"))


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized without `shutil` (argparse builds one for every option it adds, and
    importing shutil for its terminal size costs more than parsing the arguments)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width if width is not None else _columns() - 2)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Wrap a description or epilog, except the indented command lines of an `examples:` epilog."""
        if not text.startswith("examples:\n"):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in text.splitlines())


def _columns() -> int:
    """The terminal's width: $COLUMNS, else the width of stderr's terminal, else 80."""
    import os

    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 80


class Parser(argparse.ArgumentParser):
    """An argument parser whose refusals reach the error boundary, to be printed as one line like every error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Raise the refusal for the boundary to print with a pointer to this command's --help (exit 2)."""
        usage_error(message, self.prog)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """Refuse a value outside an argument's choices, suggesting the closest one (a mistyped command, mostly)."""
        if action.choices is None or value in action.choices:
            return
        from planstate.core.suggest import did_you_mean

        choices = [str(c) for c in action.choices]
        if isinstance(action, argparse._SubParsersAction):
            word = "subcommand" if action.dest.endswith("_command") else "command"
            raise argparse.ArgumentError(None, f"unknown {word} {value!r}{did_you_mean(str(value), choices)}")
        listed = ", ".join(choices)
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{did_you_mean(str(value), choices)} (choose from {listed})"
        )


class _Skipped:
    """Stands in for the parser of a command that is not being run, so `register()` code can stay simple."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        """Ignore an argument of a command that is not being built."""

    def add_mutually_exclusive_group(self, *args: Any, **kwargs: Any) -> _Skipped:
        """Ignore a group of a command that is not being built."""
        return self

    def set_defaults(self, **kwargs: Any) -> None:
        """Ignore defaults of a command that is not being built."""


class Registrar:
    """What a command module uses to add its commands: plain ones, and groups with subcommands.

    With `only`, commands other than that one are not built: building all of them costs
    tens of milliseconds, and an agent runs one command per process.
    """

    def __init__(
        self,
        sub: Any,
        parents: list[argparse.ArgumentParser],
        json_flag: argparse.ArgumentParser,
        only: str | None = None,
        *,
        without_by: list[argparse.ArgumentParser] | None = None,
    ) -> None:
        self._sub = sub
        self._parents = parents
        self._without_by = without_by if without_by is not None else parents
        self._json = json_flag
        self._only = only

    def add(
        self,
        name: str,
        handler: Handler,
        help_text: str,
        *,
        json: bool = True,
        by: bool = True,
        examples: Sequence[str] = (),
    ) -> Any:
        """Add a command; `json` gives it `--json`; `by=False` frees `--by` for the command's own use; `examples`
        are command lines its --help shows at the end.

        Returns the command's parser, to add arguments to.
        """
        if self._only is not None and name != self._only:
            return _Skipped()
        common = self._parents if by else self._without_by
        parents = [*common, self._json] if json else list(common)
        epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples) if examples else None
        p = self._sub.add_parser(name, help=help_text, description=help_text, parents=parents, epilog=epilog)
        p.set_defaults(handler=handler, _prog=p.prog, _json=json)
        return p

    def group(self, name: str, help_text: str) -> Registrar:
        """Add a command that has subcommands (`planstate decision add`) and return their registrar."""
        if self._only is not None and name != self._only:
            return Registrar(None, self._parents, self._json, only="\0")  # builds nothing
        p = self._sub.add_parser(name, help=help_text, description=help_text, parents=self._parents)
        p.set_defaults(handler=_missing_subcommand(p), _prog=p.prog)
        sub = p.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND", parser_class=Parser)
        return Registrar(sub, self._parents, self._json, without_by=self._without_by)


def _missing_subcommand(parser: argparse.ArgumentParser) -> Handler:
    def handler(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    return handler


def completes(action: Any, source: str) -> None:
    """Tell shell completion where the values of an argument come from: `source` is one of `SOURCES` of
    cli/commands/completion.py (the ids of a record kind, the initiatives' slugs, the phases' numbers)."""
    if action is not None:  # None: the argument of a command not being built (`_Skipped`)
        action.completes = source


def common_options(*, by: bool) -> argparse.ArgumentParser:
    """The options every command takes (`--by` left out for commands that use the name themselves)."""
    common: argparse.ArgumentParser = Parser(add_help=False)
    common.add_argument(
        "--dir",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="the .planning/ folder or the project that holds it (default: search upward; env PLANSTATE_DIR)",
    )
    initiative = common.add_argument(
        "--initiative",
        default=argparse.SUPPRESS,
        metavar="SLUG",
        help="act on this initiative instead of the active one (env PLANSTATE_INITIATIVE)",
    )
    completes(initiative, "initiative")
    if by:
        common.add_argument(
            "--by",
            default=argparse.SUPPRESS,
            metavar="NAME",
            help="who is acting, for the history and new records (default: env PLANSTATE_ACTOR, else git's user.name, "
            "else the OS account)",
        )
    common.add_argument(
        "--lock-timeout",
        type=float,
        default=argparse.SUPPRESS,
        metavar="SECONDS",
        help=f"how long a write waits for the workspace lock (default {DEFAULT_TIMEOUT:g}; env PLANSTATE_LOCK_TIMEOUT)",
    )
    return common


# The common options that take a value, so the command name can be found without parsing.
VALUED = ("--dir", "--initiative", "--by", "--lock-timeout")


def workspace(args: argparse.Namespace) -> Any:
    """The Workspace a command acts on, from --dir, --initiative, --by and --lock-timeout (or their env vars)."""
    import os

    from planstate.workspace import Workspace

    return Workspace.find(
        explicit=getattr(args, "dir", None),
        lock_timeout=getattr(args, "lock_timeout", None),
        initiative=getattr(args, "initiative", None) or os.environ.get("PLANSTATE_INITIATIVE") or None,
        actor=getattr(args, "by", None),
    )
