"""Whether the agent's shell can run `planstate`: the one verdict `hooks install` acts on and `hooks status` shows.

The rule. Every hook runs the bare `planstate` (spec.PREFIX), and the brief, the Cursor rule and the
instructions block tell the agent to type `planstate …` in its own shell. A project's settings file is
usually committed, so it must run for every teammate: a path into one person's virtual environment would
break everyone else's agent (and that person's, once the environment moves), and the agent still could not
run the commands its brief names. So the command is always the bare name, and it must be on PATH: install
refuses, writing nothing, when `planstate` is not on PATH, and says how to put it there. `|| true` after each
hook still keeps a hook from ever failing the agent (a teammate without planstate sees no error on every
event); this check is what keeps that from hiding a hook that does nothing.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

FIX = (
    "install it for every shell with `pipx install planstate` or `uv tool install planstate` (from a checkout: "
    "`pipx install .`), or activate its virtual environment in the shell that installs the hooks and starts the agent"
)
NOT_ON_PATH = f"`planstate` is not on PATH, so the agent's shell cannot run the hooks (they would do nothing): {FIX}"


@dataclass(frozen=True)
class Verdict:
    """Where the agent's shell finds `planstate`, why the hooks would do nothing (None: they run), and what else to
    know about the `planstate` they run."""

    executable: str | None
    problem: str | None
    notes: tuple[str, ...] = ()


def verdict() -> Verdict:
    """Whether `planstate` is on this process's PATH (as the shell that starts the agent sees it), and the caveats:
    found only inside the active virtual environment, or another installation than the one running."""
    found = shutil.which("planstate")
    if found is None:
        return Verdict(None, NOT_ON_PATH)
    notes = []
    venv = os.environ.get("VIRTUAL_ENV")
    if venv and os.path.abspath(found).startswith(os.path.join(os.path.abspath(venv), "")):
        notes.append(
            f"`planstate` is on PATH only while the virtual environment {venv} is active: start the agent from such "
            "a shell, or install planstate for every shell with `pipx install planstate` or `uv tool install planstate`"
        )
    interpreter = _interpreter(found)
    if interpreter is not None and os.path.dirname(interpreter) != os.path.dirname(os.path.abspath(sys.executable)):
        notes.append(f"the hooks run the `planstate` on PATH, {found} (Python {interpreter}), not this one")
    return Verdict(found, None, tuple(notes))


def _interpreter(script: str) -> str | None:
    """The Python a console script starts (its `#!` line, or the `exec` line pip writes for a long path), or None
    when that cannot be told (a binary, `#!/usr/bin/env python3`)."""
    try:
        with open(script, "rb") as handle:
            head = handle.read(1024).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = head.splitlines()
    if not lines or not lines[0].startswith("#!"):
        return None
    first = lines[0][2:].strip()
    if first == "/bin/sh":  # pip's form for a path too long or spaced for `#!`: '''exec' "/path/python" "$0" "$@"
        line = next((text for text in lines[1:3] if text.startswith("'''exec' ")), "")
        first = line.removeprefix("'''exec' ").split('"')[1] if line.count('"') >= 2 else ""
    else:
        first = first.split()[0] if first else ""
    if not first or os.path.basename(first) == "env" or not os.path.isabs(first):
        return None
    return os.path.abspath(first)
