"""The planstate block of an agent's instructions file (CLAUDE.md, AGENTS.md, GEMINI.md): which commands to use.

The block sits between `<!-- BEGIN PLANSTATE -->` and `<!-- END PLANSTATE -->` lines. A new block goes first in the
file, followed by one blank line, so removing it gives back the file's bytes; a block already there (moved or edited
by hand) is replaced where it stands.
"""

from __future__ import annotations

import re

BEGIN = "<!-- BEGIN PLANSTATE -->"
END = "<!-- END PLANSTATE -->"

BLOCK = f"""{BEGIN}
## Planning state (planstate)

This project keeps its plan in `.planning/`, managed with `planstate`; do not edit its files by hand.

- `planstate resume`: where the work is and what is next (your session starts with it).
- `planstate task start "…"`, `planstate task done`, `planstate phase complete N --checkpoint passed`: progress.
- `planstate decision add --context … --decision … --reason …`: record a decision.
- `planstate blocker add --description …`, `planstate blocker resolve ID --resolution …`: what is in the way.
- `planstate check`: after editing anything in `.planning/` by hand.
{END}
"""

_FOUND = re.compile(rf"^{re.escape(BEGIN)}[ \t]*\r?\n.*?^{re.escape(END)}[ \t]*(\r?\n|\Z)", re.MULTILINE | re.DOTALL)


def with_block(text: str) -> str:
    """`text` with planstate's block: replaced where it is, else first, before a blank line."""
    found = _FOUND.search(text)
    if found is not None:
        return text[: found.start()] + BLOCK + text[found.end() :]
    return BLOCK + ("\n" + text if text else "")


def without_block(text: str) -> str:
    """`text` without planstate's block (and the blank line an install put after it)."""
    found = _FOUND.search(text)
    if found is None:
        return text
    rest = text[found.end() :]
    if found.start() == 0 and rest.startswith("\n"):
        rest = rest[1:]
    return text[: found.start()] + rest
