"""Golden files for every built-in region template and for whole STATE.md files, compared byte for byte.

The regions are rendered from the realistic workspace of tests/realistic.py (phases with timing and
checkpoints, one failed; blockers, one bypassed with a workaround; decisions, one superseded;
sessions, one crashed), so the golden files also pin down how each context is built. After an
intended change, regenerate them and review their diff like any other change:

    PLANSTATE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_templates_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import realistic
from conftest import REPO

from planstate import regions
from planstate.render_context import Sources
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
    sources = Sources(workspace.state().to_data(), workspace, initiative)
    text = regions.render(name, sources.context(name))
    matches_golden(f"regions/{name}.md", text.encode("utf-8"))


def test_realistic_state_md_matches_its_golden_file(workspace: Workspace) -> None:
    matches_golden("STATE.md", workspace.state_path.read_bytes())
    assert workspace.check(stale_after=10**9).findings == []  # the realistic workspace has no drift


def test_new_state_md_matches_its_golden_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", "2026-11-20T09:00:00Z")
    ws = Workspace.init(tmp_path, title="User authentication", phases=["Design", "Build", "Ship"], actor="alice")
    matches_golden("STATE-new.md", ws.state_path.read_bytes())
