"""Two real git clones each record a decision and render STATE.md, then merge: the conflict git leaves in the
generated regions is one `planstate check --fix` resolves; conflicts outside the regions stay for people."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import Run, exits, json_data

from tests.gitutil import git

DAY = {"PLANSTATE_NOW": "2026-05-06T10:00:00Z"}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def clones(run: Run, tmp_path: Path) -> tuple[Path, Path]:
    """An origin with a fresh workspace, and two clones of it (merge pulls, fixed identities)."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT", cwd=origin, env=DAY))
    git(origin, "-c", "user.name=o", "-c", "user.email=o@example.com", "add", "-A")
    git(origin, "-c", "user.name=o", "-c", "user.email=o@example.com", "commit", "--quiet", "-m", "init")
    out = []
    for name in ("alice", "bob"):
        git(tmp_path, "clone", "--quiet", str(origin), name)
        clone = tmp_path / name
        for key, value in (("user.name", name), ("user.email", f"{name}@example.com"), ("pull.rebase", "false")):
            git(clone, "config", key, value)
        git(clone, "config", "commit.gpgsign", "false")
        out.append(clone)
    return out[0], out[1]


def decide(run: Run, clone: Path, title: str) -> None:
    """Record a decision, render STATE.md (as the pre-commit hook with --fix would) and commit both."""
    args = ("decision", "add", "--title", title, "--context", "c", "--decision", "d", "--reason", "r")
    exits(run(*args, cwd=clone, env=DAY))
    exits(run("render", cwd=clone, env=DAY))
    git(clone, "add", "-A")
    git(clone, "commit", "--quiet", "-m", title)


def test_a_merge_conflict_confined_to_regions_is_fixed_by_check_fix(run: Run, tmp_path: Path) -> None:
    alice, bob = clones(run, tmp_path)
    decide(run, alice, "Use jose")
    decide(run, bob, "Use Redis")
    merged = git(alice, "pull", "--quiet", str(bob), "main", check=False)
    assert merged.returncode != 0  # git could not merge STATE.md's generated regions by itself
    state = alice / ".planning" / "STATE.md"
    text = state.read_text()
    assert "<<<<<<<" in text and git(alice, "diff", "--name-only", "--diff-filter=U").stdout == ".planning/STATE.md\n"
    front = text.split("\n---\n", 1)[0]
    assert "<<<<<<<" not in front  # the front matter merged cleanly: the conflict is in the regions only

    data = json_data(exits(run("check", "--format", "json", cwd=alice, env=DAY), 1))
    assert [f["code"] for f in data["findings"]] == ["conflict-marker"]
    (finding,) = data["findings"]
    assert finding["fixable"] is True and finding["path"] == ".planning/STATE.md"
    assert "only inside generated regions" in finding["message"]

    fixed = json_data(exits(run("check", "--fix", "--format", "json", cwd=alice, env=DAY)))
    assert [f["code"] for f in fixed["fixed"]] == ["conflict-marker"] and fixed["findings"] == []
    text = state.read_text()
    assert "<<<<<<<" not in text and "=======" not in text and ">>>>>>>" not in text
    assert "Use jose" in text and "Use Redis" in text  # both clones' decisions, rendered from the merged records
    exits(run("check", cwd=alice, env=DAY))
    exits(run("validate", cwd=alice, env=DAY))
    git(alice, "add", "-A")
    git(alice, "commit", "--quiet", "-m", "merge")


def test_render_resolves_a_conflict_confined_to_regions_too(run: Run, tmp_path: Path) -> None:
    alice, bob = clones(run, tmp_path)
    decide(run, alice, "Use jose")
    decide(run, bob, "Use Redis")
    git(alice, "pull", "--quiet", str(bob), "main", check=False)
    result = exits(run("render", cwd=alice, env=DAY))
    assert "rendered decisions" in result.stdout
    exits(run("check", cwd=alice, env=DAY))


def test_a_conflict_that_reaches_outside_the_regions_stays_an_error(run: Run, tmp_path: Path) -> None:
    alice, bob = clones(run, tmp_path)
    for clone, title, note in ((alice, "Use jose", "Alice's note."), (bob, "Use Redis", "Bob's note.")):
        state = clone / ".planning" / "STATE.md"
        text = state.read_text()
        marker = "<!-- planstate:end decisions -->\n"
        state.write_text(text.replace(marker, marker + note + "\n", 1))  # text of a person's, just after a region
        decide(run, clone, title)
    git(alice, "pull", "--quiet", str(bob), "main", check=False)
    state = alice / ".planning" / "STATE.md"
    before = state.read_bytes()
    assert b"<<<<<<<" in before
    data = json_data(exits(run("check", "--fix", "--format", "json", cwd=alice, env=DAY), 1))
    conflicts = [f for f in data["findings"] if f["code"] == "conflict-marker"]
    assert conflicts and all(f["fixable"] is False for f in conflicts)
    assert data["fixed"] == [] and state.read_bytes() == before  # people's words are never resolved by a tool
    result = exits(run("render", cwd=alice, env=DAY), 1)
    assert "outside generated regions; resolve it by hand" in result.stderr
    assert state.read_bytes() == before
