"""The commands: one module per command, or per group a user sees as one thing, each with its `register(cli)`."""

from __future__ import annotations

LIFECYCLE_VERBS = ("pause", "suspend", "error", "fail", "retry", "complete", "abandon", "archive", "reopen")

# Each command and the module of this package that registers it, in the order `planstate --help` lists them.
# `main` imports only the module of the command being run; help and an unknown command import them all.
COMMANDS: dict[str, str] = {
    "init": "init",
    "status": "status",
    "get": "get",
    "set": "fields",
    "append": "fields",
    "unset": "fields",
    "validate": "validate",
    "schema": "schema",
    "decision": "decision",
    "blocker": "blocker",
    "session": "session",
    "records": "records",
    "phase": "phase",
    "position": "position",
    "next": "next",
    "context": "context",
    "task": "task",
    "ready": "ready",
    **dict.fromkeys(LIFECYCLE_VERBS, "lifecycle"),
    "initiative": "initiative",
    "render": "render",
    "check": "check",
    "watch": "watch",
    "resume": "resume",
    "diff": "diff",
    "import": "import_",
    "git": "git",
    "hooks": "hooks",
    "mcp": "mcp",
    "completion": "completion",
    "__complete": "completion",
}
