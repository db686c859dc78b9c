"""Claude Code: hooks in `.claude/settings.json` (or `~/.claude/settings.json`), timeouts in seconds.

SessionStart fires with `source` startup, resume, clear or compact (after a compaction) and reads
`hookSpecificOutput.additionalContext`; PreCompact marks the compaction so the next SessionStart briefs again;
Stop (the end of each turn) beats; SessionEnd ends the planstate session.
"""

from __future__ import annotations

from planstate.agents.spec import Agent, Hook, context_output

AGENT = Agent(
    name="claude",
    title="Claude Code",
    project_file=".claude/settings.json",
    global_file=".claude/settings.json",
    hooks=(
        Hook("SessionStart", ("start",), matcher=""),
        Hook("PreCompact", ("compact",), matcher=""),
        Hook("Stop", ("beat",)),
        Hook("SessionEnd", ("end",)),
    ),
    timeout=10,
    output=context_output,
    instructions=("CLAUDE.md", ".claude/CLAUDE.md"),
    other_files=(".claude/settings.local.json",),
)
