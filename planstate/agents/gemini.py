"""Gemini CLI: hooks in `.gemini/settings.json` (or `~/.gemini/settings.json`), timeouts in milliseconds.

Gemini names its own events (BeforeAgent, not UserPromptSubmit) and reads stdout as JSON only, so every hook
prints one JSON document, `{}` when it has nothing to say. SessionStart briefs; PreCompress marks a compaction and
the next BeforeAgent briefs again (and beats); SessionEnd ends the planstate session.
"""

from __future__ import annotations

import json

from planstate.agents.spec import Agent, Hook


def output(event: str, context: str | None) -> str:
    """One JSON document: the context as `hookSpecificOutput.additionalContext`, or `{}`."""
    if not context:
        return "{}\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}) + "\n"


def _name(event: str) -> str:
    """The `name` Gemini shows for a hook in its logs and `/hooks` panel."""
    return f"planstate-{event}"


AGENT = Agent(
    name="gemini",
    title="Gemini CLI",
    project_file=".gemini/settings.json",
    global_file=".gemini/settings.json",
    hooks=(
        Hook("SessionStart", ("start",)),
        Hook("PreCompress", ("compact",)),
        Hook("BeforeAgent", ("beat", "reinject")),
        Hook("SessionEnd", ("end",)),
    ),
    timeout=10000,
    extra={"name": _name},
    output=output,
    instructions=("GEMINI.md", ".gemini/GEMINI.md"),
)
