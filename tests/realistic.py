"""A realistic workspace for region, template and check tests: five phases with timing and checkpoints (one failed),
blockers (one bypassed with a workaround, one resolved), decisions (one superseded) and sessions (one crashed).

Records are written as files, the way a person or another clone would leave them; STATE.md goes
through the API. The clock is pinned, so everything is byte-for-byte reproducible.
"""

from __future__ import annotations

import os
from pathlib import Path

from planstate.text.paths import parse_path, set_in
from planstate.workspace import Workspace

NOW = "2026-11-22T16:00:00Z"

PHASES = {
    "phases.0.status": "completed",
    "phases.0.started": "2026-11-20T09:00:00Z",
    "phases.0.completed": "2026-11-20T11:30:00Z",
    "phases.0.checkpoint": "passed",
    "phases.0.evidence": {"migrations": 3, "tests": "18/18"},
    "phases.0.attempts": 1,
    "phases.1.status": "completed",
    "phases.1.started": "2026-11-21T09:00:00Z",
    "phases.1.completed": "2026-11-21T15:30:00Z",
    "phases.1.checkpoint": "passed",
    "phases.1.evidence": {"tests": "42/42", "coverage": "91%"},
    "phases.1.attempts": 2,
    "phases.2.status": "failed",
    "phases.2.started": "2026-11-22T09:00:00Z",
    "phases.2.checkpoint": "failed",
    "phases.2.evidence": {"tests": "7/12"},
    "phases.2.failure": "The provider rejects our redirect URI | needs a registered domain",
    "phases.2.attempts": 1,
    "phases.3.status": "active",
    "phases.3.started": "2026-11-22T14:00:00Z",
    "phases.3.attempts": 1,
    "position.phase": 4,
    "position.plan": 2,
    "position.plan_name": "Rotation",
    "position.task": "Implement token rotation endpoint",
    "position.status": "in_progress",
    "position.wave": 1,
    "progress.current_phase_tasks": 8,
    "progress.current_phase_completed": 5,
    "next_action": "Finish the rotation endpoint.\nThen rerun phase 3's checkpoint with the staging domain.",
    "resume_context.files_modified": ["src/api/auth/refresh.ts", "db/migrations/002_refresh_tokens.sql"],
    "resume_context.key_implementations": [
        "Refresh tokens stored in SQLite with expiry",
        "Rotation creates a new token and invalidates the old one",
    ],
    "resume_context.open_questions": ["Do we need token family tracking for reuse detection?"],
}

RECORDS = {
    "decisions/dec-1b2k9qx7m4fa-use-jose-for-jwt.md": """---
schema_version: 1
id: dec-1b2k9qx7m4fa
title: Use jose for JWT
date: 2026-11-21
status: accepted
context: JWT library for signing and verifying access tokens
decision: jose over jsonwebtoken
reason: Better TypeScript support; it uses the Web Crypto API
alternatives:
  - "jsonwebtoken: rejected, no Web Crypto support"
reversible: true
supersedes: null
superseded_by: null
phase: 2
by: worker-abc
---
Benchmarked both on 10,000 tokens.
""",
    "decisions/dec-1b2kaa00rd5s-refresh-tokens-in-redis.md": """---
schema_version: 1
id: dec-1b2kaa00rd5s
title: Refresh tokens in Redis
date: 2026-11-21
status: superseded
context: Where refresh tokens live
decision: Redis with a TTL
reason: Expiry for free
reversible: true
supersedes: null
superseded_by: dec-1b2kcc0sq7te
phase: 2
by: worker-abc
---
""",
    "decisions/dec-1b2kcc0sq7te-refresh-tokens-in-sqlite.md": """---
schema_version: 1
id: dec-1b2kcc0sq7te
title: Refresh tokens in SQLite
date: 2026-11-22
status: accepted
context: Where refresh tokens live, now that there is no Redis in staging
decision: "SQLite table `refresh_tokens` with an expiry column"
reason: One less service to run; <10 writes a second
reversible: false
supersedes: dec-1b2kaa00rd5s
superseded_by: null
phase: 4
by: worker-ghi
---
""",
    "blockers/block-001-oauth-credentials.md": """---
schema_version: 1
id: block-001
title: OAuth credentials
status: bypassed
description: Waiting for OAuth client credentials from the customer
identified: 2026-11-21T10:00:00Z
affects:
  - "phase:3"
blocked_tasks:
  - Configure the OAuth provider
workaround: Proceeding with email and password sign-in first
resolution: null
resolved: null
by: alice
---
""",
    "blockers/blk-1b2kd0qt0a01-staging-database-quota.md": """---
schema_version: 1
id: blk-1b2kd0qt0a01
title: Staging database quota
status: active
description: The staging database is at its storage quota
identified: 2026-11-22T11:00:00Z
affects:
  - "Phase 5: Deploy"
blocked_tasks: []
workaround: null
resolution: null
resolved: null
by: worker-ghi
---
""",
    "blockers/blk-1b2k80c100d0-ci-runner-down.md": """---
schema_version: 1
id: blk-1b2k80c100d0
title: CI runner down
status: resolved
description: The CI runner was offline
identified: 2026-11-20T10:00:00Z
affects: []
workaround: null
resolution: Restarted by the platform team
resolved: 2026-11-20T12:00:00Z
by: alice
---
""",
    "sessions/ses-1b2k7aa1f0ca-worker-abc.md": """---
schema_version: 1
id: ses-1b2k7aa1f0ca
agent: worker-abc
status: ended
started: 2026-11-20T09:00:00Z
ended: 2026-11-20T17:00:00Z
working_on: Phase 1
completed:
  - "Phase 1: database schema"
issues: []
handoff_reason: null
notes: Clean execution
context_usage: 45%
resumed_from: null
---
""",
    "sessions/ses-1b2k9bb2e1db-worker-def.md": """---
schema_version: 1
id: ses-1b2k9bb2e1db
agent: worker-def
status: crashed
started: 2026-11-21T13:00:00Z
ended: 2026-11-21T16:10:00Z
working_on: Phase 2, plan 3
completed:
  - "Phase 2, plan 2: access token issuing"
  - "Phase 2, plan 3: half of refresh"
issues:
  - Context exceeded 50%
handoff_reason: Agent unresponsive, task reset
notes: null
context_usage: 62%
resumed_from: ses-1b2k7aa1f0ca
---
""",
    "sessions/ses-1b2kcc3d9eaa-worker-ghi.md": """---
schema_version: 1
id: ses-1b2kcc3d9eaa
agent: worker-ghi
status: active
started: 2026-11-22T08:00:00Z
ended: null
working_on: "Phase 4: token rotation"
completed: []
issues: []
handoff_reason: null
notes: Resuming from the crash of ses-1b2k9bb2e1db
context_usage: null
resumed_from: ses-1b2k9bb2e1db
---
""",
}


def build(folder: Path) -> Workspace:
    """Create the realistic workspace in `folder` (a project folder) and return it, regions rendered."""
    saved = os.environ.get("PLANSTATE_NOW")
    os.environ["PLANSTATE_NOW"] = "2026-11-20T09:00:00Z"
    try:
        ws = Workspace.init(
            folder,
            title="User authentication",
            phases=["Database schema", "JWT implementation", "OAuth integration", "Token refresh", "Deploy"],
            actor="alice",
        )
        for name, text in RECORDS.items():
            (ws.root / name).write_text(text, encoding="utf-8")
        for path in ("src/api/auth/refresh.ts", "db/migrations/002_refresh_tokens.sql"):
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text("// code\n", encoding="utf-8")
        os.environ["PLANSTATE_NOW"] = NOW
        with ws.edit() as state:  # what another tool or a person left: phase fields `set` refuses to touch
            data = state.to_data()
            for path, value in PHASES.items():
                set_in(data, parse_path(path), value)
        ws.render()
    finally:
        if saved is None:
            os.environ.pop("PLANSTATE_NOW", None)
        else:
            os.environ["PLANSTATE_NOW"] = saved
    return ws
