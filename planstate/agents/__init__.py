"""Agent integration: hooks that brief every coding-agent session, per agent (Claude Code, Codex, Gemini, Cursor)."""
