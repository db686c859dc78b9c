"""Codex CLI: hooks in `.codex/hooks.json` (or `~/.codex/hooks.json`), timeouts in seconds, a strict output schema.

Codex's SessionStart sources are startup, resume and clear (no compact): PostCompact marks the compaction and the
next UserPromptSubmit briefs again. Stop (the end of each turn) and UserPromptSubmit beat. Codex has no session
end hook planstate relies on, so its planstate session stays active until `planstate session end` or a reap.
Codex runs a project's hooks only in a trusted project, and only after the person reviewed them in `/hooks`.
"""

from __future__ import annotations

from planstate.agents.spec import Agent, Hook, context_output

AGENT = Agent(
    name="codex",
    title="Codex CLI",
    project_file=".codex/hooks.json",
    global_file=".codex/hooks.json",
    hooks=(
        Hook("SessionStart", ("start",), matcher=""),
        Hook("PostCompact", ("compact",), matcher=""),
        Hook("UserPromptSubmit", ("beat", "reinject")),
        Hook("Stop", ("beat",)),
    ),
    timeout=10,
    output=context_output,
    instructions=("AGENTS.md", ".codex/AGENTS.md"),
)
