"""The `planstate` command: builds the parser from one module per command group, runs it, maps errors to exit codes.

Command modules only parse arguments, call the Workspace API and format results. They import
what a command needs inside the command, so starting the process stays cheap.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from planstate.core.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PlanstateError, UsageError

Handler = Callable[[argparse.Namespace], int]

# Command groups, in the order `planstate --help` lists them; each module has `register(cli)`.
GROUPS = ("core", "records", "flow", "lifecycle", "checks", "resume", "git")


# argparse's own words stay English, like every message of ours. Its translation lookup would also import
# `locale` and search for message catalogs in every process, before any command runs.
argparse._ = str  # type: ignore[attr-defined]
argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural  # type: ignore[attr-defined]


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized without `shutil` (argparse builds one for every option it adds, and
    importing shutil for its terminal size costs more than parsing the arguments)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width if width is not None else _columns() - 2)


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


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, like every other planstate error."""

    json_errors = False  # set by `main` when `--json` is among the arguments: errors are then JSON too

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print `planstate: <command>: <message>` and a pointer to --help (or the JSON error object), then exit 2."""
        usage_error(message, self.prog)


def usage_error(message: str, prog: str) -> NoReturn:
    """Exit 2 after one line on stderr: `planstate: <command>: <message> (see `<prog> --help`)`, or its JSON."""
    command = prog.removeprefix("planstate").strip()
    text = f"{message} (see `{prog} --help`)"
    if _Parser.json_errors:
        import json

        sys.stderr.write(json.dumps(UsageError(text, field=None).to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"planstate: {command + ': ' if command else ''}{text}\n")
    sys.exit(EXIT_USAGE)


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
        self.built: list[str] = []

    def add(self, name: str, handler: Handler, help_text: str, *, json: bool = True, by: bool = True) -> Any:
        """Add a command; `json` gives it `--json`; `by=False` frees `--by` for the command's own use.

        Returns the command's parser, to add arguments to.
        """
        if self._only is not None and name != self._only:
            return _Skipped()
        common = self._parents if by else self._without_by
        parents = [*common, self._json] if json else list(common)
        p = self._sub.add_parser(name, help=help_text, description=help_text, parents=parents)
        p.set_defaults(handler=handler, _prog=p.prog)
        self.built.append(name)
        return p

    def group(self, name: str, help_text: str) -> Registrar:
        """Add a command that has subcommands (`planstate decision add`) and return their registrar."""
        if self._only is not None and name != self._only:
            return Registrar(None, self._parents, self._json, only="\0")  # builds nothing
        p = self._sub.add_parser(name, help=help_text, description=help_text, parents=self._parents)
        p.set_defaults(handler=_missing_subcommand(p), _prog=p.prog)
        sub = p.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND", parser_class=_Parser)
        self.built.append(name)
        return Registrar(sub, self._parents, self._json, without_by=self._without_by)


def _missing_subcommand(parser: argparse.ArgumentParser) -> Handler:
    def handler(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    return handler


def _common_options(*, by: bool) -> argparse.ArgumentParser:
    """The options every command takes (`--by` left out for commands that use the name themselves)."""
    common: argparse.ArgumentParser = _Parser(add_help=False)
    common.add_argument(
        "--dir",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="the .planning/ folder or the project that holds it (default: search upward; env PLANSTATE_DIR)",
    )
    common.add_argument(
        "--initiative",
        default=argparse.SUPPRESS,
        metavar="SLUG",
        help="act on this initiative instead of the active one (env PLANSTATE_INITIATIVE)",
    )
    if by:
        common.add_argument(
            "--by",
            default=argparse.SUPPRESS,
            metavar="NAME",
            help="who is acting, for the history and new records (default: env PLANSTATE_ACTOR, else $USER)",
        )
    common.add_argument(
        "--lock-timeout",
        type=float,
        default=argparse.SUPPRESS,
        metavar="SECONDS",
        help="how long a write waits for the workspace lock (default 10; env PLANSTATE_LOCK_TIMEOUT)",
    )
    return common


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Build the argument parser with every command of every group (or, with `only`, just that command)."""
    from planstate import __version__

    common = _common_options(by=True)
    without_by = _common_options(by=False)
    json_flag = _Parser(add_help=False)
    json_flag.add_argument("--json", action="store_true", help="print JSON for programs and agents")

    parser: argparse.ArgumentParser = _Parser(
        prog="planstate",
        description="Keep the execution state of software work in plain files under .planning/.",
        epilog="Exit codes: 0 ok, 1 findings, 2 usage/validation/parse error, 3 lock timeout or "
        "concurrent change, 4 internal error. See docs/cli.md.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"planstate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    cli = Registrar(sub, [common], json_flag, only, without_by=[without_by])
    for group in GROUPS:
        importlib.import_module(f"planstate.cli.{group}").register(cli)
    parser.set_defaults(_built=cli.built)
    return parser


# Options of the main parser that take a value, so the command name can be found without parsing.
_VALUED = ("--dir", "--initiative", "--by", "--lock-timeout")


def _command_name(argv: Sequence[str]) -> str | None:
    """The first word of `argv` that is not an option or an option's value: the command to build."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--":
            return None
        elif arg in _VALUED:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    _tolerant_streams()
    arguments = list(sys.argv[1:] if argv is None else argv)
    _Parser.json_errors = "--json" in arguments[: arguments.index("--")] if "--" in arguments else "--json" in arguments
    _refuse_undecodable(arguments)
    name = _command_name(arguments)
    parser = build_parser(only=name) if name else build_parser()
    if name and name not in parser.get_default("_built"):
        parser = build_parser()  # not a command: the full parser says so and lists them
    args, extras = parser.parse_known_args(arguments)
    if extras:  # reported by the command's own parser, so the pointer names its --help
        usage_error(f"unrecognized arguments: {' '.join(extras)}", getattr(args, "_prog", parser.prog))
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return handler(args)
    except PlanstateError as exc:
        if isinstance(exc, UsageError) and exc.file is None and not exc.field and exc.message.startswith("-"):
            usage_error(exc.message, getattr(args, "_prog", parser.prog))  # a bad option value: point at --help
        if getattr(args, "json", False):
            import json

            sys.stderr.write(json.dumps(exc.to_dict(), ensure_ascii=False) + "\n")  # one line, like text errors
        else:
            sys.stderr.write(f"planstate: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("planstate: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except Exception as exc:  # an unexpected error is a bug: say so in one line, keep the trace
        log = _save_traceback()
        sys.stderr.write(f"planstate: internal error: {type(exc).__name__}: {exc} (traceback: {log})\n")
        return EXIT_INTERNAL


# ---------------------------------------------------------------------------- helpers for command modules


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


def out(text: str) -> None:
    """Print a line (or lines) to stdout."""
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))


def warn(text: str) -> None:
    """Print a one-line warning to stderr."""
    sys.stderr.write(f"planstate: warning: {text}\n")


def print_json(value: Any) -> None:
    """Print a result as JSON."""
    from planstate.cli.display import dump_json

    out(dump_json(value))


def _tolerant_streams() -> None:
    """Never fail on output a terminal's encoding cannot show: escape it (the work is already done)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    """After the reader of stdout went away, point stdout at /dev/null so the exit flush cannot fail."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _save_traceback() -> str:
    """Write the current traceback to a temp file and return its path."""
    import os
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="planstate-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        traceback.print_exc(file=handle)
    return path
