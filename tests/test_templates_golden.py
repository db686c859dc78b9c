"""Golden files for every built-in region template and for whole STATE.md files, compared byte for byte.

The regions are rendered from the realistic workspace of tests/realistic.py (phases with timing and
checkpoints, one failed; blockers, one bypassed with a workaround; decisions, one superseded;
sessions, one crashed), so the golden files also pin down how each context is built. After an
intended change, regenerate them and review their diff like any other change:

    PLANSTATE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_templates_golden.py
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
import realistic
from conftest import REPO

from planstate.render import regions
from planstate.render.sources import Sources
from planstate.workspace import Workspace

GOLDEN = REPO / "tests" / "golden"
UPDATE = os.environ.get("PLANSTATE_UPDATE_GOLDEN") == "1"


def matches_golden(name: str, data: bytes) -> None:
    """Compare `data` with the golden file `name` (or rewrite the golden file when PLANSTATE_UPDATE_GOLDEN=1)."""
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert path.is_file(), f"no golden file {path}; run with PLANSTATE_UPDATE_GOLDEN=1 to create it"
    expected = path.read_bytes()
    assert data.decode() == expected.decode()
    assert data == expected


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The realistic workspace, built once for this module."""
    return realistic.build(tmp_path_factory.mktemp("golden"))


def test_every_builtin_region_template_has_a_golden_file() -> None:
    templates = sorted(p.name.removesuffix(".md.j2") for p in (REPO / "templates" / "regions").glob("*.md.j2"))
    assert templates == sorted(regions.NAMES)
    assert sorted(p.stem for p in (GOLDEN / "regions").glob("*.md")) == templates


@pytest.mark.parametrize("name", regions.NAMES)
def test_region_template_matches_its_golden_file(workspace: Workspace, name: str) -> None:
    initiative = workspace.target
    sources = Sources(workspace.state().to_data(), workspace.ctx, initiative)
    text = regions.render(name, sources.context(name))
    matches_golden(f"regions/{name}.md", text.encode("utf-8"))


def test_realistic_state_md_matches_its_golden_file(workspace: Workspace) -> None:
    matches_golden("STATE.md", workspace.state_path.read_bytes())
    assert workspace.check(stale_after=10**9).findings == []  # the realistic workspace has no drift


def test_new_state_md_matches_its_golden_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", "2026-11-20T09:00:00Z")
    ws = Workspace.init(tmp_path, title="User authentication", phases=["Design", "Build", "Ship"], actor="alice")
    matches_golden("STATE-new.md", ws.state_path.read_bytes())


# ---------------------------------------------------------------------------- the resume brief and record bodies

BRIEF_NOW = datetime(2026, 11, 22, 16, 0, tzinfo=UTC)


def test_resume_brief_matches_its_golden_file(workspace: Workspace) -> None:
    """The brief for people (`resume.md.j2`) of the realistic workspace at a fixed time: a failed phase, an active
    phase with timing, blockers with a workaround, decisions with one superseded, a crashed and a resumed session."""
    from planstate.report.brief import brief
    from planstate.report.budget import render_text

    matches_golden("resume.md", render_text(workspace.ctx, brief(workspace.ctx, now=BRIEF_NOW)).encode("utf-8"))


RECORD_CONTEXTS: dict[str, dict[str, Any]] = {
    "decision": {
        "id": "dec-1b2kcc0sq7te",
        "title": "Refresh tokens in SQLite",
        "date": date(2026, 11, 22),
        "status": "accepted",
        "context": "Where refresh tokens live, now that there is no Redis in staging",
        "decision": "SQLite table `refresh_tokens` with an expiry column",
        "reason": "One less service to run; <10 writes a second",
        "alternatives": ["Redis with a TTL: rejected, no Redis in staging", "Postgres: rejected, not yet provisioned"],
        "reversible": False,
        "supersedes": "dec-1b2kaa00rd5s",
        "phase": 4,
        "by": "worker-ghi",
    },
    "blocker": {
        "id": "blk-1b2kd0qt0a01",
        "title": "Staging database quota",
        "status": "active",
        "description": "The staging database is at its storage quota; migrations fail with `disk full`",
        "identified": datetime(2026, 11, 22, 11, 0, tzinfo=UTC),
        "affects": ["Phase 5: Deploy", "dec-1b2kcc0sq7te"],
        "blocked_tasks": ["Run the migration on staging"],
        "by": "worker-ghi",
    },
    "session": {
        "id": "ses-1b2kf0000001",
        "agent": "worker-jkl",
        "started": datetime(2026, 11, 22, 15, 0, tzinfo=UTC),
        "working_on": "Phase 4, plan 2: token rotation endpoint",
        "resumed_from": "ses-1b2k9bb2e1db",
        "resumed_status": "crashed",
    },
}


@pytest.mark.parametrize("kind", list(RECORD_CONTEXTS))
def test_record_body_template_matches_its_golden_file(kind: str) -> None:
    from planstate.text import templates

    text = templates.render(f"{kind}.md.j2", RECORD_CONTEXTS[kind])
    matches_golden(f"records/{kind}.md", text.encode("utf-8"))
