"""Who acts, recorded in the history and in new records: one rule for the command line, the MCP server, the agent
hooks and the Python API.

The order: the name the caller gives (the command line's and MCP server's option), else PLANSTATE_ACTOR, else git's
`user.name` (what the same person's commits say), else the OS account (read from the password database when $USER
is unset, as in containers and CI), and only then `unknown`. Callers resolve it only when a write needs it: git is
asked at most once, and never by a command that only reads.
"""

from __future__ import annotations

import os
from pathlib import Path


def resolve(given: str | None, folder: Path | None) -> str:
    """Who acts: `given`, else PLANSTATE_ACTOR, else git's `user.name` as read in `folder` (when one is given), else
    the OS account, else `unknown`."""
    if given:
        return given
    named = os.environ.get("PLANSTATE_ACTOR")
    if named:
        return named
    if folder is not None:
        from planstate.core.git import user_name

        found = user_name(folder)
        if found:
            return found
    return _account() or "unknown"


def _account() -> str | None:
    """The OS account's name: LOGNAME, USER, LNAME or USERNAME, else the password database's entry for this user."""
    import getpass

    try:
        return getpass.getuser() or None
    except (KeyError, OSError, ImportError):  # a uid without an entry (a container's), or no pwd module
        return None
