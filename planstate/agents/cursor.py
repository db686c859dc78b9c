"""Cursor: no session hook to rely on, so a project rule, `.cursor/rules/planstate.mdc` (`alwaysApply: true`), that
tells the agent to run `planstate resume` first."""

from __future__ import annotations

from planstate.agents.spec import Agent

RULE = """\
---
description: planstate keeps this project's plan in .planning/; read it before working
alwaysApply: true
---
This project keeps its plan and progress in `.planning/` with planstate.

- Before anything else, run `planstate resume` and follow its next action.
- Record progress with `planstate task done`, decisions with `planstate decision add`, blockers with
  `planstate blocker add`; never edit the generated regions of `.planning/STATE.md` by hand.
- Start your work with `planstate session start --agent cursor` and end it with `planstate session end`.
"""

AGENT = Agent(name="cursor", title="Cursor", project_file=".cursor/rules/planstate.mdc", global_file=None)
