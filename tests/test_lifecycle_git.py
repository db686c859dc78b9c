"""Two real git clones change the lifecycle on the same day: what merges by itself and what a person resolves.

docs/lifecycle.md (History) says: history.jsonl merges as a union, STATE.md's lifecycle lines conflict,
and after a hand resolution `planstate check` flags a history that ends elsewhere.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Run, exits

from tests.gitutil import configure, git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_two_clones_change_the_lifecycle_history_merges_state_conflicts(run: Run, tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    configure(origin, "origin")
    exits(
        run("init", "--title", "Auth", "--phase", "Schema", cwd=origin, env={"PLANSTATE_NOW": "2026-05-06T09:00:00Z"})
    )
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "planstate init")
    git(origin, "config", "receive.denyCurrentBranch", "updateInstead")
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    for clone in (alice, bob):
        git(tmp_path, "clone", "--quiet", str(origin), clone.name)
        configure(clone, clone.name)

    exits(run("pause", "--reason", "lunch", cwd=alice, env={"PLANSTATE_NOW": "2026-05-06T10:00:00Z"}))
    exits(run("suspend", "--reason", "restart", cwd=bob, env={"PLANSTATE_NOW": "2026-05-06T11:00:00Z"}))
    for clone in (alice, bob):
        git(clone, "commit", "--quiet", "-am", f"{clone.name}: lifecycle")
    git(alice, "push", "--quiet", "origin", "main")
    pulled = git(bob, "pull", "--no-edit", "origin", "main", check=False)
    assert pulled.returncode != 0  # the merge stops: STATE.md needs a person

    planning = bob / ".planning"
    unmerged = git(bob, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert unmerged == [".planning/STATE.md"]  # history.jsonl merged by itself
    history = (planning / "history.jsonl").read_text()
    assert "<<<<<<<" not in history and ">>>>>>>" not in history
    lines = [json.loads(line) for line in history.splitlines()]
    assert sorted((e["to"], e["reason"]) for e in lines) == [
        ("active", None),
        ("paused", "lunch"),
        ("suspended", "restart"),
    ]
    state = (planning / "STATE.md").read_text()
    assert "<<<<<<<" in state and "state: paused" in state and "state: suspended" in state
    assert run("validate", cwd=bob).returncode != 0  # nothing reads a file with conflict markers

    # The person decides the initiative is paused: alice's side of STATE.md.
    git(bob, "checkout", "--theirs", ".planning/STATE.md")
    git(bob, "add", ".planning/STATE.md")
    git(bob, "commit", "--quiet", "--no-edit")
    checked = run("check", cwd=bob)
    assert checked.returncode == 1
    assert "history-mismatch" in checked.stdout
    assert "the last transition leads to 'suspended' but lifecycle.state is 'paused'" in checked.stdout
    exits(run("check", "--fix", cwd=bob, env={"PLANSTATE_NOW": "2026-05-06T12:00:00Z"}))
    last = json.loads((planning / "history.jsonl").read_text().splitlines()[-1])
    assert (last["from"], last["to"], last["trigger"]) == ("suspended", "paused", "repair")
    exits(run("check", cwd=bob))
