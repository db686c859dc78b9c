"""The error boundary of the command line: the one place where an exception becomes an exit code and one line.

Expected errors (`PlanstateError`, a refused command line) print one line on stderr, or with `--json` the error
envelope (envelope.py) on stdout; Ctrl-C and a closed stdout end quietly; anything else is a bug: one line, and a
crash log that carries what a bug report needs.
"""

from __future__ import annotations

import argparse
import sys
from types import TracebackType

from planstate.cli.parser import CommandLineError
from planstate.core.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    LockTimeout,
    PlanstateError,
    UsageError,
)


class InternalError(Exception):
    """A bug, as the `--json` envelope names it: the message says what failed and where its crash log is."""


class Boundary:
    """Catch what escapes a command and turn it into `code`; use as `with Boundary(argv) as b: b.code = run()`.

    `args` is the parsed command line once known: it says whether the command asked for `--json`, and which
    command's help a usage error points at.
    """

    def __init__(self, arguments: list[str]) -> None:
        self.arguments = arguments
        self.args: argparse.Namespace | None = None
        self.code = EXIT_OK

    def __enter__(self) -> Boundary:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        if exc is None or not isinstance(exc, Exception | KeyboardInterrupt):
            return False  # SystemExit (`--help`, `--version`) ends the process as it asks
        self.code = self._report(exc)
        return True

    def _report(self, exc: Exception | KeyboardInterrupt) -> int:
        """Print what `exc` means for the person or program running the command; return the exit code."""
        if isinstance(exc, CommandLineError):
            return self._usage(exc.message, exc.prog)
        if isinstance(exc, PlanstateError):
            if isinstance(exc, UsageError) and exc.argument is not None:
                exc, about_value = _in_option_words(exc)
                if about_value and exc.file is None and not exc.field:  # point at --help, as argparse does
                    return self._usage(exc.message, self._prog())
            if isinstance(exc, LockTimeout):
                exc = LockTimeout(
                    f"{exc.message} (set --lock-timeout or PLANSTATE_LOCK_TIMEOUT to wait longer)", file=exc.file
                )
            return self._say(exc, exc.exit_code, f"planstate: {exc}", self._command())
        if isinstance(exc, KeyboardInterrupt):
            return self._say(exc, EXIT_INTERRUPTED, "planstate: interrupted", self._command())
        if isinstance(exc, BrokenPipeError):
            from planstate.cli.output import silence_stdout

            silence_stdout()
            return EXIT_OK
        log = save_crash_log(exc, self.arguments)  # a bug: say so in one line, keep the details
        text = f"planstate: internal error: {type(exc).__name__}: {exc} (traceback: {log})"
        if self._json():  # a bug is said on stderr too: the person who reports it may be reading only that
            sys.stderr.write(text + "\n")
        return self._say(InternalError(text.removeprefix("planstate: ")), EXIT_INTERNAL, text, self._command())

    def _say(self, exc: BaseException, code: int, text: str, command: str | None) -> int:
        """Print an error: its one line on stderr, or with `--json` its envelope on stdout (envelope.py); return
        `code`."""
        if self._json():
            from planstate.cli import output
            from planstate.cli.display import dump_json
            from planstate.cli.envelope import envelope

            output.out(dump_json(envelope(command, code, error=exc, text=text, warnings=output.REPLY.warnings)))
        else:
            sys.stderr.write(text + "\n")
        return code

    def _command(self) -> str | None:
        """The command being run, as the envelope names it (`decision add`), once known."""
        from planstate.cli.main import command_of

        return command_of(self._prog()) if self.args is not None else None

    def _json(self) -> bool:
        """Whether the answer is JSON: `--json` as parsed, or among the arguments when parsing did not get there."""
        given = getattr(self.args, "json", None)
        return bool(given) if given is not None else self._json_requested()

    def _prog(self) -> str:
        """The command being run, as its usage names it (`planstate decision list`)."""
        return str(getattr(self.args, "_prog", "planstate"))

    def _usage(self, message: str, prog: str) -> int:
        """Print `planstate: <command>: <message> (see `<prog> --help`)`, or its JSON with `--json`; return 2."""
        command = prog.removeprefix("planstate").strip()
        text = f"{message} (see `{prog} --help`)"
        line = f"planstate: {command + ': ' if command else ''}{text}"
        return self._say(UsageError(text, field=None), EXIT_USAGE, line, command or None)

    def _json_requested(self) -> bool:
        """Whether `--json` is among the arguments (before a `--`): a refused command line is then JSON too."""
        arguments = self.arguments
        return "--json" in (arguments[: arguments.index("--")] if "--" in arguments else arguments)


# API arguments whose option has another name (`Workspace.find(explicit=PATH)` is `--dir PATH`).
_OPTIONS = {"explicit": "--dir", "global_": "--global"}


def _in_option_words(exc: UsageError) -> tuple[UsageError, bool]:
    """`exc` with the argument it is about spelled as its option, in the two forms UsageError documents, and
    whether it is about the option's value: a leading `since` becomes `--since` (True); else the last
    `session=ID` becomes `--session ID` and `exclusive=True` `--exclusive` (False: a hint, and text quoted from the
    caller comes before it, so only the last one is the hint)."""
    import re

    name = str(exc.argument)
    option = _OPTIONS.get(name, "--" + name.replace("_", "-"))
    message = exc.message
    about_value = re.match(rf"{re.escape(name)}(?![\w-])", message) is not None
    if about_value:
        message = option + message[len(name) :]
    elif hints := list(re.finditer(rf"(?<![\w.-]){re.escape(name)}=(True\b)?", message)):
        hint = hints[-1]
        message = message[: hint.start()] + (option if hint.group(1) else option + " ") + message[hint.end() :]
    spelled = UsageError(message, argument=name, file=exc.file, line=exc.line, column=exc.column, field=exc.field)
    return spelled, about_value


def _crash_log(exc: BaseException, arguments: list[str]) -> str:
    """What a bug report needs, as markdown: the versions and platform, the command line, the traceback."""
    import os
    import platform
    import shlex
    import traceback

    from planstate import __version__

    python = sys.version.replace("\n", "\n    ")
    return (
        "### version information\n\n"
        "```\n"
        f"planstate version: {__version__}\n"
        f"sys.version:\n    {python}\n"
        f"sys.executable: {sys.executable}\n"
        f"os.name: {os.name}\n"
        f"sys.platform: {sys.platform}\n"
        f"platform: {platform.platform()}\n"
        "```\n\n"
        "### error information\n\n"
        "```\n"
        f"command line: {shlex.join(['planstate', *arguments])}\n"
        f"internal error: {type(exc).__name__}: {exc}\n"
        "```\n\n"
        "```\n"
        f"{''.join(traceback.format_exception(exc))}"
        "```\n"
    )


def save_crash_log(exc: BaseException, arguments: list[str]) -> str:
    """Write the crash log of a bug (`arguments`: the command line after `planstate`, or what stands for it) to a new
    file in the temp folder and return its path; on failure, print it instead. The CLI and the MCP server both."""
    return _save_crash_log(_crash_log(exc, arguments))


def _save_crash_log(text: str) -> str:
    """Write the crash log to a new file in the temp folder and return its path; on failure, print it instead."""
    import os
    import tempfile

    try:
        fd, path = tempfile.mkstemp(prefix="planstate-crash-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
    except OSError as exc:  # the log is all a bug report has: never lose it with the file
        sys.stderr.write(text)
        return f"not saved ({exc.strerror or exc}); printed above"
    return path
