"""What every agent integration declares: where its settings live, which hooks it gets, and what they print.

Each agent is one module of this package holding an `AGENT`; `agent(name)` imports only the one asked for.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from planstate.core.errors import UsageError
from planstate.core.suggest import did_you_mean

NAMES = ("claude", "codex", "gemini", "cursor")
PREFIX = "planstate hooks run "  # every hook planstate installs starts so: installs and uninstalls are keyed by it

# What a hook does for planstate: start (or reuse) the session and brief it, note a compaction, show a sign of
# life, brief again after a compaction, end the session.
ROLES = ("start", "compact", "beat", "reinject", "end")


@dataclass(frozen=True)
class Hook:
    """One hook an agent gets: its event (the agent's own name for it), the matcher, and what it does."""

    event: str
    roles: tuple[str, ...]
    matcher: str | None = None  # None: the entry has no `matcher` key (the agent matches every source)


@dataclass(frozen=True)
class Agent:
    """An agent: its settings files (relative to the project and to the home folder), hooks and output."""

    name: str
    title: str
    project_file: str
    global_file: str | None
    hooks: tuple[Hook, ...] = ()
    timeout: int = 10  # in the agent's unit
    extra: dict[str, Any] = field(default_factory=dict)  # more keys of each hook configuration
    output: Callable[[str, str | None], str] = lambda _event, _context: ""
    other_files: tuple[str, ...] = ()  # more project settings files `hooks status` reads (Claude's local settings)
    instructions: tuple[str, str] | None = None  # the instructions file: in the project, in the home folder

    def command(self, event: str) -> str:
        """The shell command a hook runs: the bare `planstate` (launch.py says why, and install refuses when it is not
        on PATH), which never fails the agent, even on a machine without planstate."""
        return f"planstate hooks run {event} --agent {self.name} || true"  # starts with PREFIX

    def entry(self, hook: Hook) -> dict[str, Any]:
        """The matcher group planstate adds under `hooks.<event>` for one hook."""
        handler: dict[str, Any] = {"type": "command", "command": self.command(hook.event), "timeout": self.timeout}
        for key, value in self.extra.items():
            handler[key] = value(hook.event) if callable(value) else value
        group: dict[str, Any] = {} if hook.matcher is None else {"matcher": hook.matcher}
        group["hooks"] = [handler]
        return group

    def roles(self, event: str) -> tuple[str, ...]:
        """What the hook of `event` does; nothing for an event planstate does not install."""
        for hook in self.hooks:
            if hook.event == event:
                return hook.roles
        return ()


def agent(name: str) -> Agent:
    """The agent called `name`; a UsageError with a suggestion for any other name."""
    if name not in NAMES:
        raise UsageError(f"unknown agent {name!r} (agents: {', '.join(NAMES)}){did_you_mean(name, NAMES)}")
    found: Agent = importlib.import_module(f"planstate.agents.{name}").AGENT
    return found


def context_output(event: str, context: str | None) -> str:
    """Context for the agent as Claude Code and Codex read it: `hookSpecificOutput.additionalContext` (one JSON
    document), or nothing at all when there is nothing to say."""
    if not context:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}) + "\n"
