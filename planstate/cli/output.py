"""Where the command line writes: results to stdout, warnings and errors to stderr, the `--json` answer kept for
its envelope, and how the streams are set up."""

from __future__ import annotations

import contextlib
import sys
from typing import Any


def out(text: str) -> None:
    """Print a line (or lines) to stdout."""
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))


def err(text: str) -> None:
    """Print a line to stderr as it is."""
    sys.stderr.write(text + "\n")


class Reply:
    """What a command answers with `--json`, kept until it ends: main.py prints it as one envelope (envelope.py)
    with the exit code, so stdout holds exactly one JSON document whatever the command printed first."""

    def __init__(self) -> None:
        self.given = False
        self.data: Any = None
        self.warnings: list[str] = []


REPLY = Reply()


def warn(text: str) -> None:
    """Print a one-line warning to stderr (and keep it for the `--json` envelope's `warnings`)."""
    REPLY.warnings.append(text)
    err(f"planstate: warning: {text}")


def reply(data: Any) -> None:
    """Answer with `data` as JSON: the `data` of the envelope main.py prints when the command ends."""
    REPLY.given = True
    REPLY.data = data


def tolerant_streams() -> None:
    """Never fail on output a terminal's encoding cannot show: escape it (the work is already done)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def silence_stdout() -> None:
    """After the reader of stdout went away, point stdout at /dev/null so the exit flush cannot fail."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
